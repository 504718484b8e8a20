// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the destination agent's core (lib/agent/agent.c):
 * a requester that sends anything - torn bytes, sealed forgeries, well
 * formed descriptors with numbers out of order, duplicates, keys of
 * revoked regions - interleaved with polls, resumes, posted writes and
 * their acks, and connections closed under it.
 *
 * Input: byte 0 = agent mode (bit 0: OMS_AGENT_F_NO_ORDER, bit 1: global
 * hold, bit 2: chaos), byte 1 = the window (1..16); then commands, one
 * byte each followed by its operands (see below).
 *
 * Invariants (abort on violation):
 *   - nothing is lost or duplicated: once every stream is resumed and
 *     every posted write acknowledged, each open connection has had
 *     exactly one completion per descriptor it took;
 *   - a read-only region is never written, and the agent writes no byte
 *     outside the regions (ASan: each region is its own allocation);
 *   - a torn or malformed descriptor completes with -EPROTO and tag 0;
 *   - class-2 answers to gets without a number come in the order the
 *     gets were submitted (the hold keeps them, never reorders them);
 *   - with ordering, the members of a stream that succeed (answered at
 *     once) do so in number order, each later than the one before, and
 *     none at or after the number of a member that completed with an
 *     error (refused, cancelled, failed when performed) until the stream
 *     is resumed (L37).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oms.h"
#include "agent/agent.h"
#include "agent_seal.h"

#define check(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "agent_loop: line %d: %s\n", __LINE__, \
			#cond); \
		abort(); \
	} \
} while (0)

#define RW_LEN		4096u
#define RO_LEN		1024u
#define SLOTS		4u
#define SLOT_LEN	256u
#define STREAMS		2u
#define CONNS		2u
#define PEERS		2u
#define LBASE		0x10000ull
#define LAND_LEN	8192u
#define MAX_TAGS	4096u
#define TAG_MARK	0x80000000u	/* structured: flags known by tag */

struct fz {
	struct oms_agent *ag;
	uint8_t *rw, *ro;
	uint8_t land[LAND_LEN];
	uint8_t stage[CONNS][SLOTS * SLOT_LEN];
	int open[CONNS];
	uint32_t id[CONNS];
	uint64_t taken[CONNS], done[CONNS];
	int have_last[CONNS][STREAMS];
	uint16_t last[CONNS][STREAMS];
	int have_refused[CONNS][STREAMS];
	uint16_t refused[CONNS][STREAMS];
	int have_c2[CONNS];
	uint32_t last_c2[CONNS];
	uint8_t flags_of[MAX_TAGS];
	uint32_t ntags;
	uint32_t posted[PEERS][64];
	uint32_t nposted[PEERS];
	int ordered, rw_served, resuming;
	uint16_t window;
};

static int fz_land(void *arg, uint32_t conn, uint64_t laddr, uint32_t lrkey,
		   const void *src, uint32_t len)
{
	struct fz *f = arg;

	(void)conn;
	if (lrkey != 0x77 || laddr < LBASE || laddr - LBASE > LAND_LEN ||
	    len > LAND_LEN - (laddr - LBASE))
		return -EACCES;
	memcpy(f->land + (laddr - LBASE), src, len);
	return 0;
}

static int conn_slot(struct fz *f, uint32_t id)
{
	for (unsigned i = 0; i < CONNS; i++)
		if (f->open[i] && f->id[i] == id)
			return (int)i;
	return -1;
}

static void take(struct fz *f, const struct oms_agent_cpl *c)
{
	int i = conn_slot(f, c->conn);
	uint8_t fl;
	uint16_t ahead;

	check(i >= 0);
	f->done[i]++;
	check(f->done[i] <= f->taken[i]);
	if (c->status == -EPROTO)
		check(c->tag == 0 && c->op == 0);
	if (!f->ordered || f->resuming || !(c->tag & TAG_MARK) ||
	    (c->tag & ~TAG_MARK) >= f->ntags || c->stream >= STREAMS)
		return;
	fl = f->flags_of[c->tag & ~TAG_MARK];
	/* class-2 answers leave in the order they were handed in: for gets
	 * without a number, the order they were submitted (L23) */
	if (!(fl & OMS_AD_F_SEQ) && (fl & OMS_AD_F_RESP_ORDERED) &&
	    c->status == 0) {
		uint32_t t = c->tag & ~TAG_MARK;

		check(!f->have_c2[i] || t > f->last_c2[i]);
		f->have_c2[i] = 1;
		f->last_c2[i] = t;
	}
	/* a resume in the ring: the stream starts a new run there */
	if ((fl & OMS_AD_F_RESUME) && c->status == 0) {
		f->have_last[i][c->stream] = 0;
		f->have_refused[i][c->stream] = 0;
		return;
	}
	/* answers of held gets come late: not in number order */
	if (!(fl & OMS_AD_F_SEQ) || (fl & OMS_AD_F_RESP_ORDERED))
		return;
	if (c->status == 0) {
		/* later than the success before it (raw members and failed
		 * ones in between are not seen here) ... */
		if (f->have_last[i][c->stream]) {
			ahead = (uint16_t)(c->seq - f->last[i][c->stream]);
			check(ahead >= 1 && ahead < 0x8000u);
		}
		f->have_last[i][c->stream] = 1;
		f->last[i][c->stream] = c->seq;
		/* ... and never at or after a refused number (L37) */
		if (f->have_refused[i][c->stream]) {
			ahead = (uint16_t)(c->seq - f->refused[i][c->stream]);
			check(ahead >= 0x8000u);
		}
		return;
	}
	/* any error of a member answered at once - refused, cancelled,
	 * failed when performed - means the stream stopped at or before
	 * its number */
	if (!f->have_refused[i][c->stream] ||
	    (uint16_t)(f->refused[i][c->stream] - c->seq) - 1u < 0x7fffu)
		f->refused[i][c->stream] = c->seq;
	f->have_refused[i][c->stream] = 1;
}

static void take_cpls(struct fz *f)
{
	struct oms_agent_cpl c[64];
	int n;

	while ((n = oms_agent_poll(f->ag, c, 64)) > 0)
		for (int k = 0; k < n; k++)
			take(f, &c[k]);
	check(n == 0);
}

static void open_conn(struct fz *f, unsigned i)
{
	struct oms_agent_conn_attr a = {
		.nstreams = STREAMS, .window = f->window, .peer = i % PEERS,
		.stage_slots = SLOTS, .stage_len = SLOT_LEN,
		.stage = f->stage[i],
	};

	check(oms_agent_conn_open(f->ag, &a, &f->id[i]) == 0);
	f->open[i] = 1;
	f->taken[i] = f->done[i] = 0;
	memset(f->have_last[i], 0, sizeof(f->have_last[i]));
	memset(f->have_refused[i], 0, sizeof(f->have_refused[i]));
	f->have_c2[i] = 0;
}

static void submit(struct fz *f, unsigned i, const uint8_t *b)
{
	int r = oms_agent_submit(f->ag, f->id[i], b);

	if (r == -EAGAIN) {
		take_cpls(f);
		r = oms_agent_submit(f->ag, f->id[i], b);
	}
	check(r == 0);
	f->taken[i]++;
}

static uint8_t byte(const uint8_t **p, const uint8_t *end)
{
	return *p < end ? *(*p)++ : 0;
}

/* A well formed descriptor from a few bytes; numbers near the stream's
 * next, so that gaps, duplicates and stale ones are all common. */
static void structured(struct fz *f, unsigned i, const uint8_t **p,
		       const uint8_t *end)
{
	static const uint8_t ops[] = { OMS_AD_PUT, OMS_AD_GET, OMS_AD_FADD,
				       OMS_AD_CAS, OMS_AD_NOP };
	uint8_t b0 = byte(p, end), b1 = byte(p, end), b2 = byte(p, end);
	uint8_t b3 = byte(p, end), b4 = byte(p, end);
	struct oms_ad_desc d = { 0 };
	uint8_t out[OMS_AD_LEN];
	int next, delta;

	d.op = ops[b0 % 5];
	d.stream = (uint16_t)((b0 >> 3) % (STREAMS + 1));
	next = oms_agent_next_seq(f->ag, f->id[i], d.stream < STREAMS ?
				  d.stream : 0);
	check(next >= 0);
	d.flags = (b1 & 1) ? OMS_AD_F_SEQ : 0;
	/* half of them just behind, at or inside the window; half anywhere
	 * within 128 of the stream's next */
	delta = (b2 & 0x80) ? (int8_t)b2 : (int)(b2 % (f->window + 2u)) - 1;
	d.seq = (d.flags & OMS_AD_F_SEQ) ? (uint16_t)(next + delta) : 0;
	d.key = (b1 & 6) == 0 ? 0x22 : (b1 & 6) == 2 ? 0x99 : 0x11;
	d.off = (uint64_t)b3 * 16;
	d.len = 1 + b4;
	switch (d.op) {
	case OMS_AD_PUT:
		d.stage = (b1 >> 3) % (SLOTS + 1);
		if (b1 & 0x80)
			d.flags |= OMS_AD_F_RELEASE;
		break;
	case OMS_AD_GET:
		d.flags |= (uint8_t)((b1 >> 3) & 0x6);
		break;
	case OMS_AD_FADD:
	case OMS_AD_CAS:
		d.len = 8;
		d.off &= ~7ull;
		d.a1 = b2;
		d.a2 = d.op == OMS_AD_CAS ? b4 : 0;
		break;
	case OMS_AD_NOP:
		d.flags = OMS_AD_F_SEQ | ((b1 & 0x40) ? OMS_AD_F_CANCEL :
					  (b1 & 0x20) ? OMS_AD_F_RESUME : 0);
		d.seq = (uint16_t)(next + delta);
		d.key = 0;
		d.off = 0;
		d.len = 0;
		break;
	}
	if (d.op == OMS_AD_GET || d.op == OMS_AD_FADD || d.op == OMS_AD_CAS) {
		d.lrkey = (b4 & 0x80) ? 0x78 : 0x77;
		d.laddr = LBASE + (uint64_t)(b3 % 32) * 64;
	}
	if (f->ntags < MAX_TAGS) {
		d.tag = TAG_MARK | f->ntags;
		f->flags_of[f->ntags++] = d.flags;
	}
	if (oms_ad_encode(out, &d, OMS_AD_FMT_CRC32C))
		return;
	submit(f, i, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	const uint8_t *p = data, *end = data + size;
	struct oms_agent_attr a = { 0 };
	struct oms_agent_ops ops = { .land = fz_land, .arg = &f };
	uint8_t ro_copy[RO_LEN];
	uint8_t mode = byte(&p, end);

	memset(&f, 0, sizeof(f));
	f.window = (uint16_t)(1u << (byte(&p, end) % 5));
	a.flags = (mode & 1 ? OMS_AGENT_F_NO_ORDER : 0) |
		  (mode & 2 ? OMS_AGENT_F_HOLD_GLOBAL : 0);
	a.chaos_seed = mode & 4 ? 7 : 0;
	a.max_cpl = 1024;
	a.max_held = 16;
	f.ordered = !(mode & 1);
	f.rw = aligned_alloc(64, RW_LEN);
	f.ro = aligned_alloc(64, RO_LEN);
	check(f.rw && f.ro);
	memset(f.rw, 0, RW_LEN);
	for (unsigned k = 0; k < RO_LEN; k++)
		f.ro[k] = (uint8_t)k;
	memcpy(ro_copy, f.ro, RO_LEN);
	check(oms_agent_create(&a, &ops, &f.ag) == 0);
	check(oms_agent_region_add(f.ag, f.rw, RW_LEN, 0x11,
				   OMS_ACCESS_ALL) == 0);
	check(oms_agent_region_add(f.ag, f.ro, RO_LEN, 0x22,
				   OMS_ACCESS_REMOTE_READ) == 0);
	f.rw_served = 1;
	for (unsigned i = 0; i < CONNS; i++)
		open_conn(&f, i);

	while (p < end) {
		uint8_t cmd = byte(&p, end), arg = byte(&p, end);
		unsigned i = arg % CONNS, peer = arg % PEERS;
		uint8_t b[OMS_AD_LEN];

		switch (cmd % 10) {
		case 0:		/* raw bytes */
		case 1:		/* sealed bytes: past the check */
			memset(b, 0, sizeof(b));
			for (unsigned k = 0; k < OMS_AD_LEN && p < end; k++)
				b[k] = *p++;
			if (cmd % 10 == 1)
				t_ad_seal(b);
			submit(&f, i, b);
			break;
		case 2:
		case 3:
		case 4:
			structured(&f, i, &p, end);
			break;
		case 5:
			take_cpls(&f);
			break;
		case 6:		/* the requester resumes a stream */
			/* what came before is judged before the resume; what
			 * the resume cancels is not a refusal */
			take_cpls(&f);
			check(oms_agent_resume(f.ag, f.id[i], arg % STREAMS,
					       (uint16_t)(arg >> 1)) == 0);
			f.resuming = 1;
			take_cpls(&f);
			f.resuming = 0;
			f.have_last[i][arg % STREAMS] = 0;
			f.have_refused[i][arg % STREAMS] = 0;
			break;
		case 7:		/* the owner posts a write, or it is acked */
			if ((arg & 0x80) && f.nposted[peer]) {
				uint32_t k = (arg >> 2) % f.nposted[peer];

				check(oms_agent_posted_ack(f.ag, peer,
						f.posted[peer][k]) == 0);
				f.posted[peer][k] =
					f.posted[peer][--f.nposted[peer]];
			} else if (f.nposted[peer] < 64) {
				check(oms_agent_posted(f.ag, peer,
					&f.posted[peer][f.nposted[peer]]) == 0);
				f.nposted[peer]++;
			}
			break;
		case 8:		/* the requester dies; another connects */
			take_cpls(&f);
			check(oms_agent_conn_close(f.ag, f.id[i]) == 0);
			f.open[i] = 0;
			open_conn(&f, i);
			break;
		case 9:		/* the region is revoked, or served again */
			if (f.rw_served)
				check(oms_agent_region_remove(f.ag, 0x11) == 0);
			else
				check(oms_agent_region_add(f.ag, f.rw, RW_LEN,
							   0x11,
							   OMS_ACCESS_ALL) == 0);
			f.rw_served = !f.rw_served;
			break;
		}
	}

	/* resume every stream, acknowledge every posted write: all done */
	for (unsigned i = 0; i < CONNS; i++)
		for (unsigned s = 0; s < STREAMS; s++) {
			take_cpls(&f);
			check(oms_agent_resume(f.ag, f.id[i], (uint16_t)s, 0) ==
			      0);
		}
	for (unsigned q = 0; q < PEERS; q++)
		while (f.nposted[q])
			check(oms_agent_posted_ack(f.ag, q,
					f.posted[q][--f.nposted[q]]) == 0);
	take_cpls(&f);
	for (unsigned i = 0; i < CONNS; i++)
		check(f.done[i] == f.taken[i]);
	check(memcmp(ro_copy, f.ro, RO_LEN) == 0);
	oms_agent_destroy(f.ag);
	free(f.rw);
	free(f.ro);
	return 0;
}
