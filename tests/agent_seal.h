/* SPDX-License-Identifier: MIT */
/*
 * The check code of the destination agent's descriptors, written from the
 * layout's text in lib/agent/agent_desc.h (over bytes 0..59, stored
 * little-endian at 60: CRC32C, or FNV-1a in the format of peers that do
 * not offer CRC32C), not from the library's code - the CRC here goes a
 * bit at a time, neither the library's table nor the CPU's instruction.
 * A test and the fuzzer seal forged bytes with it so that the field
 * rules, not the check, are what refuses them.
 */
#ifndef T_AGENT_SEAL_H
#define T_AGENT_SEAL_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C by its definition: reflected 0x82F63B78, ~0 in and out. */
static inline uint32_t t_crc32c_bitwise(const uint8_t *p, size_t len)
{
	uint32_t c = 0xFFFFFFFFu;

	for (size_t i = 0; i < len; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
	}
	return ~c;
}

static inline uint32_t t_fnv1a(const uint8_t *p, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Seal @b in the format @crc32c says (1: CRC32C, 0: FNV-1a). */
static inline void t_ad_seal_as(uint8_t *b, int crc32c)
{
	uint32_t h = crc32c ? t_crc32c_bitwise(b, 60) : t_fnv1a(b, 60);

	for (int i = 0; i < 4; i++)
		b[60 + i] = (uint8_t)(h >> (8 * i));
}

/* Seal @b as CRC32C, the format the tests use unless they say. */
static inline void t_ad_seal(uint8_t *b)
{
	t_ad_seal_as(b, 1);
}

#endif
