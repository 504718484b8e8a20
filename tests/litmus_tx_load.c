// SPDX-License-Identifier: MIT
/*
 * Litmus L40 (seed 004 section 4.2): MMIO-Load and MMIO-Acquire on a
 * transmit window.
 *
 * The transmit receiver runs on its own thread, as a device would: it drains
 * what the queue published through the model of the path to the device
 * (chunks overtake each other, seeded), restores program order with its
 * reorder buffer, applies stores to its device memory and answers loads in
 * a response area in host memory that the CPU polls.
 *
 *   read-your-writes  sequenced stores, then a sequenced load of the same
 *                     bytes: never stale, under reordering.  Control: the
 *                     same load relaxed (no sequence number, performed on
 *                     arrival) does read stale bytes; on an in-order path
 *                     it does not (the path is the cause).
 *   acquire           acq(F), then a host store to ordinary memory the
 *                     device reads, or a later sequenced store to F: the
 *                     device never observes either before it performed the
 *                     acquire's read.  Controls: a load that does not wait
 *                     (post, store, then wait), a relaxed load.
 *   slots             a load takes any free response slot; a tag of an
 *                     earlier use of a slot is refused; a blocking load
 *                     that timed out keeps its slot until the late answer
 *                     has come, so it never lands on a later load.
 *   bad input         refused with a clear errno; nothing written, no
 *                     counter moved.
 *
 * With a device thread the queue's load timeout is a hang bound (60 s):
 * on a loaded machine the NIC's thread may wait long for a core.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "helpers.h"
#include "oms_tx.h"

#define TRIALS		2000
#define RING		(64 << 10)
#define MEM		512		/* device memory: small, stores overlap */
#define NSLOTS		4
#define REORDER		8
#define ADDR_F		0		/* the acquire's flag: 8 bytes */

struct dev {
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct oms_tx_nic *nic;
	void *resp;
	pthread_t th;
	int stop;
	uint32_t reorder;
	uint64_t seed;
	unsigned lazy_us;	/* wait this long before draining: batches
				 * gather what the CPU writes meanwhile */
	/* what the device observes, written on the NIC's thread */
	uint64_t host_x;	/* ordinary host memory the device reads */
	uint64_t early;		/* reads performed after the later store */
	uint64_t reads;
	uint64_t drained;	/* no device thread: drained up to here */
};

/* The device reads host_x at the moment it performs each read of F: a
 * value equal to the one it reads from F means the host's later store was
 * already visible. */
static void on_perform(void *arg, unsigned thread, unsigned op, uint64_t addr,
		       const void *data, size_t len)
{
	struct dev *d = arg;
	uint64_t v;

	(void)thread;
	if (op == OMS_TX_OP_STORE || addr != ADDR_F || len != 8)
		return;
	memcpy(&v, data, 8);
	d->reads++;
	if (v && __atomic_load_n(&d->host_x, __ATOMIC_RELAXED) >= v)
		d->early++;
}

static void relax(void)
{
	static __thread unsigned spins;

	if (++spins % 32 == 0)
		sched_yield();
}

static void *nic_main(void *arg)
{
	struct dev *d = arg;
	uint64_t done = 0, ring = oms_tx_ring_chunks(d->q);
	struct oms_tx_fabric fab = { .seed = d->seed, .reorder = d->reorder };

	for (;;) {
		uint64_t p = oms_tx_published(d->q);

		if (p == done) {
			if (__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE))
				break;
			relax();
			continue;
		}
		if (d->lazy_us) {
			struct timespec ts = { 0, d->lazy_us * 1000l };

			nanosleep(&ts, NULL);
			p = oms_tx_published(d->q);
		}
		fab.seed++;
		if (oms_tx_nic_drain(d->nic, 0, oms_tx_ring(d->q), ring, done, p,
				     &fab) < 0)
			abort();
		done = p;
		oms_tx_credit(d->q, done + ring);
	}
	return NULL;
}

static int dev_open(struct dev *d, uint32_t reorder, uint64_t seed,
		    unsigned lazy_us, int start)
{
	struct oms_tx_queue_attr qa = {
		.cls = OMS_TX_SEQUENCED, .max_msg = 512,
		/* a thread: a hang bound; none: nobody answers, fail fast */
		.load_timeout_ms = start ? 60000 : 50,
	};
	struct oms_tx_nic_attr na = {
		.format = OMS_TX_FMT_SEQ, .nthreads = 1, .mem_len = MEM,
		.perform = on_perform, .arg = d,
	};
	size_t rlen = NSLOTS * OMS_TX_RESP_SLOT;

	memset(d, 0, sizeof(*d));
	d->reorder = reorder;
	d->seed = seed;
	d->lazy_us = lazy_us;
	d->resp = aligned_alloc(64, rlen);
	if (!d->resp || oms_tx_window_mem(RING, &d->w) ||
	    oms_tx_queue_create(d->w, &qa, &d->q) ||
	    oms_tx_nic_create(&na, &d->nic) ||
	    oms_tx_queue_set_resp(d->q, d->resp, rlen) ||
	    oms_tx_nic_set_resp(d->nic, 0, d->resp, rlen))
		return -1;
	if (start && pthread_create(&d->th, NULL, nic_main, d))
		return -1;
	return 0;
}

/* Publish what is left, let the device drain it, stop its thread. */
static void dev_stop(struct dev *d)
{
	oms_tx_flush(d->q);
	__atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
	pthread_join(d->th, NULL);
}

static void dev_close(struct dev *d, int started)
{
	if (started)
		dev_stop(d);
	oms_tx_nic_destroy(d->nic);
	oms_tx_queue_destroy(d->q);
	oms_tx_window_close(d->w);
	free(d->resp);
}

/* A store, publishing and waiting for credit when the ring is full. */
static void store(struct dev *d, uint64_t addr, const void *buf, size_t len)
{
	int r;

	while ((r = oms_tx_store(d->q, addr, buf, len)) == -EAGAIN) {
		oms_tx_flush(d->q);
		relax();
	}
	if (r)
		abort();
}

/* No device thread: the NIC takes what was published, now. */
static void drain_now(struct dev *d)
{
	uint64_t p = oms_tx_published(d->q), ring = oms_tx_ring_chunks(d->q);

	if (oms_tx_nic_drain(d->nic, 0, oms_tx_ring(d->q), ring, d->drained, p,
			     NULL) < 0)
		abort();
	d->drained = p;
	oms_tx_credit(d->q, p + ring);
}

static void store64(struct dev *d, uint64_t addr, uint64_t v)
{
	store(d, addr, &v, 8);
}

/* ---- read-your-writes ---- */

struct ryw {
	unsigned long trials, stale, errors;
};

/*
 * Per trial: 1..6 stores of 1..200 random bytes at random places of a
 * 512-byte device memory, then a load that starts inside the last store:
 * compared with a shadow of what program order says the memory holds.
 */
static void run_ryw(unsigned flags, uint32_t reorder, unsigned long trials,
		    uint64_t seed, struct ryw *o)
{
	uint8_t shadow[MEM] = { 0 }, buf[256], got[OMS_TX_LD_MAX];
	struct t_rng r;
	struct dev d;

	memset(o, 0, sizeof(*o));
	t_rng_init(&r, seed);
	if (dev_open(&d, reorder, seed, 0, 1))
		abort();
	for (unsigned long t = 0; t < trials; t++) {
		unsigned k = 1 + t_rng_below(&r, 6);
		uint64_t a = 0, la;
		size_t len = 0, ll;

		for (unsigned i = 0; i < k; i++) {
			len = 1 + t_rng_below(&r, 200);
			a = t_rng_below(&r, MEM - len + 1);
			for (size_t j = 0; j < len; j++)
				buf[j] = (uint8_t)t_rng_next(&r);
			store(&d, a, buf, len);
			memcpy(shadow + a, buf, len);
		}
		la = a + t_rng_below(&r, (uint32_t)len);
		ll = 1 + t_rng_below(&r, (uint32_t)(MEM - la < OMS_TX_LD_MAX ?
						     MEM - la : OMS_TX_LD_MAX));
		if (oms_tx_load(d.q, la, got, ll, flags)) {
			o->errors++;
			continue;
		}
		if (memcmp(got, shadow + la, ll))
			o->stale++;
	}
	o->trials = trials;
	dev_close(&d, 1);
}

TEST(litmus_L40_load_reads_own_sequenced_stores)
{
	unsigned long trials = t_trials(TRIALS);
	uint64_t seed = t_seed(0x40a);
	struct ryw o;

	run_ryw(0, REORDER, trials, seed, &o);
	TH_LOG("sequenced load: %lu trials, stale %lu, errors %lu "
	       "(reorder %u, seed %#llx)", o.trials, o.stale, o.errors,
	       REORDER, (unsigned long long)seed);
	ASSERT_EQ(0, o.errors);
	ASSERT_EQ(0, o.stale);
}

/* The control: a load that bypasses the reorder buffer reads stale. */
TEST(litmus_L40_control_relaxed_load_reads_stale)
{
	unsigned long trials = t_trials(TRIALS);
	struct ryw o;

	run_ryw(OMS_TX_LD_RELAXED, REORDER, trials, t_seed(0x40b), &o);
	TH_LOG("relaxed load: stale in %lu of %lu trials", o.stale, o.trials);
	ASSERT_EQ(0, o.errors);
	ASSERT_GT(o.stale, 0);
}

/* ... and only because the path reorders: in order, it reads fresh. */
TEST(litmus_L40_relaxed_load_in_order_path_is_fresh)
{
	struct ryw o;

	run_ryw(OMS_TX_LD_RELAXED, 0, t_trials(TRIALS) / 4, t_seed(0x40c), &o);
	TH_LOG("relaxed load, in-order path: stale %lu of %lu", o.stale,
	       o.trials);
	ASSERT_EQ(0, o.errors);
	ASSERT_EQ(0, o.stale);
}

/* ---- acquire: later host store to ordinary memory ---- */

struct acq {
	unsigned long trials, wrong, errors;
	uint64_t early, reads;
};

/*
 * Per trial t: store F = t; read F back (acquire, or the control: post the
 * load, do not wait); host store X = t; wait if not yet.  The device reads
 * X when it performs the read of F: X == t there is the forbidden outcome.
 */
static void run_acq_host(int acquire, unsigned long trials, uint64_t seed,
			 struct acq *o)
{
	struct dev d;

	memset(o, 0, sizeof(*o));
	if (dev_open(&d, REORDER, seed, 0, 1))
		abort();
	for (uint64_t t = 1; t <= trials; t++) {
		uint64_t v = 0;
		int r, tag = 0;

		store64(&d, ADDR_F, t);
		if (acquire)
			r = oms_tx_acquire(d.q, ADDR_F, &v, 8);
		else
			r = tag = oms_tx_load_post(d.q, ADDR_F, 8, 0);
		__atomic_store_n(&d.host_x, t, __ATOMIC_RELAXED);
		if (!acquire && tag >= 0)
			r = oms_tx_load_wait(d.q, tag, &v, 8);
		if (r < 0)
			o->errors++;
		else if (v != t)
			o->wrong++;
	}
	o->trials = trials;
	dev_close(&d, 1);
	o->early = d.early;
	o->reads = d.reads;
}

TEST(litmus_L40_acquire_before_later_host_store)
{
	unsigned long trials = t_trials(TRIALS);
	struct oms_tx_stats st;
	struct acq o;

	run_acq_host(1, trials, t_seed(0x40d), &o);
	TH_LOG("acquire: %lu trials, device saw the later host store first "
	       "%llu times in %llu reads; wrong values %lu", o.trials,
	       (unsigned long long)o.early, (unsigned long long)o.reads,
	       o.wrong);
	ASSERT_EQ(0, o.errors);
	ASSERT_EQ(0, o.wrong);
	ASSERT_EQ(trials, o.reads);
	ASSERT_EQ(0, o.early);
	(void)st;
}

TEST(litmus_L40_control_load_without_wait_lets_host_store_pass)
{
	unsigned long trials = t_trials(TRIALS);
	struct acq o;

	run_acq_host(0, trials, t_seed(0x40e), &o);
	TH_LOG("post, store, wait: device saw the later host store first in "
	       "%llu of %llu reads", (unsigned long long)o.early,
	       (unsigned long long)o.reads);
	ASSERT_EQ(0, o.errors);
	ASSERT_EQ(0, o.wrong);	/* it still reads its own write */
	ASSERT_GT(o.early, 0);
}

/* ---- acquire: later sequenced store to the same bytes ---- */

/*
 * Per trial t: store F = 2t; read F (acquire, or a relaxed load posted
 * before the next store is written); store F = 2t + 1; the read must
 * return 2t.  A lazy device gathers both stores and the read in one batch,
 * so the path can reorder them.
 */
static void run_acq_seq(int acquire, unsigned long trials, uint64_t seed,
			unsigned long *newer, unsigned long *older)
{
	struct dev d;

	*newer = *older = 0;
	if (dev_open(&d, REORDER, seed, 20, 1))
		abort();
	for (uint64_t t = 1; t <= trials; t++) {
		uint64_t v = 0;
		int r, tag = 0;

		store64(&d, ADDR_F, 2 * t);
		if (acquire) {
			r = oms_tx_acquire(d.q, ADDR_F, &v, 8);
			store64(&d, ADDR_F, 2 * t + 1);
		} else {
			tag = oms_tx_load_post(d.q, ADDR_F, 8, OMS_TX_LD_RELAXED);
			store64(&d, ADDR_F, 2 * t + 1);
			oms_tx_flush(d.q);
			r = tag < 0 ? tag : oms_tx_load_wait(d.q, tag, &v, 8);
		}
		if (r < 0)
			abort();
		if (v > 2 * t)
			(*newer)++;
		else if (v < 2 * t)
			(*older)++;
	}
	dev_close(&d, 1);
}

TEST(litmus_L40_acquire_before_later_sequenced_store)
{
	unsigned long trials = t_trials(TRIALS) / 2, newer, older;

	run_acq_seq(1, trials, t_seed(0x40f), &newer, &older);
	TH_LOG("acquire then store: read the later store %lu, stale %lu, of "
	       "%lu", newer, older, trials);
	ASSERT_EQ(0, newer);
	ASSERT_EQ(0, older);
}

TEST(litmus_L40_control_relaxed_load_sees_later_store)
{
	unsigned long trials = t_trials(TRIALS) / 2, newer, older;

	run_acq_seq(0, trials, t_seed(0x410), &newer, &older);
	TH_LOG("relaxed load then store: read the later store %lu, stale %lu, "
	       "of %lu", newer, older, trials);
	ASSERT_GT(newer + older, 0);
}

/* ---- bad input ---- */

struct snap {
	struct oms_tx_stats st;
	struct oms_tx_nic_stats ns;
	uint64_t pos, pub;
	uint8_t ring[RING];
};

static void take(struct dev *d, struct snap *s)
{
	oms_tx_stats(d->q, &s->st);
	oms_tx_nic_stats(d->nic, &s->ns);
	s->pos = oms_tx_pos(d->q);
	s->pub = oms_tx_published(d->q);
	memcpy(s->ring, oms_tx_ring(d->q), RING);
}

static int same(struct dev *d, const struct snap *a)
{
	static struct snap b;

	take(d, &b);
	return !memcmp(&a->st, &b.st, sizeof(a->st)) &&
	       !memcmp(&a->ns, &b.ns, sizeof(a->ns)) && a->pos == b.pos &&
	       a->pub == b.pub && !memcmp(a->ring, b.ring, RING);
}

TEST(litmus_L40_bad_arguments_change_nothing)
{
	static struct snap s0;
	struct oms_tx_queue_attr sa = { .cls = OMS_TX_STRONG };
	struct oms_tx_queue *strong, *nores;
	uint8_t buf[512], keep[512];
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, 0, 1, 0, 0));		/* no device thread */
	ASSERT_EQ(0, oms_tx_queue_create(d.w, &sa, &strong));
	sa.cls = OMS_TX_SEQUENCED;
	ASSERT_EQ(0, oms_tx_queue_create(d.w, &sa, &nores));
	memset(buf, 0x5c, sizeof(buf));
	memcpy(keep, buf, sizeof(buf));
	take(&d, &s0);

	/* loads and acquires */
	ASSERT_EQ(-EINVAL, oms_tx_load(NULL, 0, buf, 8, 0));
	ASSERT_EQ(-EINVAL, oms_tx_load(d.q, 0, NULL, 8, 0));
	ASSERT_EQ(-EINVAL, oms_tx_load(d.q, 0, buf, 0, 0));
	ASSERT_EQ(-EINVAL, oms_tx_load(d.q, 0, buf, OMS_TX_LD_MAX + 1, 0));
	ASSERT_EQ(-EINVAL, oms_tx_load(d.q, 0, buf, 8, 1u << 7));
	ASSERT_EQ(-EINVAL, oms_tx_load(d.q, UINT64_MAX - 3, buf, 8, 0));
	ASSERT_EQ(-EOPNOTSUPP, oms_tx_load(strong, 0, buf, 8, 0));
	ASSERT_EQ(-ENXIO, oms_tx_load(nores, 0, buf, 8, 0));
	ASSERT_EQ(-EINVAL, oms_tx_load_post(d.q, 0, 0, 0));
	ASSERT_EQ(-EINVAL, oms_tx_acquire(NULL, 0, buf, 8));
	ASSERT_EQ(-EINVAL, oms_tx_acquire(d.q, 0, NULL, 8));
	ASSERT_EQ(-EINVAL, oms_tx_acquire(d.q, 0, buf, 0));
	ASSERT_EQ(-EINVAL, oms_tx_acquire(d.q, 0, buf, OMS_TX_LD_MAX + 1));
	ASSERT_EQ(-EINVAL, oms_tx_acquire(d.q, UINT64_MAX, buf, 1));
	ASSERT_EQ(-EOPNOTSUPP, oms_tx_acquire(strong, 0, buf, 8));
	ASSERT_EQ(-ENXIO, oms_tx_acquire(nores, 0, buf, 8));
	ASSERT_EQ(-EINVAL, oms_tx_load_wait(NULL, 0, buf, 8));
	ASSERT_EQ(-EINVAL, oms_tx_load_wait(d.q, 0, NULL, 8));
	ASSERT_EQ(-ENOENT, oms_tx_load_wait(d.q, 0, buf, 8));	/* not posted */
	ASSERT_EQ(-ENOENT, oms_tx_load_wait(d.q, -1, buf, 8));
	/* stores */
	ASSERT_EQ(-EINVAL, oms_tx_store(NULL, 0, buf, 8));
	ASSERT_EQ(-EINVAL, oms_tx_store(d.q, 0, NULL, 8));
	ASSERT_EQ(-EINVAL, oms_tx_store(d.q, 0, buf, 0));
	ASSERT_EQ(-EINVAL, oms_tx_store(d.q, 0, buf,
					oms_tx_payload_max(OMS_TX_SEQUENCED, 512) - 7));
	ASSERT_EQ(-EINVAL, oms_tx_store(d.q, UINT64_MAX - 3, buf, 8));
	ASSERT_EQ(-EOPNOTSUPP, oms_tx_store(strong, 0, buf, 8));
	/* response areas */
	ASSERT_EQ(-EINVAL, oms_tx_queue_set_resp(d.q, NULL, OMS_TX_RESP_SLOT));
	ASSERT_EQ(-EINVAL, oms_tx_queue_set_resp(d.q, (uint8_t *)d.resp + 8,
						 OMS_TX_RESP_SLOT));
	ASSERT_EQ(-EINVAL, oms_tx_queue_set_resp(d.q, d.resp, 64));
	ASSERT_EQ(-EINVAL, oms_tx_queue_set_resp(d.q, d.resp,
						 3 * OMS_TX_RESP_SLOT));
	ASSERT_EQ(-EOPNOTSUPP, oms_tx_queue_set_resp(strong, d.resp,
						     OMS_TX_RESP_SLOT));
	ASSERT_EQ(-EINVAL, oms_tx_nic_set_resp(NULL, 0, d.resp,
					       OMS_TX_RESP_SLOT));
	ASSERT_EQ(-EINVAL, oms_tx_nic_set_resp(d.nic, 1, d.resp,
					       OMS_TX_RESP_SLOT));
	ASSERT_EQ(-EINVAL, oms_tx_nic_set_resp(d.nic, 0, d.resp, 100));
	ASSERT_EQ(-EINVAL, oms_tx_nic_set_resp(d.nic, 0, NULL, 64));
	ASSERT_TRUE(same(&d, &s0));
	ASSERT_EQ(0, memcmp(buf, keep, sizeof(buf)));
	oms_tx_queue_destroy(strong);
	oms_tx_queue_destroy(nores);
	dev_close(&d, 0);
}

/* No credit: stores, loads and acquires refused, nothing written. */
TEST(litmus_L40_no_credit_writes_nothing)
{
	struct oms_tx_stats a, b;
	uint8_t buf[8] = { 0 };
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, 0, 1, 0, 0));		/* nobody credits */
	while (oms_tx_store(d.q, 0, buf, 8) == 0)
		;
	ASSERT_EQ(0, oms_tx_stats(d.q, &a));
	ASSERT_EQ(-EAGAIN, oms_tx_store(d.q, 0, buf, 8));
	ASSERT_EQ(-EAGAIN, oms_tx_load_post(d.q, 0, 8, 0));
	ASSERT_EQ(-EAGAIN, oms_tx_load(d.q, 0, buf, 8, OMS_TX_LD_RELAXED));
	ASSERT_EQ(-EAGAIN, oms_tx_acquire(d.q, 0, buf, 8));
	ASSERT_EQ(0, oms_tx_stats(d.q, &b));
	ASSERT_EQ(a.chunks, b.chunks);
	ASSERT_EQ(a.loads, b.loads);
	ASSERT_EQ(a.fences, b.fences);
	ASSERT_EQ(oms_tx_ring_chunks(d.q), oms_tx_pos(d.q));
	dev_close(&d, 0);
}

/* Every slot outstanding: -EBUSY; nobody answers: -ETIMEDOUT, and the
 * tag stays outstanding. */
TEST(litmus_L40_busy_and_timeout)
{
	uint8_t buf[8], keep[8];
	int tags[NSLOTS];
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, 0, 1, 0, 0));		/* no device thread */
	memset(buf, 0x3c, sizeof(buf));
	memcpy(keep, buf, sizeof(buf));
	for (int i = 0; i < NSLOTS; i++) {
		tags[i] = oms_tx_load_post(d.q, 0, 8, OMS_TX_LD_RELAXED);
		ASSERT_GE(tags[i], 0);
		for (int j = 0; j < i; j++)
			ASSERT_NE(tags[j], tags[i]);
	}
	ASSERT_EQ(-EBUSY, oms_tx_load_post(d.q, 0, 8, 0));
	ASSERT_EQ(-EBUSY, oms_tx_acquire(d.q, 0, buf, 8));
	ASSERT_EQ(-EBUSY, oms_tx_queue_set_resp(d.q, d.resp, OMS_TX_RESP_SLOT));
	ASSERT_EQ(-EINVAL, oms_tx_load_wait(d.q, tags[0], buf, 4));
	ASSERT_EQ(-ETIMEDOUT, oms_tx_load_wait(d.q, tags[0], buf, 8));
	ASSERT_EQ(-ETIMEDOUT, oms_tx_load_wait(d.q, tags[0], buf, 8));
	ASSERT_EQ(0, memcmp(buf, keep, sizeof(buf)));
	dev_close(&d, 0);
}

/* A load takes whichever slot is free, not the next in turn; the tag of a
 * slot's earlier use is refused once the slot is used again. */
TEST(litmus_L40_load_takes_any_free_slot)
{
	int tags[NSLOTS], t;
	uint64_t v;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, 0, 1, 0, 0));		/* drained by hand */
	for (int i = 0; i < NSLOTS + 1; i++)
		store64(&d, 8 * i, 100 + i);
	for (int i = 0; i < NSLOTS; i++)
		ASSERT_LE(0, tags[i] = oms_tx_load_post(d.q, 8 * i, 8, 0));
	ASSERT_EQ(-EBUSY, oms_tx_load_post(d.q, 0, 8, 0));
	drain_now(&d);
	/* the last slot comes free; the next post must find it */
	ASSERT_EQ(0, oms_tx_load_wait(d.q, tags[NSLOTS - 1], &v, 8));
	ASSERT_EQ(100 + NSLOTS - 1, v);
	t = oms_tx_load_post(d.q, 8 * NSLOTS, 8, 0);
	ASSERT_LE(0, t);
	ASSERT_NE(tags[NSLOTS - 1], t);
	ASSERT_EQ(-ENOENT, oms_tx_load_wait(d.q, tags[NSLOTS - 1], &v, 8));
	drain_now(&d);
	ASSERT_EQ(0, oms_tx_load_wait(d.q, t, &v, 8));
	ASSERT_EQ(100 + NSLOTS, v);
	for (int i = 0; i < NSLOTS - 1; i++) {
		ASSERT_EQ(0, oms_tx_load_wait(d.q, tags[i], &v, 8));
		ASSERT_EQ(100 + i, v);
	}
	dev_close(&d, 0);
}

/* A blocking load that gave up leaves no tag; its slot is not reused
 * until the late answer came, which then lands on nobody's load. */
TEST(litmus_L40_timed_out_load_keeps_its_slot_until_answered)
{
	int tags[NSLOTS - 1], t;
	uint64_t v = 7;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, 0, 1, 0, 0));		/* drained by hand */
	for (int i = 0; i < NSLOTS; i++)
		store64(&d, 8 * i, 200 + i);
	ASSERT_EQ(-ETIMEDOUT, oms_tx_load(d.q, 0, &v, 8, 0));
	ASSERT_EQ(-ETIMEDOUT, oms_tx_acquire(d.q, 0, &v, 8));
	ASSERT_EQ(7, v);
	/* two slots are lost now; the others still serve */
	for (int i = 0; i < NSLOTS - 2; i++)
		ASSERT_LE(0, tags[i] = oms_tx_load_post(d.q, 8 * (i + 1), 8, 0));
	ASSERT_EQ(-EBUSY, oms_tx_load_post(d.q, 0, 8, 0));
	ASSERT_EQ(-EBUSY, oms_tx_queue_set_resp(d.q, d.resp,
						NSLOTS * OMS_TX_RESP_SLOT));
	drain_now(&d);			/* the late answers arrive */
	for (int i = 0; i < NSLOTS - 2; i++) {
		ASSERT_EQ(0, oms_tx_load_wait(d.q, tags[i], &v, 8));
		ASSERT_EQ(200 + i + 1, v);
	}
	/* every slot serves again */
	for (int i = 0; i < NSLOTS - 1; i++)
		ASSERT_LE(0, tags[i] = oms_tx_load_post(d.q, 8 * i, 8, 0));
	ASSERT_LE(0, t = oms_tx_load_post(d.q, 8 * (NSLOTS - 1), 8, 0));
	drain_now(&d);
	for (int i = 0; i < NSLOTS - 1; i++) {
		ASSERT_EQ(0, oms_tx_load_wait(d.q, tags[i], &v, 8));
		ASSERT_EQ(200 + i, v);
	}
	ASSERT_EQ(0, oms_tx_load_wait(d.q, t, &v, 8));
	ASSERT_EQ(200 + NSLOTS - 1, v);
	ASSERT_EQ(0, oms_tx_queue_set_resp(d.q, d.resp,
					   NSLOTS * OMS_TX_RESP_SLOT));
	dev_close(&d, 0);
}

/* Device-side refusals: outside device memory nothing is read or written. */
TEST(litmus_L40_device_refuses_outside_its_memory)
{
	struct oms_tx_nic_stats ns;
	uint8_t buf[16], zero[16] = { 0 };
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, REORDER, 7, 0, 1));
	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, oms_tx_store(d.q, MEM - 8, buf, 16));	/* straddles */
	ASSERT_EQ(0, oms_tx_store(d.q, 1ull << 40, buf, 16));
	ASSERT_EQ(-EFAULT, oms_tx_load(d.q, MEM, buf, 1, 0));
	ASSERT_EQ(-EFAULT, oms_tx_acquire(d.q, MEM - 4, buf, 8));
	ASSERT_EQ(-EFAULT, oms_tx_load(d.q, MEM, buf, 1, OMS_TX_LD_RELAXED));
	ASSERT_EQ(0, oms_tx_load(d.q, MEM - 16, buf, 16, 0));
	ASSERT_EQ(0, memcmp(buf, zero, 16));	/* the straddling store: none */
	dev_stop(&d);
	ASSERT_EQ(0, oms_tx_nic_stats(d.nic, &ns));
	ASSERT_EQ(5, ns.bad_addr);	/* 2 stores, 3 loads */
	ASSERT_EQ(4, ns.loads);		/* refused ones are answered too */
	ASSERT_EQ(0, ns.stores);
	ASSERT_EQ(0, ns.unanswered);
	ASSERT_EQ(0, ns.corrupted + ns.malformed + ns.stale + ns.duplicate);
	dev_close(&d, 0);
}

TEST_HARNESS_MAIN
