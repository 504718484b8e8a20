// SPDX-License-Identifier: MIT
/*
 * The sends of a transmit queue: oms_tx_send(), one message, and
 * oms_tx_send_batch(), many per call, as io_uring takes many submissions
 * per system call.  Both end in the queue's writer (lib/tx/queue.c) or in
 * the AVX2 loops (lib/tx/write_avx2.h).
 *
 * What a one-message call pays besides its stores (docs/mmio-tx.md,
 * "Where a small message's time goes"): the argument checks, the credit
 * check, the call through the queue's writer, and the queue's position,
 * sequence number and statistics loaded from and stored back to memory.
 * At 64 bytes that is about three times the stores.  Here the checks run
 * once over the vector before anything is written, position, sequence
 * number and credit limit live in registers across the batch, the writer
 * is inlined into the loop, and the statistics are added once at the end.
 *
 * A vector whose messages all have one length (the common case) has a
 * loop of its own: chunk count and credit worked out once, and for
 * 56-byte messages nothing in the loop but the chunk's stores.
 *
 * The fast paths cover the queues whose writer is AVX2 on a mapped
 * window: the plain classes, and the sequenced class without payload
 * check.  Every other queue (portable writer, payload-checked sequenced
 * queue, the ioctl window) sends the vector through the one-message path,
 * with the same result; on the ioctl window the module still gets one
 * call per vector of up to OMS_STORE_MAX_OPS messages.
 *
 * On those queues a one-message call does not go through the queue's
 * writer either: a 56-byte message (one full chunk, in every class)
 * has a path with no loop (tx_send_seq_chunk, tx_send_plain_chunk), a
 * sequenced message of whole chunks one loop with nothing else in it
 * (tx_send_seq_whole), and tx_send_seq_msg and tx_send_plain_msg write
 * any other size with the batch's inlined writers.  A short last chunk,
 * the only one built on the stack, is written out of line
 * (write_avx2.h), so the common paths keep an empty frame.
 *
 * The sequenced messages of whole chunks count almost nothing in the
 * statistics: a sequenced queue's position moves by exactly its chunks,
 * so the chunks no other send counted are theirs, 56 payload bytes each,
 * and only the chunks past each one's first are counted (more_chunks)
 * to tell how many messages they were; oms_tx_stats() adds them up.  The
 * two read-modify-writes of the statistics they save are a tenth of a
 * 64-byte message's time.
 */
#include <errno.h>
#include <limits.h>

#include "tx/tx_priv.h"
#include "tx/write_avx2.h"

int tx_send_op(struct oms_tx_queue *q, uint64_t op, const void *buf,
	       size_t len)
{
	size_t nch, adv;
	uint16_t seq = q->seq;
	uint64_t pos = q->pos;
	int r;

	nch = len <= OMS_TX_SEQ_PAYLOAD ? 1 : oms_tx_msg_chunks(q->cls, len);
	adv = q->cls == OMS_TX_SEQUENCED ? nch : q->slot_chunks;
	if (!(q->flags & OMS_TX_Q_NO_CREDIT) && q->pos + adv > q->credit_cached) {
		q->credit_cached = __atomic_load_n(&q->credit, __ATOMIC_ACQUIRE);
		if (q->pos + adv > q->credit_cached) {
			q->st.eagain++;
			return -EAGAIN;
		}
	}
	if (q->iob) {
		r = tx_iob_room(q, nch, adv);
		if (r)
			return r;
	}
	q->op = op << TXS_OP_SHIFT;
	if (!q->iob) {
		struct oms_wc_chan wc = OMS_WC_CHAN_UNKNOWN;

		/* a weak message must not pay a store to q->st here */
		if (oms_wc_chan_store(&wc, q->cls)) {
			oms_barrier_wc_drain();
			q->st.fences++;
		}
	}
	q->write(q, buf, len, nch);
	q->op = 0;
	/* a relaxed load has no place in program order: its sequence field
	 * is ignored and must not leave a gap the reorder buffer waits on */
	if (op == OMS_TX_OP_LOAD_RELAXED)
		q->seq = seq;
	q->pos += adv;
	q->st.msgs++;
	q->st.chunks += nch;
	q->st.payload_bytes += len;
	/* the module stores it and fences before it (the op's class) */
	if (q->iob)
		tx_iob_add(q, pos, nch, adv);
	return 0;
}

/* Room up to which the queue may write; reloads the consumer's credit
 * when @need goes past what was last seen. */
static inline uint64_t tx_batch_limit(struct oms_tx_queue *q, uint64_t need)
{
	/* a queue without credit has UINT64_MAX here (queue.c) */
	if (need > q->credit_cached)
		q->credit_cached = __atomic_load_n(&q->credit, __ATOMIC_ACQUIRE);
	return q->credit_cached;
}

/* The batch stopped after @sent messages for want of credit (@short_) or
 * at the end: add up, and say what the caller gets. */
static int tx_batch_end(struct oms_tx_queue *q, unsigned sent,
			uint64_t chunks, uint64_t bytes, int short_)
{
	q->st.msgs += sent;
	q->st.chunks += chunks;
	q->st.payload_bytes += bytes;
	if (short_)
		q->st.eagain++;
	return sent ? (int)sent : -EAGAIN;
}

#if TX_HAVE_AVX2
TX_AVX2 static int tx_batch_seq_avx2(struct oms_tx_queue *q,
				     const struct iovec *m, unsigned n)
{
	/* locals, not q->: the stores below could alias the queue as far as
	 * the compiler knows, so fields would be reloaded every message */
	uint8_t *const ring = q->ring;
	const uint64_t mask = q->mask, base = q->hbase, start = q->pos;
	const uint64_t one = base | TXS_SOM | TXS_EOM |
			     ((uint64_t)OMS_TX_SEQ_PAYLOAD << TXS_LEN_SHIFT);
	uint64_t pos = start, bytes = 0, lim = tx_batch_limit(q, 0);
	uint16_t seq = q->seq;
	unsigned i;

	for (i = 0; i < n; i++) {
		const uint8_t *src = m[i].iov_base;
		size_t len = m[i].iov_len, nch;

		if (len == OMS_TX_SEQ_PAYLOAD) {
			/* one full chunk: the common small message */
			if (pos + 1 > lim) {
				lim = tx_batch_limit(q, pos + 1);
				if (pos + 1 > lim)
					break;
			}
			tx_avx2_hdr_chunk(ring + ((pos & mask) << 6),
					  tx_seq_seal(one | seq), src);
			pos++;
			seq++;
			bytes += OMS_TX_SEQ_PAYLOAD;
			continue;
		}
		/* a division by a constant: a multiply and a shift */
		nch = (len + OMS_TX_SEQ_PAYLOAD - 1) / OMS_TX_SEQ_PAYLOAD;
		if (pos + nch > lim) {
			lim = tx_batch_limit(q, pos + nch);
			if (pos + nch > lim)
				break;
		}
		tx_seq_avx2_msg(ring, mask, pos, base, seq, src, len, nch);
		pos += nch;
		seq = (uint16_t)(seq + nch);
		bytes += len;
	}
	q->pos = pos;
	q->seq = seq;
	return tx_batch_end(q, i, pos - start, bytes, i < n);
}

/*
 * Every message of the vector the same length, the common case: the
 * chunk count worked out and the credit looked at once for the whole
 * vector, and a 56-byte message (one full chunk) with nothing else in
 * its loop.
 */
TX_AVX2 static int tx_batch_seq_same_avx2(struct oms_tx_queue *q,
					  const struct iovec *m, unsigned n)
{
	uint8_t *const ring = q->ring;
	const uint64_t mask = q->mask, base = q->hbase, start = q->pos;
	const size_t len = m[0].iov_len;
	const size_t nch = (len + OMS_TX_SEQ_PAYLOAD - 1) / OMS_TX_SEQ_PAYLOAD;
	const uint64_t lim = tx_batch_limit(q, start + (uint64_t)n * nch);
	uint64_t pos = start;
	uint16_t seq = q->seq;
	unsigned i, k = n;

	if (start + (uint64_t)n * nch > lim)
		k = lim > start ? (unsigned)((lim - start) / nch) : 0;
	if (nch == 1 && len == OMS_TX_SEQ_PAYLOAD) {
		const uint64_t one = base | TXS_SOM | TXS_EOM |
				     ((uint64_t)OMS_TX_SEQ_PAYLOAD <<
				      TXS_LEN_SHIFT);

		for (i = 0; i < k; i++, pos++, seq++)
			tx_avx2_hdr_chunk(ring + ((pos & mask) << 6),
					  tx_seq_seal(one | seq),
					  m[i].iov_base);
	} else {
		for (i = 0; i < k; i++, pos += nch) {
			tx_seq_avx2_msg(ring, mask, pos, base, seq,
					m[i].iov_base, len, nch);
			seq = (uint16_t)(seq + nch);
		}
	}
	q->pos = pos;
	q->seq = seq;
	return tx_batch_end(q, k, pos - start, (uint64_t)k * len, k < n);
}

TX_AVX2 static int tx_batch_plain_avx2(struct oms_tx_queue *q,
				       const struct iovec *m, unsigned n)
{
	uint8_t *const ring = q->ring;
	const uint64_t mask = q->mask, adv = q->slot_chunks;
	const unsigned cls = q->cls;
	struct oms_wc_chan wc = OMS_WC_CHAN_UNKNOWN;
	uint64_t pos = q->pos, chunks = 0, bytes = 0;
	uint64_t lim = tx_batch_limit(q, 0);
	unsigned i;

	for (i = 0; i < n; i++) {
		const uint8_t *src = m[i].iov_base;
		size_t len = m[i].iov_len;
		size_t nch = (len + OMS_TX_HDR + OMS_TX_CHUNK - 1) / OMS_TX_CHUNK;

		if (pos + adv > lim) {
			lim = tx_batch_limit(q, pos + adv);
			if (pos + adv > lim)
				break;
		}
		/* strong: every earlier store is visible before the
		 * message's first one, in a batch as in single calls */
		if (oms_wc_chan_store(&wc, cls))
			oms_barrier_wc_drain();
		tx_plain_avx2_msg(ring + ((pos & mask) << 6),
				  tx_plain_hdr(q, src, len), src, len, nch);
		pos += adv;
		chunks += nch;
		bytes += len;
	}
	q->pos = pos;
	q->st.fences += wc.drains;
	return tx_batch_end(q, i, chunks, bytes, i < n);
}
#endif

/* Anything else: one message at a time through the common path. */
static int tx_batch_each(struct oms_tx_queue *q, const struct iovec *m,
			 unsigned n)
{
	unsigned i;
	int r = 0;

	for (i = 0; i < n; i++) {
		r = tx_send_op(q, OMS_TX_OP_MSG, m[i].iov_base, m[i].iov_len);
		if (r)
			break;
	}
	return i ? (int)i : r;
}

#if TX_HAVE_AVX2
/* One full chunk of the sequenced class: no loop, no stack buffer. */
TX_AVX2 static int tx_send_seq_chunk(struct oms_tx_queue *q, const void *buf)
{
	uint64_t pos = q->pos;

	if (pos + 1 > tx_batch_limit(q, pos + 1)) {
		q->st.eagain++;
		return -EAGAIN;
	}
	tx_avx2_hdr_chunk(q->ring + ((pos & q->mask) << 6),
			  tx_seq_seal(q->hone | q->seq), buf);
	/* counted by the position alone (oms_tx_stats()) */
	q->pos = pos + 1;
	q->seq++;
	return 0;
}

/* Any other sequenced message: the batch loop's writer, for one. */
TX_AVX2 static int tx_send_seq_msg(struct oms_tx_queue *q, const void *buf,
				   size_t len)
{
	uint64_t pos = q->pos;
	size_t nch = (len + OMS_TX_SEQ_PAYLOAD - 1) / OMS_TX_SEQ_PAYLOAD;

	if (pos + nch > tx_batch_limit(q, pos + nch)) {
		q->st.eagain++;
		return -EAGAIN;
	}
	tx_seq_avx2_msg(q->ring, q->mask, pos, q->hbase, q->seq, buf, len,
			nch);
	q->pos = pos + nch;
	q->seq = (uint16_t)(q->seq + nch);
	q->st.msgs++;
	q->st.chunks += nch;
	q->st.payload_bytes += len;
	return 0;
}

/*
 * A sequenced message of two or more full chunks (a multiple of 56
 * bytes: what oms_tx_payload_max() gives for a wire size).  The queue's
 * state is stored first, so that nothing but the loop's own values is
 * live across the stores.
 */
TX_AVX2 static int tx_send_seq_whole(struct oms_tx_queue *q,
				     const uint8_t *src, size_t nch)
{
	uint64_t pos = q->pos, end = pos + nch, seq = q->seq;
	uint64_t h0 = q->hone & ~(TXS_SOM | TXS_EOM);
	uint8_t *ring = q->ring;
	uint64_t mask = q->mask;

	if (end > tx_batch_limit(q, end)) {
		q->st.eagain++;
		return -EAGAIN;
	}
	q->pos = end;
	q->seq = (uint16_t)(seq + nch);
	q->more_chunks += nch - 1;
	tx_avx2_hdr_chunk(ring + ((pos & mask) << 6),
			  tx_seq_seal(h0 | TXS_SOM | seq), src);
	while (++pos < end) {
		uint64_t h = h0 | (uint16_t)++seq |
			     (pos + 1 == end ? TXS_EOM : 0);

		src += OMS_TX_SEQ_PAYLOAD;
		tx_avx2_hdr_chunk(ring + ((pos & mask) << 6), tx_seq_seal(h),
				  src);
	}
	return 0;
}

/*
 * Before a plain message's stores: the credit for its slot, then the
 * strong class's fence (every earlier store visible before its first).
 * 0, or -EAGAIN with nothing done.
 */
static inline int tx_plain_begin(struct oms_tx_queue *q, uint64_t pos,
				 uint64_t adv)
{
	struct oms_wc_chan wc = OMS_WC_CHAN_UNKNOWN;

	if (pos + adv > tx_batch_limit(q, pos + adv)) {
		q->st.eagain++;
		return -EAGAIN;
	}
	if (oms_wc_chan_store(&wc, q->cls)) {
		oms_barrier_wc_drain();
		q->st.fences++;
	}
	return 0;
}

/* One full chunk of a plain class: no loop, no stack buffer. */
TX_AVX2 static int tx_send_plain_chunk(struct oms_tx_queue *q,
				       const void *buf)
{
	uint64_t pos = q->pos, adv = q->slot_chunks;
	const size_t len = OMS_TX_CHUNK - OMS_TX_HDR;

	if (tx_plain_begin(q, pos, adv))
		return -EAGAIN;
	tx_avx2_hdr_chunk(q->ring + ((pos & q->mask) << 6),
			  tx_plain_hdr(q, buf, len), buf);
	q->pos = pos + adv;
	q->st.msgs++;
	q->st.chunks++;
	q->st.payload_bytes += len;
	return 0;
}

/* Any other message of a plain class. */
TX_AVX2 static __attribute__((noinline)) int
tx_send_plain_msg(struct oms_tx_queue *q, const void *buf, size_t len)
{
	uint64_t pos = q->pos, adv = q->slot_chunks;
	size_t nch = (len + OMS_TX_HDR + OMS_TX_CHUNK - 1) / OMS_TX_CHUNK;

	if (tx_plain_begin(q, pos, adv))
		return -EAGAIN;
	tx_plain_avx2_msg(q->ring + ((pos & q->mask) << 6),
			  tx_plain_hdr(q, buf, len), buf, len, nch);
	q->pos = pos + adv;
	q->st.msgs++;
	q->st.chunks += nch;
	q->st.payload_bytes += len;
	return 0;
}
#endif

/* oms_tx_send() on a queue that send.c's AVX2 paths serve (->fast). */
static inline __attribute__((always_inline)) int
tx_send_fast(struct oms_tx_queue *q, const void *buf, size_t len)
{
#if TX_HAVE_AVX2
	/* 56 bytes fill one chunk in every class */
	if (q->fast == TX_FAST_SEQ) {
		if (len == OMS_TX_SEQ_PAYLOAD)
			return tx_send_seq_chunk(q, buf);
		if (len % OMS_TX_SEQ_PAYLOAD == 0)
			return tx_send_seq_whole(q, buf,
						 len / OMS_TX_SEQ_PAYLOAD);
		return tx_send_seq_msg(q, buf, len);
	}
	return len == OMS_TX_SEQ_PAYLOAD ? tx_send_plain_chunk(q, buf) :
					   tx_send_plain_msg(q, buf, len);
#else
	return tx_send_op(q, OMS_TX_OP_MSG, buf, len);
#endif
}

OMS_EXPORT int oms_tx_send(struct oms_tx_queue *q, const void *buf,
			   size_t len)
{
	/* len - 1 wraps for 0 */
	if (!q || !buf || len - 1 >= q->max_payload)
		return -EINVAL;
#if TX_HAVE_AVX2
	/*
	 * The one-chunk sequenced message first and straight through: at 64
	 * bytes a message is a dozen cycles, and each taken branch of the
	 * general dispatch (tx_send_fast) cost about a twentieth of them.
	 */
	if (__builtin_expect(q->fast == TX_FAST_SEQ, 1) &&
	    __builtin_expect(len == OMS_TX_SEQ_PAYLOAD, 1))
		return tx_send_seq_chunk(q, buf);
#endif
	if (q->fast)
		return tx_send_fast(q, buf, len);
	return tx_send_op(q, OMS_TX_OP_MSG, buf, len);
}

OMS_EXPORT int oms_tx_send_batch(struct oms_tx_queue *q,
				 const struct iovec *msgs, unsigned n)
{
	int bad = 0, same = 1;

	if (!q || !msgs || !n || n > INT_MAX)
		return -EINVAL;
	/* all or nothing for bad input: checked before the first store,
	 * without a branch per message (len - 1 wraps for 0) */
	for (unsigned i = 0; i < n; i++) {
		bad |= !msgs[i].iov_base |
		       (msgs[i].iov_len - 1 >= q->max_payload);
		same &= msgs[i].iov_len == msgs[0].iov_len;
	}
	if (bad)
		return -EINVAL;
#if TX_HAVE_AVX2
	if (q->fast == TX_FAST_PLAIN)
		return tx_batch_plain_avx2(q, msgs, n);
	if (q->fast == TX_FAST_SEQ)
		return same ? tx_batch_seq_same_avx2(q, msgs, n) :
			      tx_batch_seq_avx2(q, msgs, n);
#endif
	(void)same;
	return tx_batch_each(q, msgs, n);
}
