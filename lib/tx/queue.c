// SPDX-License-Identifier: MIT
/*
 * Transmit queue: messages written inline into a write-combining window
 * as 64-byte chunks, with non-temporal stores, in one of three classes
 * (include/oms_tx.h).  The only ordering instruction on this path is
 * oms_barrier_wc_drain(): where the engine's write-combining channel
 * (engine/wc_chan.h, which oms.ko's ordered-store ioctl drives too) asks
 * for one - before every message of the strong class, so that every
 * earlier store of the thread, to this queue or any other, is visible
 * before the message's first byte (seed 000's strong store) - and in
 * oms_tx_flush() to publish a position.  A send cannot see what the
 * thread stored since the last one, so each starts the channel at
 * OMS_WC_CHAN_UNKNOWN.
 *
 * Here: a queue's set-up, its two write paths and its flush.  The two
 * write paths build the same bytes: an AVX2 one (32-byte streaming stores,
 * the header merged into the first vector) chosen at run time, and a
 * portable one that builds each chunk on the stack and stores it with
 * tx_wc_store64().  The sends that call them are lib/tx/send.c's; the
 * sequenced chunk's format, lib/tx/chunk.c's.
 */
#include <errno.h>
#include <stdlib.h>

#include "tx/tx_priv.h"
#include "tx/write_avx2.h"

#define TX_DEFAULT_MAX_MSG	256u

OMS_EXPORT size_t oms_tx_payload_max(unsigned cls, size_t wire)
{
	if (!oms_tx_class_valid(cls) || wire < OMS_TX_CHUNK ||
	    wire % OMS_TX_CHUNK || wire > OMS_TX_MAX_MSG)
		return 0;
	if (cls == OMS_TX_SEQUENCED)
		return wire / OMS_TX_CHUNK * OMS_TX_SEQ_PAYLOAD;
	return wire - OMS_TX_HDR;
}

OMS_EXPORT size_t oms_tx_wire_bytes(unsigned cls, size_t len)
{
	size_t w;

	/* a payload never exceeds its wire bytes; checking first also keeps
	 * the rounding in oms_tx_msg_chunks() from wrapping near SIZE_MAX */
	if (!oms_tx_class_valid(cls) || !len || len > OMS_TX_MAX_MSG)
		return 0;
	w = oms_tx_msg_chunks(cls, len) * OMS_TX_CHUNK;
	return w > OMS_TX_MAX_MSG ? 0 : w;
}

/* ---- writers (portable) ---- */

static inline uint64_t tx_seq_base(const struct oms_tx_queue *q)
{
	return q->hbase | q->op;
}

/* Header fields that do not change from message to message. */
static uint64_t tx_hbase(uint32_t cls, uint32_t thread, uint32_t flags)
{
	uint64_t h = TXH_V | ((flags & OMS_TX_Q_PAYLOAD_CHECK) ? TXH_C : 0);

	if (cls == OMS_TX_SEQUENCED)
		return h | ((uint64_t)thread << TXS_TID_SHIFT);
	return h | TXP_MAGIC | (cls == OMS_TX_STRONG ? TXP_F : 0);
}

static void tx_write_seq_portable(struct oms_tx_queue *q, const uint8_t *src,
				  size_t len, size_t nch)
{
	uint64_t base = tx_seq_base(q);
	uint8_t tmp[OMS_TX_CHUNK] __attribute__((aligned(64)));
	size_t off = 0;

	for (size_t i = 0; i < nch; i++, off += OMS_TX_SEQ_PAYLOAD) {
		size_t n = len - off < OMS_TX_SEQ_PAYLOAD ? len - off :
							   OMS_TX_SEQ_PAYLOAD;

		tx_build_seq_chunk(tmp, base, q->seq++, i == 0, i + 1 == nch,
				   src + off, n);
		tx_wc_store64(q->ring + (((q->pos + i) & q->mask) << 6), tmp);
	}
}

static void tx_write_plain_portable(struct oms_tx_queue *q, const uint8_t *src,
				    size_t len, size_t nch)
{
	uint8_t tmp[OMS_TX_CHUNK] __attribute__((aligned(64)));
	uint8_t *dst = q->ring + ((q->pos & q->mask) << 6);
	uint64_t h = tx_plain_hdr(q, src, len);

	for (size_t i = 0; i < nch; i++) {
		size_t lo = i ? i * OMS_TX_CHUNK - OMS_TX_HDR : 0;
		size_t at = i ? 0 : OMS_TX_HDR;
		size_t n = OMS_TX_CHUNK - at;

		if (n > len - lo)
			n = len - lo;
		memset(tmp, 0, sizeof(tmp));
		if (!i)
			memcpy(tmp, &h, 8);
		memcpy(tmp + at, src + lo, n);
		tx_wc_store64(dst + i * OMS_TX_CHUNK, tmp);
	}
}

/* ---- AVX2 paths: same bytes (lib/tx/write_avx2.h) ---- */
#if TX_HAVE_AVX2
TX_AVX2 static void tx_write_seq_avx2(struct oms_tx_queue *q,
				      const uint8_t *src, size_t len,
				      size_t nch)
{
	if (q->flags & OMS_TX_Q_PAYLOAD_CHECK) {
		tx_write_seq_portable(q, src, len, nch);
		return;
	}
	tx_seq_avx2_msg(q->ring, q->mask, q->pos, tx_seq_base(q), q->seq,
			src, len, nch);
	q->seq = (uint16_t)(q->seq + nch);
}

TX_AVX2 static void tx_write_plain_avx2(struct oms_tx_queue *q,
					const uint8_t *src, size_t len,
					size_t nch)
{
	tx_plain_avx2_msg(q->ring + ((q->pos & q->mask) << 6),
			  tx_plain_hdr(q, src, len), src, len, nch);
}
#endif

static int tx_cpu_avx2(void)
{
#if TX_HAVE_AVX2
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}

/* ---- queue ---- */

static int tx_is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/*
 * The shape @attr asks of a queue on @w, checked: the ring's chunks (a
 * power of two, inside the window), the longest message's wire bytes and,
 * for the plain classes, the slot a message takes (chunks, a power of
 * two).  0, -EINVAL, or -EOPNOTSUPP for a window queues cannot write.
 */
static int tx_queue_shape(const struct oms_tx_window *w,
			  const struct oms_tx_queue_attr *attr,
			  uint64_t *nchunks, uint32_t *max_msg, uint32_t *slot)
{
	uint64_t len;

	if (!oms_tx_class_valid(attr->cls) ||
	    attr->thread >= OMS_TX_MAX_THREADS ||
	    (attr->flags & ~OMS_TX_Q_FLAGS) || attr->reserved0 ||
	    attr->reserved[0] || !w->base)
		return -EINVAL;
	if (w->rdonly)
		return -EINVAL;
	if (w->kind == OMS_TX_WIN_MLX5)
		return -EOPNOTSUPP;
	*max_msg = attr->max_msg ? attr->max_msg : TX_DEFAULT_MAX_MSG;
	if (*max_msg % OMS_TX_CHUNK || *max_msg > OMS_TX_MAX_MSG)
		return -EINVAL;
	if (attr->offset % OMS_TX_CHUNK || attr->offset >= w->len)
		return -EINVAL;
	len = attr->length ? attr->length : w->len - attr->offset;
	if (len > w->len - attr->offset || len % OMS_TX_CHUNK)
		return -EINVAL;
	*nchunks = len / OMS_TX_CHUNK;
	if (!tx_is_pow2(*nchunks))
		return -EINVAL;
	*slot = 1;
	if (attr->cls != OMS_TX_SEQUENCED) {
		while (*slot < *max_msg / OMS_TX_CHUNK)
			*slot <<= 1;
		if (*slot > *nchunks)
			return -EINVAL;
	} else if (*max_msg / OMS_TX_CHUNK > *nchunks) {
		/* a message longer than the ring would write over itself,
		 * and never get credit */
		return -EINVAL;
	}
	return 0;
}

/* A new queue's fields, from its checked shape (tx_queue_shape()). */
static void tx_queue_fill(struct oms_tx_queue *q, struct oms_tx_window *w,
			  const struct oms_tx_queue_attr *attr,
			  uint64_t nchunks, uint32_t max_msg, uint32_t slot)
{
	memset(q, 0, sizeof(*q));
	q->ring = w->base + attr->offset;
	q->mask = nchunks - 1;
	q->cls = attr->cls;
	q->flags = attr->flags;
	q->thread = attr->thread;
	q->ld_timeout_ms = attr->load_timeout_ms ? attr->load_timeout_ms :
						    OMS_TX_LD_TIMEOUT_MS;
	q->slot_chunks = slot;
	q->hbase = tx_hbase(attr->cls, attr->thread, attr->flags);
	q->max_payload = (uint32_t)oms_tx_payload_max(attr->cls, max_msg);
	if (attr->cls != OMS_TX_SEQUENCED && q->max_payload > TXP_LEN_MASK)
		q->max_payload = TXP_LEN_MASK;
	q->credit = nchunks;
	/* no credit to wait for: the sends' one compare never reloads */
	q->credit_cached = attr->flags & OMS_TX_Q_NO_CREDIT ? UINT64_MAX :
							      nchunks;
	q->hone = q->hbase | TXS_SOM | TXS_EOM |
		  ((uint64_t)OMS_TX_SEQ_PAYLOAD << TXS_LEN_SHIFT);
	q->win = w;
}

/*
 * What a queue needs besides its ring: a sequenced queue's store buffer (a
 * store is one message: its device address, then its bytes) and, on an
 * ioctl window, the vector its messages are handed to the module in.
 * 0, or -ENOMEM with neither left allocated.
 */
static int tx_queue_buffers(struct oms_tx_queue *q,
			    const struct oms_tx_window *w, uint64_t ring_off)
{
	if (q->cls == OMS_TX_SEQUENCED) {
		q->stbuf = malloc(q->max_payload);
		if (!q->stbuf)
			return -ENOMEM;
	}
	if (w->kind == OMS_TX_WIN_KMOD_IOCTL && tx_iob_create(q, ring_off)) {
		free(q->stbuf);
		q->stbuf = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The queue's writer: AVX2 where the CPU has it and the caller did not ask
 * for the scalar one, and whether the sends' own loops serve it. */
static void tx_queue_pick_writer(struct oms_tx_queue *q)
{
	if (!(q->flags & OMS_TX_Q_SCALAR) && tx_cpu_avx2()) {
#if TX_HAVE_AVX2
		q->write = q->cls == OMS_TX_SEQUENCED ? tx_write_seq_avx2 :
							tx_write_plain_avx2;
		q->avx2 = 1;
#endif
	} else {
		q->write = q->cls == OMS_TX_SEQUENCED ? tx_write_seq_portable :
							tx_write_plain_portable;
	}
	if (q->avx2 && !q->iob)
		q->fast = q->cls != OMS_TX_SEQUENCED ? TX_FAST_PLAIN :
			  !(q->flags & OMS_TX_Q_PAYLOAD_CHECK) ? TX_FAST_SEQ :
								 TX_FAST_NONE;
}

OMS_EXPORT int oms_tx_queue_create(struct oms_tx_window *w,
				   const struct oms_tx_queue_attr *attr,
				   struct oms_tx_queue **out)
{
	uint64_t nchunks;
	uint32_t max_msg, slot;
	struct oms_tx_queue *q;
	void *mem;
	int r;

	if (!w || !attr || !out)
		return -EINVAL;
	r = tx_queue_shape(w, attr, &nchunks, &max_msg, &slot);
	if (r)
		return r;
	if (posix_memalign(&mem, 64, sizeof(*q)))
		return -ENOMEM;
	q = mem;
	tx_queue_fill(q, w, attr, nchunks, max_msg, slot);
	r = tx_queue_buffers(q, w, attr->offset);
	if (r) {
		free(q);
		return r;
	}
	tx_queue_pick_writer(q);
	*out = q;
	return 0;
}

OMS_EXPORT void oms_tx_queue_destroy(struct oms_tx_queue *q)
{
	if (!q)
		return;
	tx_iob_destroy(q);
	free(q->stbuf);
	free(q);
}

OMS_EXPORT int64_t oms_tx_flush(struct oms_tx_queue *q)
{
	int r;

	if (!q)
		return -EINVAL;
	if (q->iob) {
		r = tx_iob_submit(q);
		if (r)
			return r;
	} else {
		oms_barrier_wc_drain();
		q->st.fences++;
	}
	__atomic_store_n(&q->published, q->pos, __ATOMIC_RELEASE);
	return (int64_t)q->pos;
}

OMS_EXPORT uint64_t oms_tx_published(const struct oms_tx_queue *q)
{
	return q ? __atomic_load_n(&q->published, __ATOMIC_ACQUIRE) : 0;
}

OMS_EXPORT uint64_t oms_tx_pos(const struct oms_tx_queue *q)
{
	return q ? q->pos : 0;
}

OMS_EXPORT int oms_tx_credit(struct oms_tx_queue *q, uint64_t upto)
{
	uint64_t cur, pos;

	if (!q)
		return -EINVAL;
	/*
	 * The consumer cannot have consumed a chunk not yet written: credit
	 * beyond the producer's position plus the ring would let it write
	 * over chunks nobody read.  The position only grows, and a consumer
	 * that read oms_tx_published() sees at least that much of it.
	 */
	pos = __atomic_load_n(&q->pos, __ATOMIC_RELAXED);
	if (upto > pos + q->mask + 1)
		return -EINVAL;
	cur = __atomic_load_n(&q->credit, __ATOMIC_RELAXED);
	while (upto > cur &&
	       !__atomic_compare_exchange_n(&q->credit, &cur, upto, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	return 0;
}

OMS_EXPORT uint64_t oms_tx_ring_chunks(const struct oms_tx_queue *q)
{
	return q ? q->mask + 1 : 0;
}

OMS_EXPORT uint32_t oms_tx_slot_chunks(const struct oms_tx_queue *q)
{
	return q ? q->slot_chunks : 0;
}

OMS_EXPORT const void *oms_tx_ring(const struct oms_tx_queue *q)
{
	return q ? q->ring : NULL;
}

OMS_EXPORT int oms_tx_stats(const struct oms_tx_queue *q,
			    struct oms_tx_stats *st)
{
	if (!q || !st)
		return -EINVAL;
	*st = q->st;
	/* a sequenced queue moves by its chunks; the ones the sends did not
	 * count are messages of whole chunks, more_chunks past their first
	 * (send.c) */
	if (q->cls == OMS_TX_SEQUENCED) {
		uint64_t whole = q->pos - q->st.chunks;

		st->msgs += whole - q->more_chunks;
		st->payload_bytes += whole * OMS_TX_SEQ_PAYLOAD;
		st->chunks = q->pos;
	}
	st->wire_bytes = st->chunks * OMS_TX_CHUNK;
	st->syscalls = q->iob ? q->iob->calls : 0;
	return 0;
}
