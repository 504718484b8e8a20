/* SPDX-License-Identifier: MIT */
/*
 * Private part of the transmit path: the chunk formats
 * (bit layout in include/oms_tx.h), their check codes, the window and
 * queue structs, and the one primitive that stores a chunk into a window.
 */
#ifndef OMS_TX_PRIV_H
#define OMS_TX_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oms_tx.h"
#include "oms_uapi.h"
#include "engine/wc_chan.h"
#include "util/barrier.h"
#include "util/export.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif


/* ---- header bits, both formats ---- */
#define TXH_C		(1ull << 30)	/* check covers the payload */
#define TXH_V		(1ull << 31)	/* valid: never zero */

/* sequenced chunk header */
#define TXS_SEQ_MASK	0xffffull
#define TXS_TID_SHIFT	16
#define TXS_TID_MASK	0xfffull
#define TXS_SOM		(1ull << 28)
#define TXS_EOM		(1ull << 29)
#define TXS_LEN_SHIFT	32
#define TXS_LEN_MASK	0x3full
#define TXS_OP_SHIFT	38		/* enum oms_tx_op */
#define TXS_OP_MASK	3ull
#define TXS_CHECK_SHIFT	40
#define TXS_FIELDS_MASK	((1ull << 40) - 1)

/* plain message header */
#define TXP_LEN_MASK	0xffffull
#define TXP_MAGIC	(0x5aull << 16)
#define TXP_MAGIC_MASK	(0xffull << 16)
#define TXP_F		(1ull << 24)
#define TXP_RSV_MASK	(0x1full << 25)
#define TXP_CHECK_SHIFT	32
#define TXP_FIELDS_MASK	0xffffffffull

/* Multiplier of the check: odd, no run of equal bits longer than 6, so a
 * change of any single bit of the input changes the top bits.  The
 * payload multipliers are odd too (random, same rule). */
#define TX_CHECK_MUL	0x36f0ca607a4e0e25ull

static const uint64_t tx_pay_mul[8] = {
	0x510543a3082e8933ull, 0xe3ed4ad44f4bb177ull, 0xde2b18d0fc3153a3ull,
	0xd48219c350f73ac5ull, 0xe23f41bbecadb239ull, 0x341f81c4d7c30a55ull,
	0x65277ec318ec5cabull, 0x0d548c2c5b29e231ull,
};

static inline uint64_t tx_load64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Payload hash over @len bytes, the last word zero-padded. */
static inline uint64_t tx_payload_hash(const uint8_t *p, size_t len)
{
	uint64_t h = len * 0x31e2cfb589d9674full;
	size_t i = 0, w = 0;

	for (; i + 8 <= len; i += 8, w++)
		h += tx_load64(p + i) * tx_pay_mul[w & 7];
	if (i < len) {
		uint64_t t = 0;

		memcpy(&t, p + i, len - i);
		h += t * tx_pay_mul[w & 7];
	}
	return h;
}

static inline uint64_t tx_seq_check(uint64_t hdr, uint64_t ph)
{
	return (((hdr & TXS_FIELDS_MASK) ^ ph) * TX_CHECK_MUL) >> 40;
}

static inline uint64_t tx_plain_check(uint64_t hdr, uint64_t ph)
{
	return (((hdr & TXP_FIELDS_MASK) ^ ph) * TX_CHECK_MUL) >> 32;
}

/*
 * Store one 64-byte chunk at @dst (64-byte aligned) with non-temporal
 * stores, so it goes through the write-combining buffers as it would to a
 * WC-mapped BAR.  Ordering: none; see barrier.h.
 */
static inline void tx_wc_store64(void *dst, const void *src)
{
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
	__m128i a = _mm_loadu_si128((const __m128i *)src);
	__m128i b = _mm_loadu_si128((const __m128i *)src + 1);
	__m128i c = _mm_loadu_si128((const __m128i *)src + 2);
	__m128i d = _mm_loadu_si128((const __m128i *)src + 3);

	_mm_stream_si128((__m128i *)dst, a);
	_mm_stream_si128((__m128i *)dst + 1, b);
	_mm_stream_si128((__m128i *)dst + 2, c);
	_mm_stream_si128((__m128i *)dst + 3, d);
#else
	volatile uint64_t *d = dst;

	for (int i = 0; i < 8; i++)
		d[i] = tx_load64((const uint8_t *)src + 8 * i);
#endif
}

/* ---- windows ---- */
struct oms_tx_window {
	uint8_t *base;
	size_t len;
	int kind;		/* enum oms_tx_window_kind */
	int fd;			/* -1 if none */
	int rdonly;		/* consumer view: no queue on it */
	size_t map_len;		/* what to munmap (0: nothing) */
	void *priv;		/* kind-specific (mlx5) */
	void (*fini)(struct oms_tx_window *w);
};

int tx_window_map_fd(int fd, size_t len, int prot, int kind,
		     struct oms_tx_window **out);
/* lib/tx/window_kmod.c: open oms.ko's node @dev (NULL: /dev/oms) and ask
 * OMS_IOC_INFO for a window whose length is a multiple of @align: 0 with
 * the open descriptor and the length, or -errno (nothing left open). */
int tx_window_kmod_open(const char *dev, uint64_t align, int *fd_out,
			size_t *len_out);
/* lib/tx/window.c: unmap and close what a window holds (its fini). */
void tx_window_unmap(struct oms_tx_window *w);
/* @w maps @len bytes at @base (of @fd, or -1), unmapped and closed by
 * tx_window_unmap(): fill it in, hand it out in *@out; returns 0. */
int tx_window_mapped(struct oms_tx_window *w, void *base, size_t len,
		     int kind, int fd, struct oms_tx_window **out);

/*
 * The ioctl path (lib/tx/window_ioctl.c).  A queue on an
 * OMS_TX_WIN_KMOD_IOCTL window writes its chunks into process memory as
 * on any window, and each message becomes one op of an
 * OMS_IOC_ORDERED_STORE vector: WEAK ops for the weak and sequenced
 * classes (contiguous ones merged), one STRONG op per message of the
 * strong class (the module fences before it).  The vector is handed to
 * the module when it is full, when a message would not fit it, and at
 * oms_tx_flush(); every call ends with OMS_STORE_F_FLUSH, so what a call
 * wrote has left the CPU before the next call's first store.
 */
struct tx_iobatch {
	int fd;			/* the window's, not owned */
	uint32_t n;		/* ops pending */
	uint64_t bytes;		/* the ring span they cover */
	uint64_t limit;		/* bytes per call: the module's and the ring's */
	uint64_t ring_off;	/* the ring's offset in the window */
	uint64_t calls;		/* ioctls made */
	struct oms_store_op ops[OMS_STORE_MAX_OPS];
};

int tx_iob_create(struct oms_tx_queue *q, uint64_t ring_off);
void tx_iob_destroy(struct oms_tx_queue *q);
/* Make room for a message of @nch chunks spanning @adv of the ring (handing
 * the pending vector to the module if it would not fit): 0, or the
 * module's -errno (nothing sent). */
int tx_iob_room(struct oms_tx_queue *q, size_t nch, size_t adv);
/* Add the message just written at chunk position @pos. */
void tx_iob_add(struct oms_tx_queue *q, uint64_t pos, size_t nch, size_t adv);
/* Hand the pending vector to the module: 0 or -errno (kept pending). */
int tx_iob_submit(struct oms_tx_queue *q);

/* ---- queues ---- */
struct oms_tx_queue;
typedef void (*tx_write_fn)(struct oms_tx_queue *q, const uint8_t *src,
			    size_t len, size_t nch);

/* Which of send.c's AVX2 paths serve a queue (AVX2 writer, a mapped
 * window, no payload-checked sequenced class), if any. */
enum tx_fast { TX_FAST_NONE, TX_FAST_PLAIN, TX_FAST_SEQ };

struct oms_tx_queue {
	/* producer, hot */
	uint8_t *ring;
	uint64_t mask;		/* ring chunks - 1 */
	uint64_t pos;		/* next chunk position */
	uint64_t credit_cached;
	tx_write_fn write;
	uint32_t cls, flags, thread, slot_chunks;
	uint32_t max_payload;
	uint16_t seq;
	uint8_t avx2;		/* write is an AVX2 writer (send.c too) */
	uint8_t fast;		/* TX_FAST_*: send.c's loops serve it */
	uint64_t hbase;		/* header bits fixed for the queue */
	uint64_t hone;		/* sequenced: hbase of a one-chunk message */
	uint64_t more_chunks;	/* sequenced: uncounted messages' chunks
				 * past their first (send.c) */
	uint64_t op;		/* op bits of the message being written */
	struct oms_tx_stats st;	/* sequenced: without messages of
				 * whole chunks (oms_tx_stats()) */
	struct oms_tx_window *win;
	/* loads (lib/tx/load.c) */
	uint8_t *resp;		/* response area, NULL: none */
	uint32_t resp_slots;	/* power of two */
	uint32_t ld_count;	/* loads posted: the tags' high bits */
	uint32_t ld_timeout_ms;	/* a wait gives up after */
	uint64_t ld_busy;	/* slots whose tag a caller holds */
	uint64_t ld_lost;	/* slots of timed-out blocking loads,
				 * until their answer arrives (load.c) */
	uint32_t ld_tags[OMS_TX_RESP_MAX_SLOTS];	/* each slot's tag */
	uint16_t ld_len[OMS_TX_RESP_MAX_SLOTS];
	uint8_t *stbuf;		/* store message: address + bytes */
	struct tx_iobatch *iob;	/* the ioctl path's vector, NULL: stores */
	/* shared with the consumer, each on its own line */
	uint64_t credit __attribute__((aligned(64)));
	uint64_t published __attribute__((aligned(64)));
};

/* The plain header of a message: length, class bits, check bits. */
static inline uint64_t tx_plain_hdr(const struct oms_tx_queue *q,
				    const uint8_t *src, size_t len)
{
	uint64_t h = q->hbase | len;

	if (h & TXH_C)
		return h | tx_plain_check(h, tx_payload_hash(src, len))
			<< TXP_CHECK_SHIFT;
	return h | ((h * TX_CHECK_MUL) & ~TXP_FIELDS_MASK);
}

/* lib/tx/send.c: write one message of @len bytes with header op @op
 * (sequenced queues; 0 for the plain classes), after the credit check.
 * The relaxed load op uses up no sequence number.  0 or -EAGAIN. */
int tx_send_op(struct oms_tx_queue *q, uint64_t op, const void *buf,
	       size_t len);

/* lib/tx/chunk.c: build one chunk of a message into @out (64 bytes) the
 * slow, obvious way (for the scalar path and for tests' reference). */
void tx_build_seq_chunk(uint8_t *out, uint64_t base_hdr, uint16_t seq,
			int som, int eom, const uint8_t *pay, size_t n);

#endif /* OMS_TX_PRIV_H */
