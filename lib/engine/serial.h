/* SPDX-License-Identifier: MIT */
/*
 * 16-bit sequence numbers, compared as serial numbers (RFC 1982): the
 * numbers of a stream wrap, so "after" means "less than half the space
 * ahead".  Every side of the ordering engine that compares a stream's
 * numbers - the reorder buffer and the stop rule, the emulated device,
 * the destination agent and its descriptors, the requester's book -
 * compares them here, so that they agree on where a stream is.
 */
#ifndef OMS_ENGINE_SERIAL_H
#define OMS_ENGINE_SERIAL_H

#include <stdint.h>

#define OMS_SERIAL_HALF	0x8000u

/* How far @a is past @b, modulo 2^16. */
static inline uint16_t oms_serial_ahead(uint16_t a, uint16_t b)
{
	return (uint16_t)(a - b);
}

/* Is @a at or after @b? */
static inline int oms_serial_at_or_after(uint16_t a, uint16_t b)
{
	return oms_serial_ahead(a, b) < OMS_SERIAL_HALF;
}

#endif
