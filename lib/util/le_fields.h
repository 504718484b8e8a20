/* SPDX-License-Identifier: MIT */
/*
 * A little-endian wire format as a table of fields: where each sits on the
 * wire and in its struct, and its size (1, 2, 4 or 8 bytes, the same in
 * both).  One table gives a message's encoder and its decoder, so the two
 * cannot disagree on an offset; the handshake (lib/verbs/common/wire.c) and
 * the agent's descriptors (lib/agent/agent_desc.c) are written this way.
 * Checks of the values stay with each format: this only moves bytes.
 */
#ifndef OMS_UTIL_LE_FIELDS_H
#define OMS_UTIL_LE_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct le_field {
	uint16_t wire;		/* byte offset in the message */
	uint16_t mem;		/* offsetof() in the struct */
	uint8_t size;		/* 1, 2, 4 or 8 */
};

/* A field @member of @type at byte @wire_off; its size must be 1, 2, 4
 * or 8 (a compile error otherwise). */
#define LE_FIELD(type, member, wire_off) {				\
	.wire = (wire_off), .mem = offsetof(type, member),		\
	.size = sizeof(((type *)0)->member) +				\
		0 * sizeof(char[(sizeof(((type *)0)->member) & 15) &&	\
		   !(sizeof(((type *)0)->member) &			\
		     (sizeof(((type *)0)->member) - 1)) ? 1 : -1]) }

#define LE_NFIELDS(table) (sizeof(table) / sizeof((table)[0]))

/* The fields of struct @s into message @p. */
static inline void le_put_fields(uint8_t *p, const void *s,
				 const struct le_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 0;
		uint8_t b[8];

		/* a value of its own size, widened: host order in, LE out */
		memcpy(b, (const uint8_t *)s + f[i].mem, f[i].size);
		switch (f[i].size) {
		case 1: v = b[0]; break;
		case 2: { uint16_t x; memcpy(&x, b, 2); v = x; break; }
		case 4: { uint32_t x; memcpy(&x, b, 4); v = x; break; }
		default: memcpy(&v, b, 8); break;
		}
		for (unsigned k = 0; k < f[i].size; k++)
			p[f[i].wire + k] = (uint8_t)(v >> (8 * k));
	}
}

/* The fields of message @p into struct @s (other bytes of @s untouched). */
static inline void le_get_fields(const uint8_t *p, void *s,
				 const struct le_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t *m = (uint8_t *)s + f[i].mem;
		uint64_t v = 0;

		for (unsigned k = 0; k < f[i].size; k++)
			v |= (uint64_t)p[f[i].wire + k] << (8 * k);
		switch (f[i].size) {
		case 1: *m = (uint8_t)v; break;
		case 2: { uint16_t x = (uint16_t)v; memcpy(m, &x, 2); break; }
		case 4: { uint32_t x = (uint32_t)v; memcpy(m, &x, 4); break; }
		default: memcpy(m, &v, 8); break;
		}
	}
}

#endif
