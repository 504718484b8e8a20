// SPDX-License-Identifier: MIT
/*
 * oms_tx_send_batch(): a batch writes the bytes the same messages sent
 * one by one write (every class, with and without payload check, across
 * ring wraparound, against the portable writer); the credit stops a batch
 * where the room ends and -EAGAIN writes nothing, also for vectors of
 * one length, which the batch writes in a loop of their own; bad vectors
 * are refused whole.  Public headers only.  (Order through a reordering consumer:
 * litmus_mmio_order, the L27 batch cases.)
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "harness.h"
#include "helpers.h"
#include "oms_tx.h"

#define RING	(16u << 10)	/* 256 chunks: the runs below wrap it */
#define MAXMSG	512u
#define GROUPS	400

/* every class a queue takes (oms_order.h numbering), and its name */
static const unsigned tx_classes[3] = {
	OMS_TX_WEAK, OMS_TX_STRONG, OMS_TX_SEQUENCED,
};
static const char *const cls_name[] = { "weak", "strong", "sequenced" };

static void fill(uint8_t *b, size_t len, uint32_t salt)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)((i * 151) ^ (salt * 7) ^ (i >> 8) ^ 0x5a);
}

static int same_stats(const struct oms_tx_stats *a,
		      const struct oms_tx_stats *b)
{
	return a->msgs == b->msgs && a->chunks == b->chunks &&
	       a->payload_bytes == b->payload_bytes &&
	       a->fences == b->fences && a->eagain == b->eagain;
}

/*
 * Three queues on three windows: the portable writer sending one by one
 * (the reference), the default writer sending one by one, the default
 * writer sending groups of 1..64 messages in one call.  Lengths are
 * random, with 56 (one full chunk, the fast case) one time in four.
 */
TEST(batch_writes_what_single_sends_write)
{
	static uint8_t src[64][MAXMSG];
	struct t_rng r;

	t_rng_init(&r, t_seed(0xba7c));
	for (unsigned i = 0; i < 64; i++)
		fill(src[i], MAXMSG, i);
	for (unsigned ci = 0; ci < 3; ci++) {
		const unsigned cls = tx_classes[ci];

		for (unsigned chk = 0; chk < 2; chk++) {
			struct oms_tx_window *w[3];
			struct oms_tx_queue *q[3];
			struct oms_tx_stats st[3];
			size_t maxp = oms_tx_payload_max(cls, MAXMSG);
			unsigned long sent = 0;

			for (unsigned k = 0; k < 3; k++) {
				struct oms_tx_queue_attr qa = {
					.cls = cls, .max_msg = MAXMSG,
					.flags = OMS_TX_Q_NO_CREDIT |
						 (chk ? OMS_TX_Q_PAYLOAD_CHECK : 0) |
						 (k == 0 ? OMS_TX_Q_SCALAR : 0),
				};

				ASSERT_EQ(0, oms_tx_window_mem(RING, &w[k]));
				ASSERT_EQ(0, oms_tx_queue_create(w[k], &qa, &q[k]));
			}
			for (unsigned g = 0; g < GROUPS; g++) {
				struct iovec iov[64];
				unsigned n = 1 + t_rng_below(&r, 64);

				for (unsigned i = 0; i < n; i++) {
					size_t len = t_rng_below(&r, 4) ? 56 :
						1 + t_rng_below(&r, maxp);

					iov[i].iov_base = src[t_rng_below(&r, 64)];
					iov[i].iov_len = len;
					ASSERT_EQ(0, oms_tx_send(q[0], iov[i].iov_base,
								 len));
					ASSERT_EQ(0, oms_tx_send(q[1], iov[i].iov_base,
								 len));
				}
				ASSERT_EQ((int)n, oms_tx_send_batch(q[2], iov, n));
				sent += n;
				ASSERT_EQ(oms_tx_pos(q[0]), oms_tx_pos(q[2]));
				for (unsigned k = 1; k < 3; k++) {
					ASSERT_EQ(0, memcmp(oms_tx_window_base(w[0]),
							    oms_tx_window_base(w[k]),
							    RING)) {
						TH_LOG("%s%s: window %u differs "
						       "after group %u", cls_name[ci],
						       chk ? " +check" : "", k, g);
					}
				}
			}
			for (unsigned k = 0; k < 3; k++)
				ASSERT_EQ(0, oms_tx_stats(q[k], &st[k]));
			ASSERT_EQ(sent, st[2].msgs);
			ASSERT_TRUE(same_stats(&st[0], &st[2]));
			ASSERT_TRUE(same_stats(&st[1], &st[2]));
			TH_LOG("%s%s: %lu messages in %d batches, %llu chunks, "
			       "%llu fences: same bytes and counters as single "
			       "sends", cls_name[ci], chk ? " +check" : "",
			       sent, GROUPS, (unsigned long long)st[2].chunks,
			       (unsigned long long)st[2].fences);
			for (unsigned k = 0; k < 3; k++) {
				oms_tx_queue_destroy(q[k]);
				oms_tx_window_close(w[k]);
			}
		}
	}
}

/*
 * Vectors whose messages all have one length (the batch's own loop for
 * them): every length from 1 byte to the largest, in groups of 1..16,
 * give the bytes and counters of the portable writer's single sends.
 */
TEST(same_length_batches_match_single_sends)
{
	static uint8_t src[16][MAXMSG];

	for (unsigned i = 0; i < 16; i++)
		fill(src[i], MAXMSG, 40 + i);
	for (unsigned ci = 0; ci < 3; ci++) {
		const unsigned cls = tx_classes[ci];
		size_t maxp = oms_tx_payload_max(cls, MAXMSG);
		struct oms_tx_window *w[2];
		struct oms_tx_queue *q[2];
		struct oms_tx_stats st[2];

		for (unsigned k = 0; k < 2; k++) {
			struct oms_tx_queue_attr qa = {
				.cls = cls, .max_msg = MAXMSG,
				.flags = OMS_TX_Q_NO_CREDIT |
					 (k == 0 ? OMS_TX_Q_SCALAR : 0),
			};

			ASSERT_EQ(0, oms_tx_window_mem(RING, &w[k]));
			ASSERT_EQ(0, oms_tx_queue_create(w[k], &qa, &q[k]));
		}
		for (size_t len = 1; len <= maxp; len++) {
			struct iovec iov[16];
			unsigned n = 1 + (unsigned)(len % 16);

			for (unsigned i = 0; i < n; i++) {
				iov[i] = (struct iovec){
					.iov_base = src[(len + i) % 16],
					.iov_len = len,
				};
				ASSERT_EQ(0, oms_tx_send(q[0], iov[i].iov_base,
							 len));
			}
			ASSERT_EQ((int)n, oms_tx_send_batch(q[1], iov, n));
			ASSERT_EQ(oms_tx_pos(q[0]), oms_tx_pos(q[1]));
			ASSERT_EQ(0, memcmp(oms_tx_window_base(w[0]),
					    oms_tx_window_base(w[1]), RING)) {
				TH_LOG("%s: windows differ after %zu-byte "
				       "messages", cls_name[ci], len);
			}
		}
		ASSERT_EQ(0, oms_tx_stats(q[0], &st[0]));
		ASSERT_EQ(0, oms_tx_stats(q[1], &st[1]));
		ASSERT_TRUE(same_stats(&st[0], &st[1]));
		TH_LOG("%s: lengths 1..%zu, %llu messages: same bytes and "
		       "counters", cls_name[ci], maxp,
		       (unsigned long long)st[1].msgs);
		for (unsigned k = 0; k < 2; k++) {
			oms_tx_queue_destroy(q[k]);
			oms_tx_window_close(w[k]);
		}
	}
}

/* Credit with messages of two chunks each: a batch stops at the last
 * message that fits whole, not at the last chunk. */
TEST(credit_stops_a_batch_of_two_chunk_messages_whole)
{
	static uint8_t msg[112];
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED,
					.max_msg = 128 };
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct iovec iov[40];
	uint8_t *snap = malloc(4096);

	ASSERT_NE(NULL, snap);
	fill(msg, sizeof(msg), 9);
	for (unsigned i = 0; i < 40; i++)
		iov[i] = (struct iovec){ .iov_base = msg, .iov_len = 112 };
	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));	/* 64 chunks */
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(0, oms_tx_send(q, msg, 56));		/* 63 chunks left */
	ASSERT_EQ(31, oms_tx_send_batch(q, iov, 40));
	ASSERT_EQ(63, oms_tx_pos(q));
	memcpy(snap, oms_tx_window_base(w), 4096);
	ASSERT_EQ(-EAGAIN, oms_tx_send_batch(q, iov, 40));
	ASSERT_EQ(0, memcmp(snap, oms_tx_window_base(w), 4096));
	ASSERT_EQ(0, oms_tx_credit(q, 64 + 5));		/* 6 chunks of room */
	ASSERT_EQ(3, oms_tx_send_batch(q, iov, 40));
	ASSERT_EQ(69, oms_tx_pos(q));
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
	free(snap);
}

/* Credit: a batch writes the prefix that fits; with no room, -EAGAIN
 * and not a byte written. */
TEST(credit_stops_the_batch_where_room_ends)
{
	static uint8_t msg[56];
	struct iovec iov[100];

	fill(msg, sizeof(msg), 3);
	for (unsigned i = 0; i < 100; i++)
		iov[i] = (struct iovec){ .iov_base = msg, .iov_len = 56 };
	for (unsigned ci = 0; ci < 3; ci++) {
		const unsigned cls = tx_classes[ci];

		struct oms_tx_queue_attr qa = { .cls = cls, .max_msg = 64 };
		struct oms_tx_window *w;
		struct oms_tx_queue *q;
		struct oms_tx_stats st;
		uint8_t *snap = malloc(4096);

		ASSERT_NE(NULL, snap);
		ASSERT_EQ(0, oms_tx_window_mem(4096, &w));	/* 64 chunks */
		ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
		ASSERT_EQ(64, oms_tx_send_batch(q, iov, 100));
		ASSERT_EQ(64, oms_tx_pos(q));
		memcpy(snap, oms_tx_window_base(w), 4096);
		ASSERT_EQ(-EAGAIN, oms_tx_send_batch(q, iov, 100));
		ASSERT_EQ(-EAGAIN, oms_tx_send(q, msg, 56));
		ASSERT_EQ(0, memcmp(snap, oms_tx_window_base(w), 4096));
		ASSERT_EQ(0, oms_tx_credit(q, 64 + 10));
		ASSERT_EQ(10, oms_tx_send_batch(q, iov, 20));
		ASSERT_EQ(74, oms_tx_pos(q));
		ASSERT_EQ(0, oms_tx_stats(q, &st));
		ASSERT_EQ(74, st.msgs);
		/* short, refused, refused (single), short */
		ASSERT_EQ(4, st.eagain);
		TH_LOG("%s: 100 asked, 64 written; then -EAGAIN; then 10 of 20 "
		       "after 10 chunks of credit", cls_name[ci]);
		oms_tx_queue_destroy(q);
		oms_tx_window_close(w);
		free(snap);
	}
}

/* Bad vectors: -EINVAL, and the window, position and counters unchanged
 * (the bad message may be the last: nothing before it is written). */
TEST(bad_batches_are_refused_whole)
{
	static uint8_t msg[MAXMSG];
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED,
					.max_msg = MAXMSG };
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct oms_tx_stats st0, st1;
	struct iovec iov[8];
	uint8_t *snap = malloc(RING);
	size_t maxp = oms_tx_payload_max(OMS_TX_SEQUENCED, MAXMSG);
	struct {
		const char *what;
		unsigned at;		/* which message is bad (8: none) */
		void *base;
		size_t len;
		unsigned n;
	} bad[] = {
		{ "NULL message first", 0, NULL, 56, 8 },
		{ "NULL message last", 7, NULL, 56, 8 },
		{ "empty message", 3, msg, 0, 8 },
		{ "message above the payload max", 7, msg, 0, 8 },
		{ "n = 0", 8, msg, 56, 0 },
		{ "n above INT_MAX", 8, msg, 56, (unsigned)INT_MAX + 1u },
	};

	bad[3].len = maxp + 1;
	ASSERT_NE(NULL, snap);
	fill(msg, sizeof(msg), 4);
	ASSERT_EQ(0, oms_tx_window_mem(RING, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	for (unsigned i = 0; i < 8; i++)
		iov[i] = (struct iovec){ .iov_base = msg, .iov_len = 56 };
	ASSERT_EQ(8, oms_tx_send_batch(q, iov, 8));	/* something there */
	memcpy(snap, oms_tx_window_base(w), RING);
	ASSERT_EQ(0, oms_tx_stats(q, &st0));
	for (unsigned b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		for (unsigned i = 0; i < 8; i++)
			iov[i] = (struct iovec){ .iov_base = msg, .iov_len = 56 };
		if (bad[b].at < 8)
			iov[bad[b].at] = (struct iovec){ .iov_base = bad[b].base,
							 .iov_len = bad[b].len };
		EXPECT_EQ(-EINVAL, oms_tx_send_batch(q, iov, bad[b].n)) {
			TH_LOG("%s", bad[b].what);
		}
		EXPECT_EQ(8, oms_tx_pos(q)) {
			TH_LOG("%s moved the position", bad[b].what);
		}
		EXPECT_EQ(0, memcmp(snap, oms_tx_window_base(w), RING)) {
			TH_LOG("%s wrote into the window", bad[b].what);
		}
		ASSERT_EQ(0, oms_tx_stats(q, &st1));
		EXPECT_TRUE(same_stats(&st0, &st1)) {
			TH_LOG("%s changed the counters", bad[b].what);
		}
	}
	EXPECT_EQ(-EINVAL, oms_tx_send_batch(NULL, iov, 8));
	EXPECT_EQ(-EINVAL, oms_tx_send_batch(q, NULL, 8));
	/* and the queue still works */
	ASSERT_EQ(8, oms_tx_send_batch(q, iov, 8));
	ASSERT_EQ(16, oms_tx_pos(q));
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
	free(snap);
}

TEST_HARNESS_MAIN
