// SPDX-License-Identifier: MIT
/*
 * oms_tx_doorbell() on a mapped window: the WQE, the doorbell record and
 * the doorbell (or the BlueFlame copy) land where they were asked, with
 * the three fences of the driver's sequence; an observer thread that sees
 * the doorbell sees the record, the WQE and the queue's earlier message;
 * every bad request is refused with its errno and changes no byte and no
 * count.  The ioctl window's post (the module's OMS_IOC_DOORBELL) runs in
 * the guest: tests/tx-guest.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "oms_tx.h"

#define WIN_LEN		(64u << 10)
#define RING_LEN	(32u << 10)	/* the queue's ring: [0, 32 KiB) */
#define WQE_OFF		0xc000u
#define DBREC_OFF	0xc800u
#define DB_OFF		0xc808u
#define BF_OFF		0xd000u

struct rig {
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	uint8_t *base;
	uint8_t wqe[256];
};

static void rig_open(struct __test_metadata *_metadata, struct rig *r)
{
	struct oms_tx_queue_attr qa = {
		.cls = OMS_TX_WEAK, .length = RING_LEN,
	};

	ASSERT_EQ(0, oms_tx_window_mem(WIN_LEN, &r->w));
	ASSERT_EQ(0, oms_tx_queue_create(r->w, &qa, &r->q));
	r->base = oms_tx_window_base(r->w);
	for (unsigned i = 0; i < sizeof(r->wqe); i++)
		r->wqe[i] = (uint8_t)(0x5a ^ (i * 29));
}

static void rig_close(struct rig *r)
{
	oms_tx_queue_destroy(r->q);
	oms_tx_window_close(r->w);
}

static uint64_t fences(const struct rig *r)
{
	struct oms_tx_stats st;

	return oms_tx_stats(r->q, &st) ? UINT64_MAX : st.fences;
}

static int all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

TEST(plain_post_lands_with_three_fences)
{
	struct rig r;
	struct oms_tx_doorbell d = {
		.wqe_len = 128, .wqe_offset = WQE_OFF,
		.dbrec_offset = DBREC_OFF, .dbrec = 0x1234,
		.db_offset = DB_OFF, .db = 0xfeedface00000007ull,
	};
	uint64_t f0;
	uint32_t rec;
	uint64_t db;

	rig_open(_metadata, &r);
	d.wqe = r.wqe;
	f0 = fences(&r);
	EXPECT_EQ(3, oms_tx_doorbell(r.q, &d));
	EXPECT_EQ(f0 + 3, fences(&r));
	EXPECT_EQ(0, memcmp(r.base + WQE_OFF, r.wqe, 128));
	memcpy(&rec, r.base + DBREC_OFF, 4);
	memcpy(&db, r.base + DB_OFF, 8);
	EXPECT_EQ(0x1234u, rec);
	EXPECT_EQ(0xfeedface00000007ull, db);
	/* nothing else moved: the ring, and the bytes between the parts */
	EXPECT_TRUE(all_zero(r.base, WQE_OFF));
	EXPECT_TRUE(all_zero(r.base + WQE_OFF + 128, DBREC_OFF - WQE_OFF - 128));
	EXPECT_TRUE(all_zero(r.base + DB_OFF + 8, WIN_LEN - DB_OFF - 8));
	rig_close(&r);
}

TEST(blueflame_post_copies_the_wqe_to_the_register)
{
	struct rig r;
	struct oms_tx_doorbell d = {
		.wqe_len = 192, .flags = OMS_TX_DB_BLUEFLAME,
		.wqe_offset = WQE_OFF, .dbrec_offset = DBREC_OFF,
		.dbrec = 0x77, .db_offset = BF_OFF,
	};
	uint32_t rec;

	rig_open(_metadata, &r);
	d.wqe = r.wqe;
	EXPECT_EQ(3, oms_tx_doorbell(r.q, &d));
	EXPECT_EQ(0, memcmp(r.base + WQE_OFF, r.wqe, 192));
	EXPECT_EQ(0, memcmp(r.base + BF_OFF, r.wqe, 192));
	memcpy(&rec, r.base + DBREC_OFF, 4);
	EXPECT_EQ(0x77u, rec);
	EXPECT_TRUE(all_zero(r.base + BF_OFF + 192, WIN_LEN - BF_OFF - 192));
	rig_close(&r);
}

/* An observer on the other core: once it sees post n's doorbell it must
 * see post n's record and WQE and the message sent before post n.  The
 * WQE's tag is its last 8 of 2 KiB bytes, so a post that stored the
 * doorbell before the WQE leaves the observer a window to catch it. */
#define OBS_WQE		2048u
struct observer {
	const uint8_t *base;
	uint32_t done;		/* the producer stopped */
	uint32_t seen;		/* doorbells observed (changes of value) */
	uint32_t bad;
};

#define OBS_WANT	4000u		/* observations to make */
#define OBS_MAX_POSTS	4000000u	/* bound, whatever the scheduler does */

static void *observe(void *arg)
{
	struct observer *o = arg;
	uint64_t last = 0;

	while (!__atomic_load_n(&o->done, __ATOMIC_ACQUIRE)) {
		uint64_t db = __atomic_load_n((const uint64_t *)(o->base + DB_OFF),
					      __ATOMIC_ACQUIRE);
		uint32_t rec;
		uint64_t wqe_tag, msg_tag;

		if (db == last)
			continue;
		rec = __atomic_load_n((const uint32_t *)(o->base + DBREC_OFF),
				      __ATOMIC_ACQUIRE);
		memcpy(&wqe_tag, o->base + WQE_OFF + OBS_WQE - 8, 8);
		/* the weak queue's slot for message n-1 holds tag n or later */
		memcpy(&msg_tag, o->base + ((db - 1) % 64) * 512 + 8, 8);
		if (rec < (uint32_t)db || wqe_tag < db || msg_tag < db)
			o->bad++;
		last = db;
		__atomic_add_fetch(&o->seen, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

TEST(an_observer_that_sees_the_doorbell_sees_what_came_before)
{
	struct observer o = { 0 };
	struct oms_tx_queue_attr qa = {
		.cls = OMS_TX_WEAK, .length = RING_LEN, .max_msg = 512,
		.flags = OMS_TX_Q_NO_CREDIT,
	};
	static uint64_t wqe[OBS_WQE / 8];
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	uint8_t msg[64] = { 0 };
	uint64_t tag;
	pthread_t th;

	ASSERT_EQ(0, oms_tx_window_mem(WIN_LEN, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(512u, oms_tx_slot_chunks(q) * OMS_TX_CHUNK);
	o.base = oms_tx_window_base(w);
	ASSERT_EQ(0, pthread_create(&th, NULL, observe, &o));
	/* post until the observer has looked often enough.  On a loaded
	 * machine it may not run beside the producer: every 16 posts the
	 * producer yields until the observer has seen one more, so the next
	 * 16 run while it is awake */
	for (tag = 1; tag <= OBS_MAX_POSTS &&
	     __atomic_load_n(&o.seen, __ATOMIC_ACQUIRE) < OBS_WANT; tag++) {
		if (tag % 16 == 0) {
			uint32_t s0 = __atomic_load_n(&o.seen, __ATOMIC_ACQUIRE);

			for (unsigned y = 0; y < 100000 &&
			     __atomic_load_n(&o.seen, __ATOMIC_ACQUIRE) == s0; y++)
				sched_yield();
		}
		struct oms_tx_doorbell d = {
			.wqe = wqe, .wqe_len = OBS_WQE, .wqe_offset = WQE_OFF,
			.dbrec_offset = DBREC_OFF, .dbrec = (uint32_t)tag,
			.db_offset = DB_OFF, .db = tag,
		};

		/* message tag-1 goes to slot (tag-1) % 64; its first 8 payload
		 * bytes follow the 8-byte plain header */
		memcpy(msg, &tag, 8);
		wqe[OBS_WQE / 8 - 1] = tag;
		ASSERT_EQ(0, oms_tx_send(q, msg, sizeof(msg)));
		ASSERT_EQ(3, oms_tx_doorbell(q, &d));
	}
	__atomic_store_n(&o.done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	TH_LOG("%llu posts, %u observed", (unsigned long long)tag - 1, o.seen);
	EXPECT_LE(OBS_WANT, o.seen);
	EXPECT_EQ(0u, o.bad);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

struct bad_case {
	const char *what;
	int want;
	void (*spoil)(struct oms_tx_doorbell *d);
};

static void bad_flags(struct oms_tx_doorbell *d) { d->flags = 1u << 7; }
static void bad_reserved(struct oms_tx_doorbell *d) { d->reserved = 1; }
static void bad_wqe_null(struct oms_tx_doorbell *d) { d->wqe = NULL; }
static void bad_len0(struct oms_tx_doorbell *d) { d->wqe_len = 0; }
static void bad_len_align(struct oms_tx_doorbell *d) { d->wqe_len = 60; }
static void bad_wqe_align(struct oms_tx_doorbell *d) { d->wqe_offset += 4; }
static void bad_dbrec_align(struct oms_tx_doorbell *d) { d->dbrec_offset += 2; }
static void bad_db_align(struct oms_tx_doorbell *d) { d->db_offset += 4; }
static void bad_bf_len(struct oms_tx_doorbell *d)
{
	d->flags = OMS_TX_DB_BLUEFLAME;
	d->db = 0;
	d->db_offset = BF_OFF;
	d->wqe_len = 72;
}
static void bad_bf_big(struct oms_tx_doorbell *d)
{
	bad_bf_len(d);
	d->wqe_len = 320;
}
static void bad_bf_db(struct oms_tx_doorbell *d)
{
	bad_bf_len(d);
	d->wqe_len = 64;
	d->db = 1;
}
static void bad_wqe_out(struct oms_tx_doorbell *d) { d->wqe_offset = WIN_LEN - 56; }
static void bad_wqe_wrap(struct oms_tx_doorbell *d) { d->wqe_offset = UINT64_MAX - 7; }
static void bad_dbrec_out(struct oms_tx_doorbell *d) { d->dbrec_offset = WIN_LEN; }
static void bad_db_out(struct oms_tx_doorbell *d) { d->db_offset = WIN_LEN; }
static void bad_wqe_ring(struct oms_tx_doorbell *d) { d->wqe_offset = RING_LEN - 64; }
static void bad_dbrec_ring(struct oms_tx_doorbell *d) { d->dbrec_offset = 0; }
static void bad_db_ring(struct oms_tx_doorbell *d) { d->db_offset = 4096; }

static const struct bad_case bad_cases[] = {
	{ "unknown flag", -EINVAL, bad_flags },
	{ "reserved set", -EINVAL, bad_reserved },
	{ "no WQE", -EINVAL, bad_wqe_null },
	{ "length 0", -EINVAL, bad_len0 },
	{ "length not a multiple of 8", -EINVAL, bad_len_align },
	{ "WQE offset not 8-aligned", -EINVAL, bad_wqe_align },
	{ "record offset not 4-aligned", -EINVAL, bad_dbrec_align },
	{ "doorbell offset not 8-aligned", -EINVAL, bad_db_align },
	{ "BlueFlame length not a multiple of 64", -EINVAL, bad_bf_len },
	{ "BlueFlame length above 256", -EINVAL, bad_bf_big },
	{ "BlueFlame with a doorbell value", -EINVAL, bad_bf_db },
	{ "WQE past the window", -ERANGE, bad_wqe_out },
	{ "WQE offset + length overflows", -ERANGE, bad_wqe_wrap },
	{ "record past the window", -ERANGE, bad_dbrec_out },
	{ "doorbell past the window", -ERANGE, bad_db_out },
	{ "WQE on the queue's ring", -EINVAL, bad_wqe_ring },
	{ "record on the queue's ring", -EINVAL, bad_dbrec_ring },
	{ "doorbell on the queue's ring", -EINVAL, bad_db_ring },
};

TEST(bad_requests_are_refused_and_change_nothing)
{
	uint8_t *snap = malloc(WIN_LEN);
	struct rig r;
	uint64_t f0;

	ASSERT_NE(NULL, snap);
	rig_open(_metadata, &r);
	/* a message on the ring, so "nothing changed" covers it too */
	ASSERT_EQ(0, oms_tx_send(r.q, r.wqe, 100));
	oms_tx_flush(r.q);
	memcpy(snap, r.base, WIN_LEN);
	f0 = fences(&r);
	EXPECT_EQ(-EINVAL, oms_tx_doorbell(NULL, NULL));
	EXPECT_EQ(-EINVAL, oms_tx_doorbell(r.q, NULL));
	for (unsigned i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct oms_tx_doorbell d = {
			.wqe = r.wqe, .wqe_len = 64, .wqe_offset = WQE_OFF,
			.dbrec_offset = DBREC_OFF, .dbrec = 9,
			.db_offset = DB_OFF, .db = 9,
		};

		bad_cases[i].spoil(&d);
		EXPECT_EQ(bad_cases[i].want, oms_tx_doorbell(r.q, &d)) {
			TH_LOG("%s", bad_cases[i].what);
		}
		EXPECT_EQ(0, memcmp(snap, r.base, WIN_LEN)) {
			TH_LOG("%s: the window changed", bad_cases[i].what);
		}
		EXPECT_EQ(f0, fences(&r)) {
			TH_LOG("%s: a fence was counted", bad_cases[i].what);
		}
	}
	/* the control: the same request unspoiled is taken */
	{
		struct oms_tx_doorbell d = {
			.wqe = r.wqe, .wqe_len = 64, .wqe_offset = WQE_OFF,
			.dbrec_offset = DBREC_OFF, .dbrec = 9,
			.db_offset = DB_OFF, .db = 9,
		};

		EXPECT_EQ(3, oms_tx_doorbell(r.q, &d));
		EXPECT_NE(0, memcmp(snap, r.base, WIN_LEN));
	}
	rig_close(&r);
	free(snap);
}

TEST_HARNESS_MAIN
