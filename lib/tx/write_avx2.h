/* SPDX-License-Identifier: MIT */
/*
 * The AVX2 message writers: the same bytes as the portable builders in
 * queue.c (chunk.c's format), written with 32-byte streaming stores and
 * the header merged into the first vector.  Inline, so that the queue's
 * writer (queue.c) and the sends (send.c) each get a loop with no call
 * in it; every function here needs a caller compiled for AVX2
 * (__attribute__((target("avx2")))) and a CPU that has it.
 */
#ifndef OMS_TX_WRITE_AVX2_H
#define OMS_TX_WRITE_AVX2_H

#include "tx/tx_priv.h"

#if defined(__x86_64__)
#define TX_HAVE_AVX2 1

#define TX_AVX2 __attribute__((target("avx2")))

/* Header @h + p[0..56), where only p[0..56) may be read. */
TX_AVX2 static inline void tx_avx2_hdr_chunk(uint8_t *dst, uint64_t h,
					     const uint8_t *p)
{
	/* header + p[0..24) | p[24..56): rotate the first vector by 8 */
	__m256i x = _mm256_loadu_si256((const __m256i *)p);
	__m256i hi = _mm256_loadu_si256((const __m256i *)(p + 24));
	__m256i lo = _mm256_permute4x64_epi64(x, _MM_SHUFFLE(2, 1, 0, 3));

	lo = _mm256_blend_epi32(lo, _mm256_castsi128_si256(
		_mm_cvtsi64_si128((long long)h)), 0x03);
	_mm256_stream_si256((__m256i *)dst, lo);
	_mm256_stream_si256((__m256i *)(dst + 32), hi);
}

/* Header @h + p[0..56), where p[-8..0) may be read too: no lane shuffle. */
TX_AVX2 static inline void tx_avx2_hdr_chunk_after(uint8_t *dst, uint64_t h,
						   const uint8_t *p)
{
	__m256i lo = _mm256_loadu_si256((const __m256i *)(p - 8));
	__m256i hi = _mm256_loadu_si256((const __m256i *)(p + 24));

	lo = _mm256_blend_epi32(lo, _mm256_castsi128_si256(
		_mm_cvtsi64_si128((long long)h)), 0x03);
	_mm256_stream_si256((__m256i *)dst, lo);
	_mm256_stream_si256((__m256i *)(dst + 32), hi);
}

/* 64 bytes from @p as they are. */
TX_AVX2 static inline void tx_avx2_copy_chunk(uint8_t *dst, const uint8_t *p)
{
	__m256i a = _mm256_loadu_si256((const __m256i *)p);
	__m256i b = _mm256_loadu_si256((const __m256i *)(p + 32));

	_mm256_stream_si256((__m256i *)dst, a);
	_mm256_stream_si256((__m256i *)(dst + 32), b);
}

/* Check bits of a sequenced header without payload check: the fields sit
 * in bits 0..39, so tx_seq_check() shifted back into place is this. */
static inline uint64_t tx_seq_seal(uint64_t h)
{
	return h | ((h * TX_CHECK_MUL) & ~TXS_FIELDS_MASK);
}

/*
 * The short last chunk of a sequenced message (fewer than 56 bytes),
 * built on the stack and copied: out of line, so that the writers of
 * full chunks need no stack buffer and no aligned frame.
 */
TX_AVX2 static __attribute__((noinline)) void
tx_seq_avx2_short(uint8_t *dst, uint64_t base, uint16_t seq, int som,
		  const uint8_t *src, size_t n)
{
	uint8_t tmp[OMS_TX_CHUNK] __attribute__((aligned(32)));

	tx_build_seq_chunk(tmp, base, seq, som, 1, src, n);
	tx_avx2_copy_chunk(dst, tmp);
}

/*
 * One sequenced message without payload check: @nch chunks from ring
 * position @pos, sequence numbers from @seq, header bits @base (queue
 * and op).  Full chunks take two loads and two stores each; only a short
 * last chunk is built on the stack (tx_seq_avx2_short()).
 */
TX_AVX2 static inline __attribute__((always_inline)) void
tx_seq_avx2_msg(uint8_t *ring, uint64_t mask, uint64_t pos, uint64_t base,
		uint16_t seq, const uint8_t *src, size_t len, size_t nch)
{
	uint64_t full = base | ((uint64_t)OMS_TX_SEQ_PAYLOAD << TXS_LEN_SHIFT);
	size_t last = nch - 1, tail = len - last * OMS_TX_SEQ_PAYLOAD;

	if (last) {
		tx_avx2_hdr_chunk(ring + ((pos & mask) << 6),
				  tx_seq_seal(full | seq | TXS_SOM), src);
		/* middle chunks: full, neither SOM nor EOM */
		for (size_t i = 1; i < last; i++)
			tx_avx2_hdr_chunk_after(ring + (((pos + i) & mask) << 6),
						tx_seq_seal(full | (uint16_t)(seq + i)),
						src + i * OMS_TX_SEQ_PAYLOAD);
		if (tail == OMS_TX_SEQ_PAYLOAD) {
			tx_avx2_hdr_chunk_after(ring + (((pos + last) & mask) << 6),
						tx_seq_seal(full | TXS_EOM |
							    (uint16_t)(seq + last)),
						src + last * OMS_TX_SEQ_PAYLOAD);
			return;
		}
	} else if (tail == OMS_TX_SEQ_PAYLOAD) {
		tx_avx2_hdr_chunk(ring + ((pos & mask) << 6),
				  tx_seq_seal(full | seq | TXS_SOM | TXS_EOM), src);
		return;
	}
	tx_seq_avx2_short(ring + (((pos + last) & mask) << 6), base,
			  (uint16_t)(seq + last), last == 0,
			  src + last * OMS_TX_SEQ_PAYLOAD, tail);
}

/*
 * A chunk of a plain message with fewer than 64 bytes to fill: @h (8
 * bytes, or none when @hdr is 0) and @n bytes of @src, zero after.  Out of
 * line, for tx_seq_avx2_short()'s reason.
 */
TX_AVX2 static __attribute__((noinline)) void
tx_plain_avx2_short(uint8_t *dst, int hdr, uint64_t h, const uint8_t *src,
		    size_t n)
{
	uint8_t tmp[OMS_TX_CHUNK] __attribute__((aligned(32)));

	memset(tmp, 0, sizeof(tmp));
	if (hdr)
		memcpy(tmp, &h, 8);
	memcpy(tmp + (hdr ? OMS_TX_HDR : 0), src, n);
	tx_avx2_copy_chunk(dst, tmp);
}

/* One plain message (header @h already built) of @nch chunks at @dst. */
TX_AVX2 static inline __attribute__((always_inline)) void
tx_plain_avx2_msg(uint8_t *dst, uint64_t h, const uint8_t *src, size_t len,
		  size_t nch)
{
	if (len >= OMS_TX_CHUNK - OMS_TX_HDR)
		tx_avx2_hdr_chunk(dst, h, src);
	else
		tx_plain_avx2_short(dst, 1, h, src, len);
	for (size_t i = 1; i < nch; i++) {
		size_t lo = i * OMS_TX_CHUNK - OMS_TX_HDR;

		if (len - lo >= OMS_TX_CHUNK)
			tx_avx2_copy_chunk(dst + i * OMS_TX_CHUNK, src + lo);
		else
			tx_plain_avx2_short(dst + i * OMS_TX_CHUNK, 0, 0,
					    src + lo, len - lo);
	}
}
#else
#define TX_HAVE_AVX2 0
#endif

#endif /* OMS_TX_WRITE_AVX2_H */
