// SPDX-License-Identifier: MIT
/*
 * Transmit queue: the bytes each class writes (both formats, decoded field
 * by field), the AVX2 and portable paths writing identical windows, fences
 * counted per class, credits (-EAGAIN changes nothing), ring wraparound,
 * bad arguments, and the shared-file window read back by a consumer
 * through a second, read-only mapping.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"
#include "oms_tx.h"
#include "tx/tx_priv.h"

/* every class a queue takes (oms_order.h numbering) */
static const unsigned tx_classes[3] = {
	OMS_TX_WEAK, OMS_TX_STRONG, OMS_TX_SEQUENCED,
};

static void fill(uint8_t *b, size_t len, uint32_t salt)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)((i * 151) ^ (salt * 7) ^ (i >> 8));
}

static uint64_t ld(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

TEST(seq_chunk_layout)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED, .thread = 0xabc };
	uint8_t buf[130];
	const uint8_t *ring;

	fill(buf, sizeof(buf), 1);
	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(0, oms_tx_send(q, buf, 130));		/* 56 + 56 + 18 */
	ASSERT_EQ(0, oms_tx_send(q, buf, 5));
	ASSERT_EQ(4, oms_tx_pos(q));
	ring = oms_tx_ring(q);
	for (unsigned i = 0; i < 4; i++) {
		uint64_t h = ld(ring + i * 64);
		unsigned n = i < 2 ? 56 : i == 2 ? 18 : 5;

		ASSERT_EQ(i, h & 0xffff);			/* seq */
		ASSERT_EQ(0xabc, (h >> 16) & 0xfff);		/* thread */
		ASSERT_EQ(i == 0 || i == 3, !!(h & (1ull << 28)));	/* SOM */
		ASSERT_EQ(i >= 2, !!(h & (1ull << 29)));	/* EOM */
		ASSERT_EQ(0, !!(h & (1ull << 30)));		/* no C */
		ASSERT_EQ(1, !!(h & (1ull << 31)));		/* V */
		ASSERT_EQ(n, (h >> 32) & 0x3f);
		ASSERT_EQ(0, (h >> 38) & 3);
		ASSERT_EQ(tx_seq_check(h, 0), h >> 40);
		ASSERT_EQ(0, memcmp(ring + i * 64 + 8,
				    buf + (i < 3 ? i * 56 : 0), n));
		for (unsigned k = 8 + n; k < 64; k++) {
			ASSERT_EQ(0, ring[i * 64 + k]);	/* zero padding */
		}
	}
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

TEST(plain_message_layout)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q[2];
	uint8_t buf[300];

	fill(buf, sizeof(buf), 2);
	ASSERT_EQ(0, oms_tx_window_mem(8192, &w));
	for (unsigned k = 0; k < 2; k++) {
		struct oms_tx_queue_attr qa = {
			.cls = k ? OMS_TX_STRONG : OMS_TX_WEAK, .max_msg = 512,
			.offset = k * 4096, .length = 4096,
			.flags = k ? OMS_TX_Q_PAYLOAD_CHECK : 0,
		};
		const uint8_t *ring;
		uint64_t h;

		ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q[k]));
		ASSERT_EQ(8, oms_tx_slot_chunks(q[k]));
		ASSERT_EQ(0, oms_tx_send(q[k], buf, 300));	/* 308 B: 5 chunks */
		ASSERT_EQ(8, oms_tx_pos(q[k]));			/* one slot */
		ring = oms_tx_ring(q[k]);
		h = ld(ring);
		ASSERT_EQ(300, h & 0xffff);
		ASSERT_EQ(0x5a, (h >> 16) & 0xff);
		ASSERT_EQ(k, !!(h & (1ull << 24)));		/* F: strong */
		ASSERT_EQ(0, (h >> 25) & 0x1f);
		ASSERT_EQ(k, !!(h & (1ull << 30)));		/* C */
		ASSERT_EQ(1, !!(h & (1ull << 31)));
		ASSERT_EQ(tx_plain_check(h, k ? tx_payload_hash(buf, 300) : 0),
			  h >> 32);
		ASSERT_EQ(0, memcmp(ring + 8, buf, 300));
		for (unsigned i = 308; i < 320; i++) {
			ASSERT_EQ(0, ring[i]);
		}
		for (unsigned i = 320; i < 512; i++) {
			ASSERT_EQ(0, ring[i]);	/* rest of the slot untouched */
		}
	}
	for (unsigned k = 0; k < 2; k++)
		oms_tx_queue_destroy(q[k]);
	oms_tx_window_close(w);
}

/* Messages of whole chunks (what oms_tx_payload_max() gives) take a path
 * of their own on the AVX2 queue: the same bytes as the portable writer,
 * while the 16-bit sequence number wraps. */
TEST(whole_chunk_messages_identical_across_seq_wrap)
{
	struct oms_tx_window *w[2];
	struct oms_tx_queue *q[2];
	struct t_rng r;
	uint8_t buf[OMS_TX_MAX_MSG];
	uint64_t chunks = 0;

	t_rng_init(&r, t_seed(0xa3));
	fill(buf, sizeof(buf), 5);
	for (unsigned k = 0; k < 2; k++) {
		struct oms_tx_queue_attr qa = {
			.cls = OMS_TX_SEQUENCED, .max_msg = 1024, .thread = 9,
			.flags = OMS_TX_Q_NO_CREDIT | (k ? OMS_TX_Q_SCALAR : 0),
		};

		ASSERT_EQ(0, oms_tx_window_mem(8192, &w[k]));
		ASSERT_EQ(0, oms_tx_queue_create(w[k], &qa, &q[k]));
	}
	while (chunks < 70000) {
		size_t nch = 1 + t_rng_below(&r, 16);

		for (unsigned k = 0; k < 2; k++)
			ASSERT_EQ(0, oms_tx_send(q[k], buf, nch * 56));
		chunks += nch;
		ASSERT_EQ(0, memcmp(oms_tx_window_base(w[0]),
				    oms_tx_window_base(w[1]), 8192)) {
			TH_LOG("%zu chunks after %llu", nch,
			       (unsigned long long)chunks);
		}
	}
	for (unsigned k = 0; k < 2; k++) {
		oms_tx_queue_destroy(q[k]);
		oms_tx_window_close(w[k]);
	}
}


/* The statistics of a sequenced queue are the same whichever path wrote
 * its messages: one chunk, whole chunks, a short tail, a batch. */
TEST(seq_stats_same_on_every_path)
{
	static const size_t lens[] = { 56, 112, 57, 1, 896, 168, 56, 300 };
	struct oms_tx_window *w[2];
	struct oms_tx_queue *q[2];
	struct oms_tx_stats st[2];
	uint8_t buf[OMS_TX_MAX_MSG];
	struct iovec iov[3] = { { buf, 56 }, { buf, 112 }, { buf, 40 } };

	fill(buf, sizeof(buf), 6);
	for (unsigned k = 0; k < 2; k++) {
		struct oms_tx_queue_attr qa = {
			.cls = OMS_TX_SEQUENCED, .max_msg = 1024,
			.flags = OMS_TX_Q_NO_CREDIT | (k ? OMS_TX_Q_SCALAR : 0),
		};

		ASSERT_EQ(0, oms_tx_window_mem(8192, &w[k]));
		ASSERT_EQ(0, oms_tx_queue_create(w[k], &qa, &q[k]));
		for (unsigned r = 0; r < 3; r++) {
			for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
				ASSERT_EQ(0, oms_tx_send(q[k], buf, lens[i]));
			ASSERT_EQ(3, oms_tx_send_batch(q[k], iov, 3));
		}
		ASSERT_EQ(0, oms_tx_stats(q[k], &st[k]));
	}
	EXPECT_EQ(33, st[0].msgs);
	EXPECT_EQ(3 * (56 + 112 + 57 + 1 + 896 + 168 + 56 + 300 + 56 + 112 + 40),
		  st[0].payload_bytes);
	EXPECT_EQ(3 * (1 + 2 + 2 + 1 + 16 + 3 + 1 + 6 + 1 + 2 + 1),
		  st[0].chunks);
	EXPECT_EQ(0, memcmp(&st[0], &st[1], sizeof(st[0])));
	for (unsigned k = 0; k < 2; k++) {
		oms_tx_queue_destroy(q[k]);
		oms_tx_window_close(w[k]);
	}
}
/* The AVX2 path (when the CPU has it) and the portable one write the same
 * bytes for every length, class and check setting, across wraparound. */
TEST(avx2_and_portable_paths_identical)
{
	struct t_rng r;
	uint8_t buf[OMS_TX_MAX_MSG];

	t_rng_init(&r, t_seed(0xa2));
	fill(buf, sizeof(buf), 3);
	for (unsigned ci = 0; ci < 3; ci++) {
		const unsigned cls = tx_classes[ci];

		for (unsigned pc = 0; pc < 2; pc++) {
			struct oms_tx_window *w[2];
			struct oms_tx_queue *q[2];

			for (unsigned k = 0; k < 2; k++) {
				struct oms_tx_queue_attr qa = {
					.cls = cls, .max_msg = 1024, .thread = 77,
					.flags = OMS_TX_Q_NO_CREDIT |
						 (pc ? OMS_TX_Q_PAYLOAD_CHECK : 0) |
						 (k ? OMS_TX_Q_SCALAR : 0),
				};

				ASSERT_EQ(0, oms_tx_window_mem(8192, &w[k]));
				ASSERT_EQ(0, oms_tx_queue_create(w[k], &qa, &q[k]));
			}
			for (unsigned i = 0; i < 500; i++) {
				size_t max = oms_tx_payload_max(cls, 1024);
				size_t len = 1 + t_rng_below(&r, (uint32_t)max);
				size_t off = t_rng_below(&r, 64);

				for (unsigned k = 0; k < 2; k++) {
					ASSERT_EQ(0, oms_tx_send(q[k], buf + off, len));
				}
				ASSERT_EQ(0, memcmp(oms_tx_window_base(w[0]),
						    oms_tx_window_base(w[1]), 8192)) {
					TH_LOG("cls %u check %u message %u len %zu",
					       cls, pc, i, len);
				}
			}
			for (unsigned k = 0; k < 2; k++) {
				oms_tx_queue_destroy(q[k]);
				oms_tx_window_close(w[k]);
			}
		}
	}
}

TEST(fences_per_class)
{
	uint8_t buf[64] = { 1 };

	for (unsigned ci = 0; ci < 3; ci++) {
		const unsigned cls = tx_classes[ci];

		struct oms_tx_window *w;
		struct oms_tx_queue *q;
		struct oms_tx_stats st;
		struct oms_tx_queue_attr qa = { .cls = cls, .max_msg = 64,
						.flags = OMS_TX_Q_NO_CREDIT };

		ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
		ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
		for (unsigned i = 0; i < 100; i++) {
			ASSERT_EQ(0, oms_tx_send(q, buf, 40));
		}
		ASSERT_EQ(0, oms_tx_stats(q, &st));
		ASSERT_EQ(cls == OMS_TX_STRONG ? 100 : 0, st.fences);
		ASSERT_EQ(100, st.msgs);
		ASSERT_EQ(100, st.chunks);
		ASSERT_EQ(6400, st.wire_bytes);
		ASSERT_EQ(4000, st.payload_bytes);
		ASSERT_EQ(100, oms_tx_flush(q));
		ASSERT_EQ(100, oms_tx_published(q));
		ASSERT_EQ(0, oms_tx_stats(q, &st));
		ASSERT_EQ(cls == OMS_TX_STRONG ? 101 : 1, st.fences);
		oms_tx_queue_destroy(q);
		oms_tx_window_close(w);
	}
}

TEST(credits_refuse_without_writing)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct oms_tx_stats st;
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED, .length = 1024 };
	uint8_t buf[200], snap[4096];

	fill(buf, sizeof(buf), 4);
	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(16, oms_tx_ring_chunks(q));
	for (unsigned i = 0; i < 5; i++) {
		ASSERT_EQ(0, oms_tx_send(q, buf, 168));		/* 3 chunks */
	}
	memcpy(snap, oms_tx_window_base(w), sizeof(snap));
	ASSERT_EQ(-EAGAIN, oms_tx_send(q, buf, 168));		/* 15 + 3 > 16 */
	ASSERT_EQ(15, oms_tx_pos(q));
	ASSERT_EQ(0, memcmp(snap, oms_tx_window_base(w), sizeof(snap)));
	ASSERT_EQ(0, oms_tx_send(q, buf, 56));			/* 1 fits */
	ASSERT_EQ(0, oms_tx_credit(q, 10));			/* ignored: lower */
	ASSERT_EQ(-EAGAIN, oms_tx_send(q, buf, 1));
	ASSERT_EQ(0, oms_tx_credit(q, 16 + 3));
	ASSERT_EQ(0, oms_tx_send(q, buf, 168));			/* wraps to 0..2 */
	ASSERT_EQ(19, oms_tx_pos(q));
	ASSERT_EQ(16, ld(oms_tx_ring(q)) & 0xffff);		/* seq 16 at slot 0 */
	ASSERT_EQ(0, oms_tx_stats(q, &st));
	ASSERT_EQ(2, st.eagain);
	ASSERT_EQ(7, st.msgs);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

/* A sequenced message that wraps the ring end is read back whole. */
static void on_msg(void *arg, unsigned thread, const void *msg, size_t len)
{
	uint8_t *out = arg;

	(void)thread;
	memcpy(out, &len, sizeof(len));
	memcpy(out + sizeof(len), msg, len);
}

TEST(seq_wraparound_delivered_whole)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct oms_tx_nic *nic;
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED, .length = 1024,
					.max_msg = 1024 };
	uint8_t buf[400], got[1024];
	struct oms_tx_nic_attr na = { .format = OMS_TX_FMT_SEQ, .nthreads = 1,
				      .deliver = on_msg, .arg = got };
	size_t len;

	fill(buf, sizeof(buf), 5);
	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(0, oms_tx_nic_create(&na, &nic));
	for (unsigned i = 0; i < 13; i++) {
		ASSERT_EQ(0, oms_tx_send(q, buf, 56));
	}
	oms_tx_flush(q);
	ASSERT_EQ(13, oms_tx_nic_drain(nic, 0, oms_tx_ring(q), 16, 0, 13, NULL));
	ASSERT_EQ(0, oms_tx_credit(q, 13 + 16));
	ASSERT_EQ(0, oms_tx_send(q, buf, 400));		/* 8 chunks: 13..20 */
	oms_tx_flush(q);
	ASSERT_EQ(8, oms_tx_nic_drain(nic, 0, oms_tx_ring(q), 16, 13, 21, NULL));
	memcpy(&len, got, sizeof(len));
	ASSERT_EQ(400, len);
	ASSERT_EQ(0, memcmp(got + sizeof(len), buf, 400));
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

TEST(sizes)
{
	ASSERT_EQ(56, oms_tx_payload_max(OMS_TX_SEQUENCED, 64));
	ASSERT_EQ(56, oms_tx_payload_max(OMS_TX_WEAK, 64));
	ASSERT_EQ(7168, oms_tx_payload_max(OMS_TX_SEQUENCED, 8192));
	ASSERT_EQ(8184, oms_tx_payload_max(OMS_TX_STRONG, 8192));
	ASSERT_EQ(0, oms_tx_payload_max(OMS_TX_WEAK, 100));
	ASSERT_EQ(0, oms_tx_payload_max(3, 64));
	ASSERT_EQ(0, oms_tx_payload_max(OMS_TX_WEAK, OMS_TX_MAX_MSG + 64));
	ASSERT_EQ(64, oms_tx_wire_bytes(OMS_TX_SEQUENCED, 56));
	ASSERT_EQ(128, oms_tx_wire_bytes(OMS_TX_SEQUENCED, 57));
	ASSERT_EQ(64, oms_tx_wire_bytes(OMS_TX_WEAK, 56));
	ASSERT_EQ(128, oms_tx_wire_bytes(OMS_TX_WEAK, 57));
	ASSERT_EQ(0, oms_tx_wire_bytes(OMS_TX_WEAK, 0));
	ASSERT_EQ(0, oms_tx_wire_bytes(OMS_TX_WEAK, OMS_TX_MAX_MSG));
	/* no wrap in the rounding near SIZE_MAX */
	ASSERT_EQ(0, oms_tx_wire_bytes(OMS_TX_WEAK, SIZE_MAX));
	ASSERT_EQ(0, oms_tx_wire_bytes(OMS_TX_SEQUENCED, SIZE_MAX - 30));
	ASSERT_EQ(0, oms_tx_wire_bytes(OMS_TX_STRONG, SIZE_MAX - 62));
}

TEST(bad_arguments)
{
	struct oms_tx_window *w, *x;
	struct oms_tx_queue *q;
	struct oms_tx_stats st;
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_WEAK };
	uint8_t buf[300] = { 0 };

	ASSERT_EQ(-EINVAL, oms_tx_window_mem(100, &x));
	ASSERT_EQ(-EINVAL, oms_tx_window_mem(0, &x));
	ASSERT_EQ(-EINVAL, oms_tx_window_mem(4096, NULL));
	ASSERT_EQ(0, oms_tx_window_mem(8192, &w));
	ASSERT_EQ(OMS_TX_WIN_MEM, oms_tx_window_kind(w));
	ASSERT_EQ(8192, oms_tx_window_len(w));
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(NULL, &qa, &q));
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, NULL, &q));
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, NULL));
	/* not a transmit class: unordered, release, past the numbering */
	qa.cls = OMS_STORE_UNORDERED;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.cls = OMS_STORE_RELEASE;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.cls = OMS_STORE_SEQUENCED + 1;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(0, oms_tx_payload_max(OMS_STORE_UNORDERED, 64));
	ASSERT_EQ(0, oms_tx_wire_bytes(OMS_STORE_RELEASE, 8));
	qa.cls = OMS_TX_WEAK;
	qa.thread = OMS_TX_MAX_THREADS;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.thread = 0;
	qa.flags = 1u << 7;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.flags = 0;
	qa.reserved[0] = 1;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.reserved[0] = 0;
	qa.reserved0 = 1;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.reserved0 = 0;
	qa.max_msg = 100;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.max_msg = OMS_TX_MAX_MSG + 64;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.max_msg = 0;
	qa.offset = 32;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.offset = 8192;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.offset = 0;
	qa.length = 3 * 64;				/* not a power of two */
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.length = 16384;				/* beyond the window */
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.length = 128;				/* smaller than a slot */
	qa.max_msg = 256;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	/* sequenced too: a message longer than the ring would overwrite
	 * itself and never get credit */
	qa.cls = OMS_TX_SEQUENCED;
	qa.length = 256;
	qa.max_msg = 1024;
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(w, &qa, &q));
	qa.max_msg = 256;				/* fits exactly */
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	oms_tx_queue_destroy(q);
	qa.cls = OMS_TX_WEAK;
	qa.length = 0;
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(-EINVAL, oms_tx_send(q, NULL, 10));
	ASSERT_EQ(-EINVAL, oms_tx_send(q, buf, 0));
	ASSERT_EQ(-EINVAL, oms_tx_send(q, buf, 249));	/* 256 - 8 + 1 */
	ASSERT_EQ(-EINVAL, oms_tx_send(NULL, buf, 10));
	ASSERT_EQ(0, oms_tx_pos(q));
	ASSERT_EQ(0, oms_tx_stats(q, &st));
	ASSERT_EQ(0, st.msgs);
	ASSERT_EQ(0, st.eagain);
	ASSERT_EQ(0, oms_tx_send(q, buf, 248));
	ASSERT_EQ(-EINVAL, oms_tx_flush(NULL));
	ASSERT_EQ(-EINVAL, oms_tx_credit(NULL, 1));
	/* credit for chunks not yet written: refused, the credit as it was
	 * (4 written, a ring of 128: at most 132), so the ring stays full
	 * after 128 - 4 more chunks */
	ASSERT_EQ(-EINVAL, oms_tx_credit(q, UINT64_MAX));
	ASSERT_EQ(-EINVAL, oms_tx_credit(q, 4 + 128 + 1));
	for (int i = 0; i < 31; i++)
		ASSERT_EQ(0, oms_tx_send(q, buf, 248));
	ASSERT_EQ(-EAGAIN, oms_tx_send(q, buf, 248));
	ASSERT_EQ(0, oms_tx_credit(q, 4 + 128));
	ASSERT_EQ(0, oms_tx_send(q, buf, 248));
	ASSERT_EQ(-EINVAL, oms_tx_stats(q, NULL));
	oms_tx_queue_destroy(q);
	oms_tx_queue_destroy(NULL);
	oms_tx_window_close(w);
	oms_tx_window_close(NULL);
}

/* The shared-file window: a producer maps it read-write, a consumer (here
 * the same process, through its own read-only mapping, as the host reads
 * an ivshmem backing file) restores the messages. */
static unsigned file_msgs;

static void on_file_msg(void *arg, unsigned thread, const void *msg,
			size_t len)
{
	uint32_t idx;

	(void)arg;
	(void)thread;
	memcpy(&idx, msg, 4);
	if (idx == file_msgs && len == 100)
		file_msgs++;
}

TEST(file_window_read_by_a_second_mapping)
{
	char path[] = "/tmp/oms_tx_win_XXXXXX";
	struct oms_tx_window *w, *r, *x;
	struct oms_tx_queue *q, *q2;
	struct oms_tx_nic *nic;
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED };
	struct oms_tx_nic_attr na = { .format = OMS_TX_FMT_SEQ, .nthreads = 1,
				      .deliver = on_file_msg };
	struct oms_tx_fabric fab = { .seed = 5, .reorder = 16 };
	uint8_t buf[100];
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(-EINVAL, oms_tx_window_file(path, 100, OMS_TX_FILE_CREATE, &w));
	ASSERT_EQ(-EINVAL, oms_tx_window_file(path, 4096, OMS_TX_FILE_CREATE |
					      OMS_TX_FILE_RDONLY, &w));
	ASSERT_EQ(0, oms_tx_window_file(path, 16384, OMS_TX_FILE_CREATE, &w));
	ASSERT_EQ(OMS_TX_WIN_FILE, oms_tx_window_kind(w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	fill(buf, sizeof(buf), 6);
	for (uint32_t i = 0; i < 100; i++) {		/* 200 chunks */
		memcpy(buf, &i, 4);
		ASSERT_EQ(0, oms_tx_send(q, buf, 100));
	}
	ASSERT_EQ(200, oms_tx_flush(q));
	ASSERT_EQ(0, oms_tx_window_file(path, 0, OMS_TX_FILE_RDONLY, &r));
	ASSERT_EQ(16384, oms_tx_window_len(r));
	ASSERT_EQ(-EINVAL, oms_tx_queue_create(r, &qa, &q2));	/* read only */
	ASSERT_EQ(0, oms_tx_nic_create(&na, &nic));
	ASSERT_EQ(200, oms_tx_nic_drain(nic, 0, oms_tx_window_base(r), 256, 0,
					200, &fab));
	ASSERT_EQ(100, file_msgs);
	ASSERT_EQ(-EINVAL, oms_tx_window_file(path, 1 << 20, 0, &x));	/* too short */
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(r);
	oms_tx_window_close(w);
	unlink(path);
}

TEST(kmod_window_absent_is_a_clear_error)
{
	struct oms_tx_window *w;
	int r;

	r = oms_tx_window_kmod("/nonexistent/oms", &w);
	ASSERT_EQ(-ENOENT, r);
	ASSERT_EQ(-EINVAL, oms_tx_window_kmod(NULL, NULL));
	r = oms_tx_window_kmod(NULL, &w);
	if (r == 0) {
		/* a window is attached on this machine: it maps and queues */
		struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED,
						.length = 4096 };
		struct oms_tx_queue *q;

		ASSERT_EQ(OMS_TX_WIN_KMOD, oms_tx_window_kind(w));
		ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
		oms_tx_queue_destroy(q);
		oms_tx_window_close(w);
	} else {
		TH_LOG("no oms.ko window here: %s", strerror(-r));
		ASSERT_TRUE(r == -ENOENT || r == -ENODEV || r == -EACCES ||
			    r == -EPERM);
	}
}

TEST_HARNESS_MAIN
