/* SPDX-License-Identifier: MIT */
/*
 * The check code of the destination agent's descriptors, written from the
 * layout's text in lib/agent/agent_desc.h (FNV-1a over bytes 0..59, stored
 * little-endian at 60), not from the library's code: a test and the
 * fuzzer seal forged bytes with it so that the field rules, not the check,
 * are what refuses them.
 */
#ifndef T_AGENT_SEAL_H
#define T_AGENT_SEAL_H

#include <stdint.h>

static inline void t_ad_seal(uint8_t *b)
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < 60; i++)
		h = (h ^ b[i]) * 16777619u;
	for (int i = 0; i < 4; i++)
		b[60 + i] = (uint8_t)(h >> (8 * i));
}

#endif
