// SPDX-License-Identifier: MIT
/*
 * The transmit receiver (consumer of a transmit window): corrupted, duplicate,
 * stale and out-of-window chunks are counted and dropped and change
 * nothing else; broken framing is counted; plain messages are checked
 * whole; the pcap it writes holds every delivered message; bad arguments
 * are refused with nothing counted.
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

struct log {
	unsigned n;
	uint32_t idx[256];
	size_t len[256];
};

static void on_msg(void *arg, unsigned thread, const void *msg, size_t len)
{
	struct log *l = arg;

	(void)thread;
	if (l->n < 256) {
		memcpy(&l->idx[l->n], msg, 4);
		l->len[l->n] = len;
	}
	l->n++;
}

static size_t make_msg(uint8_t *b, uint32_t idx, size_t len)
{
	memcpy(b, &idx, 4);
	for (size_t i = 4; i < len; i++)
		b[i] = (uint8_t)(idx ^ (i * 13));
	return len;
}

/* A window + sequenced queue with @nmsg one-chunk messages written. */
struct seqsrc {
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	const uint8_t *ring;
};

static void seqsrc_make(struct seqsrc *s, unsigned nmsg, size_t len,
			uint32_t flags)
{
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED, .flags = flags };
	uint8_t buf[512];

	if (oms_tx_window_mem(16384, &s->w) || oms_tx_queue_create(s->w, &qa, &s->q))
		abort();
	for (unsigned i = 0; i < nmsg; i++)
		if (oms_tx_send(s->q, buf, make_msg(buf, i, len)))
			abort();
	oms_tx_flush(s->q);
	s->ring = oms_tx_ring(s->q);
}

static void seqsrc_free(struct seqsrc *s)
{
	oms_tx_queue_destroy(s->q);
	oms_tx_window_close(s->w);
}

static struct oms_tx_nic *seq_nic(struct log *l, unsigned window)
{
	struct oms_tx_nic_attr na = {
		.format = OMS_TX_FMT_SEQ, .nthreads = 1, .rob_window = window,
		.deliver = on_msg, .arg = l,
	};
	struct oms_tx_nic *nic;

	return oms_tx_nic_create(&na, &nic) ? NULL : nic;
}

TEST(seq_every_header_bit_flip_is_corrupted)
{
	struct seqsrc s;
	struct log l = { 0 };
	struct oms_tx_nic *nic = seq_nic(&l, 0);
	struct oms_tx_nic_stats st;
	uint8_t c[64];

	ASSERT_NE(NULL, nic);
	seqsrc_make(&s, 1, 40, 0);
	for (unsigned b = 0; b < 64; b++) {
		memcpy(c, s.ring, 64);
		c[b / 8] ^= (uint8_t)(1u << (b % 8));
		ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c)) {
			TH_LOG("header bit %u flipped was accepted", b);
		}
	}
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(64, st.corrupted);
	ASSERT_EQ(64, st.chunks);
	ASSERT_EQ(0, st.accepted);
	ASSERT_EQ(0, l.n);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, s.ring));	/* the real one */
	ASSERT_EQ(1, l.n);
	ASSERT_EQ(40, l.len[0]);
	oms_tx_nic_destroy(nic);
	seqsrc_free(&s);
}

TEST(seq_payload_corruption_caught_with_payload_check)
{
	struct seqsrc s;
	struct log l = { 0 };
	struct oms_tx_nic *nic = seq_nic(&l, 0);
	struct oms_tx_nic_stats st;
	struct t_rng r;
	uint8_t c[64];

	ASSERT_NE(NULL, nic);
	t_rng_init(&r, t_seed(0xc0de));
	seqsrc_make(&s, 1, 56, OMS_TX_Q_PAYLOAD_CHECK);
	for (unsigned b = 64; b < 512; b++) {	/* every payload bit */
		memcpy(c, s.ring, 64);
		c[b / 8] ^= (uint8_t)(1u << (b % 8));
		ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c));
	}
	for (unsigned k = 0; k < 1000; k++) {	/* random multi-byte damage */
		memcpy(c, s.ring, 64);
		c[8 + t_rng_below(&r, 56)] ^= (uint8_t)(1 + t_rng_below(&r, 255));
		c[8 + t_rng_below(&r, 56)] ^= (uint8_t)(1 + t_rng_below(&r, 255));
		if (!memcmp(c, s.ring, 64))
			continue;
		ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c));
	}
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(0, st.accepted);
	ASSERT_EQ(0, l.n);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, s.ring));
	ASSERT_EQ(1, l.n);
	oms_tx_nic_destroy(nic);
	seqsrc_free(&s);
}

TEST(seq_duplicate_and_stale_dropped)
{
	struct seqsrc s;
	struct log l = { 0 };
	struct oms_tx_nic *nic = seq_nic(&l, 0);
	struct oms_tx_nic_stats st;

	ASSERT_NE(NULL, nic);
	seqsrc_make(&s, 3, 30, 0);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, s.ring + 64));		/* 1 */
	ASSERT_EQ(-EEXIST, oms_tx_nic_rx(nic, 0, 0, s.ring + 64));	/* 1 again */
	ASSERT_EQ(0, l.n);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, s.ring));			/* 0 */
	ASSERT_EQ(2, l.n);
	ASSERT_EQ(-ESTALE, oms_tx_nic_rx(nic, 0, 0, s.ring));		/* 0 again */
	ASSERT_EQ(-ESTALE, oms_tx_nic_rx(nic, 0, 0, s.ring + 64));
	ASSERT_EQ(2, l.n);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, s.ring + 128));
	ASSERT_EQ(3, l.n);
	for (unsigned i = 0; i < 3; i++) {
		ASSERT_EQ(i, l.idx[i]);
	}
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(1, st.duplicate);
	ASSERT_EQ(2, st.stale);
	ASSERT_EQ(3, st.accepted);
	ASSERT_EQ(6, st.chunks);
	ASSERT_EQ(3, st.msgs);
	ASSERT_EQ(90, st.payload_bytes);
	oms_tx_nic_destroy(nic);
	seqsrc_free(&s);
}

TEST(seq_out_of_window_dropped_then_resent)
{
	struct seqsrc s;
	struct log l = { 0 };
	struct oms_tx_nic *nic = seq_nic(&l, 16);
	struct oms_tx_nic_stats st;

	ASSERT_NE(NULL, nic);
	seqsrc_make(&s, 40, 20, 0);
	ASSERT_EQ(-ERANGE, oms_tx_nic_rx(nic, 0, 0, s.ring + 20 * 64));
	ASSERT_EQ(-ERANGE, oms_tx_nic_rx(nic, 0, 0, s.ring + 16 * 64));
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, s.ring + 15 * 64));	/* in window */
	ASSERT_EQ(0, l.n);
	for (unsigned i = 0; i < 40; i++) {
		int r = oms_tx_nic_rx(nic, 0, 0, s.ring + i * 64);

		ASSERT_EQ(i == 15 ? -ESTALE : 0, r);
	}
	ASSERT_EQ(40, l.n);
	for (unsigned i = 0; i < 40; i++) {
		ASSERT_EQ(i, l.idx[i]);
	}
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(2, st.out_of_window);
	ASSERT_EQ(1, st.stale);
	ASSERT_EQ(0, st.duplicate);
	ASSERT_EQ(0, st.corrupted);
	oms_tx_nic_destroy(nic);
	seqsrc_free(&s);
}

/* Chunks of a multi-chunk message forged out of frame: no SOM, two SOMs,
 * a thread the NIC does not serve. */
TEST(seq_framing_errors_counted)
{
	struct log l = { 0 };
	struct oms_tx_nic *nic = seq_nic(&l, 0);
	struct oms_tx_nic_stats st;
	uint8_t c[64], pay[56];
	uint64_t base = TXH_V;

	ASSERT_NE(NULL, nic);
	make_msg(pay, 7, 56);
	/* seq 0: middle chunk without SOM */
	tx_build_seq_chunk(c, base, 0, 0, 0, pay, 56);
	ASSERT_EQ(-EPROTO, oms_tx_nic_rx(nic, 0, 0, c));
	/* seq 1: SOM, seq 2: SOM again (the first message is cut) */
	tx_build_seq_chunk(c, base, 1, 1, 0, pay, 56);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, c));
	tx_build_seq_chunk(c, base, 2, 1, 0, pay, 56);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, c));
	tx_build_seq_chunk(c, base, 3, 0, 1, pay, 10);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, c));
	ASSERT_EQ(1, l.n);
	ASSERT_EQ(66, l.len[0]);
	/* a non-final chunk must be full: corrupted */
	tx_build_seq_chunk(c, base, 4, 1, 0, pay, 30);
	ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c));
	/* thread 5 on a one-thread NIC */
	tx_build_seq_chunk(c, base | (5ull << TXS_TID_SHIFT), 4, 1, 1, pay, 30);
	ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c));
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(2, st.malformed);
	ASSERT_EQ(2, st.corrupted);
	ASSERT_EQ(1, st.msgs);
	oms_tx_nic_destroy(nic);
}

/* ---- plain format ---- */

static struct oms_tx_nic *plain_nic(struct log *l, unsigned slot, uint64_t len)
{
	struct oms_tx_nic_attr na = {
		.format = OMS_TX_FMT_PLAIN, .nthreads = 1, .slot_chunks = slot,
		.region_len = len, .deliver = on_msg, .arg = l,
	};
	struct oms_tx_nic *nic;

	return oms_tx_nic_create(&na, &nic) ? NULL : nic;
}

/* A plain ring's drain sends each slot's message chunks, not the slot's
 * unused tail, and says how many it sent. */
TEST(plain_drain_returns_the_message_chunks_it_sent)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct log l = { 0 };
	struct oms_tx_nic *nic = plain_nic(&l, 4, 4096);
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_WEAK, .max_msg = 256 };
	uint8_t buf[248];
	const size_t lens[3] = { 20, 100, 248 };	/* 1, 2, 4 chunks */

	ASSERT_NE(NULL, nic);
	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	for (uint32_t i = 0; i < 3; i++) {
		ASSERT_EQ(0, oms_tx_send(q, buf, make_msg(buf, i, lens[i])));
	}
	oms_tx_flush(q);
	ASSERT_EQ(7, oms_tx_nic_drain(nic, 0, oms_tx_ring(q),
				      oms_tx_ring_chunks(q), 0, 12, NULL));
	ASSERT_EQ(3, l.n);
	for (uint32_t i = 0; i < 3; i++) {
		ASSERT_EQ(i, l.idx[i]);
		ASSERT_EQ(lens[i], l.len[i]);
	}
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

TEST(plain_chunks_in_any_order_make_one_whole_message)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct log l = { 0 };
	struct oms_tx_nic *nic = plain_nic(&l, 4, 4096);
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_WEAK, .max_msg = 256,
					.flags = OMS_TX_Q_PAYLOAD_CHECK };
	struct oms_tx_nic_stats st;
	uint8_t buf[248], c[64];
	const uint8_t *ring;

	ASSERT_NE(NULL, nic);
	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(0, oms_tx_send(q, buf, make_msg(buf, 9, 248)));
	ring = oms_tx_ring(q);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 192, ring + 192));
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 64, ring + 64));
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, ring));
	ASSERT_EQ(0, l.n);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 128, ring + 128));
	ASSERT_EQ(1, l.n);
	ASSERT_EQ(248, l.len[0]);
	ASSERT_EQ(9, l.idx[0]);
	/* the same message again with one payload byte damaged */
	memcpy(c, ring + 128, 64);
	c[17] ^= 0x40;
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, ring));
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 64, ring + 64));
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 192, ring + 192));
	ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 128, c));
	ASSERT_EQ(1, l.n);
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(1, st.corrupted);
	ASSERT_EQ(1, st.msgs);
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

TEST(plain_bad_header_dropped)
{
	struct log l = { 0 };
	struct oms_tx_nic *nic = plain_nic(&l, 1, 4096);
	struct oms_tx_nic_stats st;
	uint8_t c[64] = { 0 };
	uint64_t h;

	ASSERT_NE(NULL, nic);
	ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c));	/* all zero */
	h = TXH_V | TXP_MAGIC | 57;				/* > slot */
	memcpy(c, &h, 8);
	ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c));
	h = TXH_V | TXP_MAGIC | 20;				/* bad check */
	h |= ((tx_plain_check(h, 0) ^ 1) << TXP_CHECK_SHIFT);
	memcpy(c, &h, 8);
	ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c));
	h = TXH_V | TXP_MAGIC | 20;
	h |= tx_plain_check(h, 0) << TXP_CHECK_SHIFT;
	memcpy(c, &h, 8);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, c));
	ASSERT_EQ(1, l.n);
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(3, st.corrupted);
	oms_tx_nic_destroy(nic);
}

/*
 * A message whose header is dropped leaves its other chunks in the slot:
 * they must not complete the slot's next message.  Message 1 (2 chunks):
 * its second chunk arrives, then a damaged header; message 2 (2 chunks)
 * then arrives header first.  Before the fix the slot was "complete" at
 * message 2's header, with message 1's payload in it.
 */
TEST(plain_dropped_header_strands_no_chunk)
{
	struct oms_tx_window *w;
	struct oms_tx_queue *q;
	struct log l = { 0 };
	struct oms_tx_nic *nic = plain_nic(&l, 2, 4096);
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_WEAK, .max_msg = 128 };
	struct oms_tx_nic_stats st;
	uint8_t buf[120], one[128], c[64];
	const uint8_t *ring;

	ASSERT_NE(NULL, nic);
	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ring = oms_tx_ring(q);
	ASSERT_EQ(0, oms_tx_send(q, buf, make_msg(buf, 1, 100)));
	memcpy(one, ring, sizeof(one));			/* message 1 */
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 64, one + 64));
	memcpy(c, one, 64);
	memset(c, 0, 8);				/* no valid bit */
	ASSERT_EQ(-EBADMSG, oms_tx_nic_rx(nic, 0, 0, c));
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(1, st.malformed);			/* the stranded one */
	/* message 2 in the same slot: its header alone is not a message */
	oms_tx_queue_destroy(q);
	ASSERT_EQ(0, oms_tx_queue_create(w, &qa, &q));
	ASSERT_EQ(0, oms_tx_send(q, buf, make_msg(buf, 2, 100)));
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, ring));
	ASSERT_EQ(0, l.n);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 64, ring + 64));
	ASSERT_EQ(1, l.n);
	ASSERT_EQ(2, l.idx[0]);
	ASSERT_EQ(100, l.len[0]);
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(w);
}

/* ---- store and load requests (L40) ---- */

/* A hand-built sequenced chunk of thread 0 with op @op. */
static void op_chunk(uint8_t *c, unsigned op, uint16_t seq, int som, int eom,
		     const void *pay, size_t n)
{
	tx_build_seq_chunk(c, TXH_V | ((uint64_t)op << TXS_OP_SHIFT), seq, som,
			   eom, pay, n);
}

static void load_req(uint8_t *r, uint64_t addr, uint32_t len, uint32_t tag)
{
	memcpy(r, &addr, 8);
	memcpy(r + 8, &len, 4);
	memcpy(r + 12, &tag, 4);
}

TEST(seq_bad_store_and_load_requests_counted)
{
	struct oms_tx_nic_attr na = { .format = OMS_TX_FMT_SEQ, .nthreads = 1,
				      .mem_len = 256 };
	uint8_t c[64], req[16], pay[56] = { 0 };
	uint8_t *area = aligned_alloc(64, OMS_TX_RESP_SLOT);
	struct oms_tx_nic_stats st;
	struct oms_tx_nic *nic;
	uint16_t seq = 0;

	ASSERT_NE(NULL, area);
	memset(area, 0, OMS_TX_RESP_SLOT);
	ASSERT_EQ(0, oms_tx_nic_create(&na, &nic));
	/* a load with no response area: dropped, counted, nothing written */
	load_req(req, 0, 8, 0);
	op_chunk(c, OMS_TX_OP_LOAD, seq++, 1, 1, req, 16);
	ASSERT_EQ(-EPROTO, oms_tx_nic_rx(nic, 0, 0, c));
	op_chunk(c, OMS_TX_OP_LOAD_RELAXED, 0, 1, 1, req, 16);
	ASSERT_EQ(-EPROTO, oms_tx_nic_rx(nic, 0, 0, c));
	ASSERT_EQ(0, oms_tx_nic_set_resp(nic, 0, area, OMS_TX_RESP_SLOT));
	/* a load of 0 bytes, a request of the wrong size */
	load_req(req, 0, 0, 1);
	op_chunk(c, OMS_TX_OP_LOAD, seq++, 1, 1, req, 16);
	ASSERT_EQ(-EPROTO, oms_tx_nic_rx(nic, 0, 0, c));
	load_req(req, 0, 8, 1);
	op_chunk(c, OMS_TX_OP_LOAD, seq++, 1, 1, req, 12);
	ASSERT_EQ(-EPROTO, oms_tx_nic_rx(nic, 0, 0, c));
	/* a relaxed load that is not a whole one-chunk message */
	op_chunk(c, OMS_TX_OP_LOAD_RELAXED, 0, 1, 0, pay, 56);
	ASSERT_EQ(-EPROTO, oms_tx_nic_rx(nic, 0, 0, c));
	/* a store of no bytes; a message whose op changes midway */
	op_chunk(c, OMS_TX_OP_STORE, seq++, 1, 1, pay, 8);
	ASSERT_EQ(-EPROTO, oms_tx_nic_rx(nic, 0, 0, c));
	op_chunk(c, OMS_TX_OP_STORE, seq++, 1, 0, pay, 56);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, c));
	op_chunk(c, OMS_TX_OP_MSG, seq++, 0, 1, pay, 8);
	ASSERT_EQ(-EPROTO, oms_tx_nic_rx(nic, 0, 0, c));
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(4, st.unanswered);
	ASSERT_EQ(3, st.malformed);
	ASSERT_EQ(0, st.loads + st.stores + st.msgs + st.corrupted);
	for (unsigned i = 0; i < OMS_TX_RESP_SLOT; i++)
		ASSERT_EQ(0, area[i]);
	/* and a good one is answered after all that */
	memset(pay, 0x77, 16);
	memcpy(pay, &(uint64_t){ 40 }, 8);
	op_chunk(c, OMS_TX_OP_STORE, seq++, 1, 1, pay, 16);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, c));
	load_req(req, 40, 8, 5);
	op_chunk(c, OMS_TX_OP_LOAD, seq++, 1, 1, req, 16);
	ASSERT_EQ(0, oms_tx_nic_rx(nic, 0, 0, c));
	ASSERT_EQ((1ull << 63) | (8ull << 32) | 5, tx_load64(area));
	ASSERT_EQ(0x7777777777777777ull, tx_load64(area + 64));
	oms_tx_nic_destroy(nic);
	free(area);
}

/* ---- capture ---- */

TEST(pcap_holds_every_delivered_message)
{
	char path[] = "/tmp/oms_tx_pcap_XXXXXX";
	struct seqsrc s;
	struct oms_tx_nic *nic;
	struct oms_tx_nic_stats st;
	struct oms_tx_nic_attr na = { .format = OMS_TX_FMT_SEQ, .nthreads = 1 };
	uint8_t file[4096], want[512];
	uint32_t v32;
	uint16_t v16;
	size_t n, off = 24;
	FILE *f;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	close(fd);
	na.pcap_path = path;
	ASSERT_EQ(0, oms_tx_nic_create(&na, &nic));
	seqsrc_make(&s, 0, 0, 0);
	for (uint32_t i = 0; i < 3; i++) {
		size_t len = 60 + 50 * i;	/* 2, 2, 3 chunks */

		ASSERT_EQ(0, oms_tx_send(s.q, want, make_msg(want, i, len)));
	}
	oms_tx_flush(s.q);
	ASSERT_EQ(7, oms_tx_nic_drain(nic, 0, s.ring, oms_tx_ring_chunks(s.q), 0,
				      7, NULL));
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(3, st.msgs);
	ASSERT_EQ(0, st.pcap_errors);
	oms_tx_nic_destroy(nic);
	f = fopen(path, "rb");
	ASSERT_NE(NULL, f);
	n = fread(file, 1, sizeof(file), f);
	fclose(f);
	unlink(path);
	memcpy(&v32, file, 4);
	ASSERT_EQ(0xa1b2c3d4u, v32);
	memcpy(&v16, file + 4, 2);
	ASSERT_EQ(2, v16);
	memcpy(&v32, file + 20, 4);
	ASSERT_EQ(1, v32);			/* Ethernet */
	for (uint32_t i = 0; i < 3; i++) {
		size_t len = 60 + 50 * i;

		ASSERT_LE(off + 16 + len, n);
		memcpy(&v32, file + off + 8, 4);
		ASSERT_EQ(len, v32);
		make_msg(want, i, len);
		ASSERT_EQ(0, memcmp(file + off + 16, want, len));
		off += 16 + len;
	}
	ASSERT_EQ(n, off);
	seqsrc_free(&s);
}

/* ---- arguments ---- */

TEST(bad_arguments_refused_nothing_counted)
{
	struct log l = { 0 };
	struct oms_tx_nic *nic = plain_nic(&l, 2, 4096), *x;
	struct oms_tx_nic_stats st, st0;
	struct oms_tx_nic_attr na = { .format = OMS_TX_FMT_SEQ, .nthreads = 1 };
	uint8_t c[64] = { 0 }, ring[4096] = { 0 };
	struct oms_tx_fabric fab = { .reserved = 1 };

	ASSERT_NE(NULL, nic);
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st0));
	ASSERT_EQ(-EINVAL, oms_tx_nic_rx(NULL, 0, 0, c));
	ASSERT_EQ(-EINVAL, oms_tx_nic_rx(nic, 0, 0, NULL));
	ASSERT_EQ(-EINVAL, oms_tx_nic_rx(nic, 1, 0, c));	/* stream */
	ASSERT_EQ(-EINVAL, oms_tx_nic_rx(nic, 0, 8, c));	/* alignment */
	ASSERT_EQ(-EINVAL, oms_tx_nic_rx(nic, 0, 4096, c));	/* outside */
	ASSERT_EQ(-EINVAL, oms_tx_nic_drain(nic, 0, ring, 64, 0, 1, NULL));
	ASSERT_EQ(-EINVAL, oms_tx_nic_drain(nic, 0, ring, 32, 0, 2, NULL));
	ASSERT_EQ(-EINVAL, oms_tx_nic_drain(nic, 0, ring, 64, 4, 2, NULL));
	ASSERT_EQ(-EINVAL, oms_tx_nic_drain(nic, 0, ring, 64, 0, 66, NULL));
	ASSERT_EQ(-EINVAL, oms_tx_nic_drain(nic, 0, ring, 64, 0, 2, &fab));
	ASSERT_EQ(-EINVAL, oms_tx_nic_stats(nic, NULL));
	ASSERT_EQ(0, oms_tx_nic_stats(nic, &st));
	ASSERT_EQ(0, memcmp(&st, &st0, sizeof(st)));
	oms_tx_nic_destroy(nic);

	ASSERT_EQ(-EINVAL, oms_tx_nic_create(NULL, &x));
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, NULL));
	na.nthreads = 0;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.nthreads = 65;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.nthreads = 1;
	na.rob_window = 3;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.rob_window = 512;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.rob_window = 0;
	na.reserved[1] = 1;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.reserved[1] = 0;
	na.format = 7;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.format = OMS_TX_FMT_PLAIN;
	na.slot_chunks = 3;
	na.region_len = 4096;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.slot_chunks = 4;
	na.region_len = 4096 + 64;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.region_len = 128;
	ASSERT_EQ(-EINVAL, oms_tx_nic_create(&na, &x));
	na.region_len = 4096;
	na.pcap_path = "/nonexistent-dir/x.pcap";
	ASSERT_EQ(-ENOENT, oms_tx_nic_create(&na, &x));
	na.pcap_path = NULL;
	ASSERT_EQ(0, oms_tx_nic_create(&na, &x));
	oms_tx_nic_destroy(x);
	oms_tx_nic_destroy(NULL);
}

TEST_HARNESS_MAIN
