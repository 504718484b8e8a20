// SPDX-License-Identifier: MIT
/*
 * CRC32C (crc32c.h).  The instruction folds 8 bytes in one step where the
 * table folds one, which is what takes a descriptor's check from a byte
 * loop to a handful of instructions; the table is sliced by 8 so that a
 * CPU without the instruction still reads words, not bytes.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "util/crc32c.h"

#define CRC32C_POLY	0x82F63B78u	/* reflected */

/* ---- the table: slicing by 8 ---- */

static uint32_t crc_table[8][256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

static void crc_table_fill(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (CRC32C_POLY & (0u - (c & 1)));
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
				crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int k = 7; k >= 0; k--)
		v = (v << 8) | p[k];
	return v;
}

uint32_t oms_crc32c_table(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t c = 0xFFFFFFFFu;

	pthread_once(&crc_table_once, crc_table_fill);
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w = load_le64(p) ^ c;

		c = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
		    crc_table[5][(w >> 16) & 0xff] ^
		    crc_table[4][(w >> 24) & 0xff] ^
		    crc_table[3][(w >> 32) & 0xff] ^
		    crc_table[2][(w >> 40) & 0xff] ^
		    crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
	}
	for (; len; p++, len--)
		c = (c >> 8) ^ crc_table[0][(c ^ *p) & 0xff];
	return ~c;
}

/* ---- the instruction ---- */

/*
 * One loop for every CPU that has an instruction: its steps of 8, 4 and 1
 * bytes, and the attribute that lets the compiler emit it.  On x86-64 it
 * is built for SSE4.2 whatever the compiler's target and called only when
 * the CPU says it has it (or the compiler may assume it); on ARMv8 when
 * the compiler was told the CPU has the CRC32 extension
 * (-march=armv8-a+crc or later).  Words are read with memcpy: both are
 * little-endian, as the CRC's bit order wants.
 */
#if defined(__x86_64__)
#include <nmmintrin.h>
#define CRC_HW_TARGET	__attribute__((target("sse4.2")))
#define crc_step64(c, w) ((uint32_t)_mm_crc32_u64((c), (w)))
#define crc_step32(c, w) _mm_crc32_u32((c), (w))
#define crc_step8(c, b)	_mm_crc32_u8((c), (b))

static int crc_hw_here(void)
{
#ifdef __SSE4_2__
	return 1;
#else
	static int known = -1;	/* -1 not asked yet, else the answer */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (k < 0) {
		__builtin_cpu_init();
		k = !!__builtin_cpu_supports("sse4.2");
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k;
#endif
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define CRC_HW_TARGET
#define crc_step64(c, w) __crc32cd((c), (w))
#define crc_step32(c, w) __crc32cw((c), (w))
#define crc_step8(c, b)	__crc32cb((c), (b))

static int crc_hw_here(void)
{
	return 1;
}

#else
static int crc_hw_here(void)
{
	return 0;
}
#endif

#ifdef CRC_HW_TARGET
CRC_HW_TARGET
static uint32_t crc_hw(const uint8_t *p, size_t len)
{
	uint32_t c = 0xFFFFFFFFu;

	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = crc_step64(c, w);
	}
	if (len >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		c = crc_step32(c, w);
		p += 4;
		len -= 4;
	}
	for (; len; p++, len--)
		c = crc_step8(c, *p);
	return ~c;
}
#else
static uint32_t crc_hw(const uint8_t *p, size_t len)
{
	(void)p;
	(void)len;
	return 0;	/* never called: crc_hw_here() says 0 */
}
#endif

int oms_crc32c_hw(const void *p, size_t len, uint32_t *crc)
{
	if (!crc_hw_here())
		return -EOPNOTSUPP;
	*crc = crc_hw(p, len);
	return 0;
}

uint32_t oms_crc32c(const void *p, size_t len)
{
	return crc_hw_here() ? crc_hw(p, len) : oms_crc32c_table(p, len);
}
