// SPDX-License-Identifier: MIT
/*
 * Litmus L27 (MMIO message passing) and L28 (per-thread streams) on the
 * transmit path: liboms writes data messages then a flag message into a
 * write-combining window with non-temporal stores, the model of the path
 * to the device delivers the chunks out of order (seeded), and the
 * transmit receiver restores order with the engine's reorder buffer.
 *
 * Sequenced: the flag never leaves the NIC before every data message, and
 * every message is whole; no store fence is issued.  Strong (a fence per
 * message): the same, with a fence per message.  Weak (no fence, no
 * sequence numbers): the control; the flag does overtake data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms_tx.h"

#define TRIALS		4000
#define NDATA		6
#define MAXLEN		200
#define REORDER		8
#define RING		(64 << 10)

struct log {
	unsigned n, bad;
	unsigned thread[64];
	uint32_t idx[64];
};

/* Payload: u32 message index, then bytes derived from it. */
static size_t make_msg(uint8_t *b, uint32_t idx, size_t len)
{
	memcpy(b, &idx, 4);
	for (size_t i = 4; i < len; i++)
		b[i] = (uint8_t)(idx * 31 + i * 7);
	return len;
}

static int msg_ok(const uint8_t *b, size_t len)
{
	uint32_t idx;

	if (len < 4)
		return 0;
	memcpy(&idx, b, 4);
	for (size_t i = 4; i < len; i++)
		if (b[i] != (uint8_t)(idx * 31 + i * 7))
			return 0;
	return 1;
}

static void on_msg(void *arg, unsigned thread, const void *msg, size_t len)
{
	struct log *l = arg;

	if (!msg_ok(msg, len))
		l->bad++;
	if (l->n < 64) {
		l->thread[l->n] = thread;
		memcpy(&l->idx[l->n], msg, 4);
	}
	l->n++;
}

struct run {
	unsigned long trials, flag_early, lost, torn;
	uint64_t fences, msgs;
};

/*
 * One queue of class @cls, a NIC for its format; per trial: NDATA data
 * messages of random length (index 1..NDATA), then the flag (index
 * FLAG), flush, drain with a seeded reorder of REORDER chunks.
 */
#define FLAG 0xf1a9u

static void run_l27_how(unsigned cls, int batch, unsigned long trials,
			uint64_t seed, struct run *out)
{
	static uint8_t bufs[NDATA + 1][MAXLEN];
	struct iovec iov[NDATA + 1];
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct oms_tx_nic *nic;
	struct oms_tx_stats st;
	struct log l;
	struct t_rng r;
	uint8_t buf[MAXLEN];
	uint64_t done = 0;
	struct oms_tx_queue_attr qa = { .cls = cls, .max_msg = 256 };
	struct oms_tx_nic_attr na = {
		.format = cls == OMS_TX_SEQUENCED ? OMS_TX_FMT_SEQ :
						    OMS_TX_FMT_PLAIN,
		.nthreads = 1, .deliver = on_msg, .arg = &l,
		.slot_chunks = 4, .region_len = RING,
	};

	memset(out, 0, sizeof(*out));
	t_rng_init(&r, seed);
	if (oms_tx_window_mem(RING, &w) || oms_tx_queue_create(w, &qa, &q) ||
	    oms_tx_nic_create(&na, &nic))
		abort();
	for (unsigned long t = 0; t < trials; t++) {
		struct oms_tx_fabric fab = { .seed = t_rng_next(&r),
					     .reorder = REORDER };
		int seen_flag = 0;
		unsigned data = 0;

		memset(&l, 0, sizeof(l));
		for (uint32_t i = 1; i <= NDATA; i++) {
			size_t len = 4 + t_rng_below(&r, MAXLEN - 4);

			if (batch) {
				iov[i - 1].iov_base = bufs[i - 1];
				iov[i - 1].iov_len = make_msg(bufs[i - 1], i,
							      len);
			} else if (oms_tx_send(q, buf, make_msg(buf, i, len))) {
				abort();
			}
		}
		if (batch) {
			/* data and flag in one call */
			iov[NDATA].iov_base = bufs[NDATA];
			iov[NDATA].iov_len = make_msg(bufs[NDATA], FLAG, 8);
			if (oms_tx_send_batch(q, iov, NDATA + 1) != NDATA + 1)
				abort();
		} else if (oms_tx_send(q, buf, make_msg(buf, FLAG, 8))) {
			abort();
		}
		oms_tx_flush(q);
		if (oms_tx_nic_drain(nic, 0, oms_tx_ring(q),
				     oms_tx_ring_chunks(q), done, oms_tx_pos(q),
				     &fab) < 0)
			abort();
		done = oms_tx_pos(q);
		oms_tx_credit(q, done + oms_tx_ring_chunks(q));
		for (unsigned k = 0; k < l.n && k < 64; k++) {
			if (l.idx[k] == FLAG) {
				seen_flag = 1;
				if (data < NDATA)
					out->flag_early++;
			} else {
				data++;
			}
		}
		if (!seen_flag || data != NDATA)
			out->lost++;
		out->torn += l.bad;
	}
	oms_tx_stats(q, &st);
	out->fences = st.fences;
	out->msgs = st.msgs;
	out->trials = trials;
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

static void run_l27(unsigned cls, unsigned long trials, uint64_t seed,
		    struct run *out)
{
	run_l27_how(cls, 0, trials, seed, out);
}

TEST(litmus_L27_sequenced_flag_after_data_no_fence)
{
	unsigned long trials = t_trials(TRIALS);
	uint64_t seed = t_seed(0x27a);
	struct run o;

	run_l27(OMS_TX_SEQUENCED, trials, seed, &o);
	TH_LOG("sequenced: %lu trials, flag early %lu, lost %lu, torn %lu, "
	       "fences %llu for %llu messages (seed %#llx)", o.trials,
	       o.flag_early, o.lost, o.torn, (unsigned long long)o.fences,
	       (unsigned long long)o.msgs, (unsigned long long)seed);
	ASSERT_EQ(0, o.flag_early);
	ASSERT_EQ(0, o.lost);
	ASSERT_EQ(0, o.torn);
	/* only the flush that publishes each trial */
	ASSERT_EQ(o.trials, o.fences);
}

TEST(litmus_L27_strong_fence_per_message)
{
	unsigned long trials = t_trials(TRIALS);
	struct run o;

	run_l27(OMS_TX_STRONG, trials, t_seed(0x27b), &o);
	TH_LOG("strong: flag early %lu, lost %lu, torn %lu, fences %llu",
	       o.flag_early, o.lost, o.torn, (unsigned long long)o.fences);
	ASSERT_EQ(0, o.flag_early);
	ASSERT_EQ(0, o.lost);
	ASSERT_EQ(0, o.torn);
	ASSERT_EQ(o.msgs + o.trials, o.fences);
}

/* The control: without fences or sequence numbers the flag overtakes. */
TEST(litmus_L27_weak_control_flag_overtakes)
{
	unsigned long trials = t_trials(TRIALS);
	struct run o;

	run_l27(OMS_TX_WEAK, trials, t_seed(0x27c), &o);
	TH_LOG("weak: flag before data in %lu of %lu trials (messages whole: "
	       "torn %lu)", o.flag_early, o.trials, o.torn);
	ASSERT_GT(o.flag_early, 0);
	ASSERT_EQ(0, o.torn);		/* reordered, but each one whole */
	ASSERT_EQ(0, o.lost);
}

/* The same three with each trial's messages in one oms_tx_send_batch(). */
TEST(litmus_L27_sequenced_batch_flag_after_data_no_fence)
{
	unsigned long trials = t_trials(TRIALS);
	uint64_t seed = t_seed(0x27d);
	struct run o;

	run_l27_how(OMS_TX_SEQUENCED, 1, trials, seed, &o);
	TH_LOG("sequenced, batched: %lu trials, flag early %lu, lost %lu, "
	       "torn %lu, fences %llu (seed %#llx)", o.trials, o.flag_early,
	       o.lost, o.torn, (unsigned long long)o.fences,
	       (unsigned long long)seed);
	ASSERT_EQ(0, o.flag_early);
	ASSERT_EQ(0, o.lost);
	ASSERT_EQ(0, o.torn);
	ASSERT_EQ(o.trials, o.fences);
}

TEST(litmus_L27_strong_batch_fence_per_message)
{
	unsigned long trials = t_trials(TRIALS);
	struct run o;

	run_l27_how(OMS_TX_STRONG, 1, trials, t_seed(0x27e), &o);
	TH_LOG("strong, batched: flag early %lu, lost %lu, torn %lu, fences "
	       "%llu", o.flag_early, o.lost, o.torn,
	       (unsigned long long)o.fences);
	ASSERT_EQ(0, o.flag_early);
	ASSERT_EQ(0, o.lost);
	ASSERT_EQ(0, o.torn);
	ASSERT_EQ(o.msgs + o.trials, o.fences);
}

TEST(litmus_L27_weak_batch_control_flag_overtakes)
{
	unsigned long trials = t_trials(TRIALS);
	struct run o;

	run_l27_how(OMS_TX_WEAK, 1, trials, t_seed(0x27f), &o);
	TH_LOG("weak, batched: flag before data in %lu of %lu trials (torn "
	       "%lu)", o.flag_early, o.trials, o.torn);
	ASSERT_GT(o.flag_early, 0);
	ASSERT_EQ(0, o.torn);
	ASSERT_EQ(0, o.lost);
}

/* Weak with no reordering on the path is in order: the control fails for
 * the reason it says, not because of the NIC. */
TEST(litmus_L27_weak_in_order_path_is_in_order)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct oms_tx_nic *nic;
	struct log l = { 0 };
	uint8_t buf[64];
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_WEAK, .max_msg = 64 };
	struct oms_tx_nic_attr na = {
		.format = OMS_TX_FMT_PLAIN, .nthreads = 1, .deliver = on_msg,
		.arg = &l, .slot_chunks = 1, .region_len = 4096,
	};

	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(0, oms_tx_nic_create(&na, &nic));
	for (uint32_t i = 0; i < 40; i++) {
		ASSERT_EQ(0, oms_tx_send(q, buf, make_msg(buf, i, 20)));
	}
	oms_tx_flush(q);
	ASSERT_EQ(40, oms_tx_nic_drain(nic, 0, oms_tx_ring(q), 64, 0, 40, NULL));
	ASSERT_EQ(40, l.n);
	for (uint32_t i = 0; i < 40; i++) {
		ASSERT_EQ(i, l.idx[i]);
	}
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

/*
 * L28: two threads' sequenced streams.  Thread 0's chunk 3 is withheld:
 * thread 1's messages all leave the NIC meanwhile, thread 0's stop at the
 * gap and resume, in order, when it arrives.
 */
TEST(litmus_L28_gap_in_one_thread_does_not_hold_the_other)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q[2];
	struct oms_tx_nic *nic;
	struct log l = { 0 };
	uint8_t buf[64];
	struct oms_tx_nic_attr na = {
		.format = OMS_TX_FMT_SEQ, .nthreads = 2, .deliver = on_msg,
		.arg = &l,
	};
	const uint8_t *ring[2];
	unsigned n0 = 0, n1 = 0;

	ASSERT_EQ(0, oms_tx_window_mem(8192, &w));
	for (unsigned t = 0; t < 2; t++) {
		struct oms_tx_queue_attr qa = {
			.cls = OMS_TX_SEQUENCED, .thread = t,
			.offset = t * 4096, .length = 4096,
		};

		ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q[t]));
		for (uint32_t i = 0; i < 8; i++) {	/* one chunk each */
			ASSERT_EQ(0, oms_tx_send(q[t], buf,
						 make_msg(buf, t * 100 + i, 40)));
		}
		oms_tx_flush(q[t]);
		ring[t] = oms_tx_ring(q[t]);
	}
	ASSERT_EQ(0, oms_tx_nic_create(&na, &nic));
	/* interleave, thread 0 chunk 3 missing */
	for (unsigned i = 0; i < 8; i++) {
		if (i != 3) {
			ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, ring[0] + i * 64));
		}
		ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, ring[1] + i * 64));
	}
	ASSERT_EQ(11, l.n);	/* thread 0: 0..2, thread 1: 0..7 */
	for (unsigned k = 0; k < l.n; k++) {
		if (l.thread[k] == 0) {
			ASSERT_EQ(n0++, l.idx[k]);
		} else {
			ASSERT_EQ(100 + n1++, l.idx[k]);
		}
	}
	ASSERT_EQ(3, n0);
	ASSERT_EQ(8, n1);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, ring[0] + 3 * 64));
	ASSERT_EQ(16, l.n);
	for (unsigned k = 11; k < 16; k++) {
		ASSERT_EQ(0, l.thread[k]);
		ASSERT_EQ(3 + (k - 11), l.idx[k]);
	}
	ASSERT_EQ(0, l.bad);
	oms_tx_nic_destroy(nic);
	for (unsigned t = 0; t < 2; t++)
		oms_tx_queue_destroy(q[t]);
	oms_tx_window_close(w);
}

/* L28 randomised: two threads' chunks interleaved at random and each
 * stream reordered; each thread's messages leave in its own order. */
TEST(litmus_L28_random_interleaving_per_thread_order)
{
	unsigned long trials = t_trials(2000), bad_order = 0, lost = 0;
	struct oms_tx_window *w;
	struct oms_tx_queue *q[2];
	struct oms_tx_nic *nic;
	struct log l;
	struct t_rng r;
	uint8_t buf[MAXLEN];
	struct oms_tx_nic_attr na = {
		.format = OMS_TX_FMT_SEQ, .nthreads = 2, .deliver = on_msg,
		.arg = &l,
	};
	uint64_t done[2] = { 0, 0 };

	t_rng_init(&r, t_seed(0x28));
	ASSERT_EQ(0, oms_tx_window_mem(2 * RING, &w));
	for (unsigned t = 0; t < 2; t++) {
		struct oms_tx_queue_attr qa = {
			.cls = OMS_TX_SEQUENCED, .thread = t,
			.offset = (uint64_t)t * RING, .length = RING,
		};

		ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q[t]));
	}
	ASSERT_EQ(0, oms_tx_nic_create(&na, &nic));
	for (unsigned long trial = 0; trial < trials; trial++) {
		uint32_t order[64];
		unsigned n = 0, next[2] = { 0, 0 };

		memset(&l, 0, sizeof(l));
		for (unsigned t = 0; t < 2; t++) {
			for (uint32_t i = 0; i < 4; i++) {
				size_t len = 4 + t_rng_below(&r, MAXLEN - 4);

				ASSERT_EQ(0, oms_tx_send(q[t], buf,
							 make_msg(buf, i, len)));
			}
			oms_tx_flush(q[t]);
		}
		/* every chunk of both streams, shuffled: thread in bit 16 */
		for (unsigned t = 0; t < 2; t++)
			for (uint64_t p = done[t]; p < oms_tx_pos(q[t]); p++)
				order[n++] = (t << 16) | (uint32_t)(p - done[t]);
		t_shuffle_u32(&r, order, n);
		for (unsigned k = 0; k < n; k++) {
			unsigned t = order[k] >> 16;
			uint64_t p = done[t] + (order[k] & 0xffff);
			const uint8_t *c = (const uint8_t *)oms_tx_ring(q[t]) +
					   (p & (oms_tx_ring_chunks(q[t]) - 1)) * 64;

			ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, c));
		}
		for (unsigned t = 0; t < 2; t++) {
			done[t] = oms_tx_pos(q[t]);
			oms_tx_credit(q[t], done[t] + oms_tx_ring_chunks(q[t]));
		}
		for (unsigned k = 0; k < l.n; k++)
			if (l.idx[k] != next[l.thread[k]]++)
				bad_order++;
		if (l.n != 8 || l.bad)
			lost++;
	}
	TH_LOG("%lu trials: %lu out of per-thread order, %lu lost or torn",
	       trials, bad_order, lost);
	ASSERT_EQ(0, bad_order);
	ASSERT_EQ(0, lost);
	oms_tx_nic_destroy(nic);
	for (unsigned t = 0; t < 2; t++)
		oms_tx_queue_destroy(q[t]);
	oms_tx_window_close(w);
}

TEST_HARNESS_MAIN
