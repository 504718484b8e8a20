/* SPDX-License-Identifier: MIT */
/*
 * The 64-byte lines of a byte range: the unit in which a destination reads
 * an item for an acquire (one line's loads before the next line's) and in
 * which a speculative read is squashed.  The emulated device (lib/emu/)
 * and the verbs agent (lib/agent/) walk a get's lines with these.
 */
#ifndef OMS_UTIL_LINES_H
#define OMS_UTIL_LINES_H

#include <stdint.h>

#define OMS_LINE	64u

/* The number of the line that holds byte @off. */
static inline uint64_t oms_line_first(uint64_t off)
{
	return off / OMS_LINE;
}

/* How many lines [@off, @off + @len) touches (none when @len is 0). */
static inline uint32_t oms_line_count(uint64_t off, uint64_t len)
{
	return len ? (uint32_t)((off + len - 1) / OMS_LINE - off / OMS_LINE + 1)
		   : 0;
}

/* Line @i of [@off, @off + @len), clipped to the range: its first byte in
 * *@lo and its length in *@n. */
static inline void oms_line_span(uint64_t off, uint64_t len, uint32_t i,
				 uint64_t *lo, uint64_t *n)
{
	uint64_t a = (off / OMS_LINE + i) * OMS_LINE, b = a + OMS_LINE;

	if (a < off)
		a = off;
	if (b > off + len)
		b = off + len;
	*lo = a;
	*n = b - a;
}

#endif
