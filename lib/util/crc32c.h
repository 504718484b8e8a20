/* SPDX-License-Identifier: MIT */
/*
 * CRC32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and
 * final xor 0xFFFFFFFF; "123456789" gives 0xE3069283), the check of the
 * destination agent's descriptors (lib/agent/agent_desc.h).  The CPU's
 * instruction where it has one (SSE4.2's crc32 on x86-64, found at run
 * time unless the compiler may assume it; ARMv8's CRC32 extension when the
 * compiler targets it), and a table-driven path that gives the same
 * values everywhere else.  Pure functions, safe from any thread.
 */
#ifndef OMS_UTIL_CRC32C_H
#define OMS_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC32C of @len bytes at @p, by the fastest path this CPU has. */
uint32_t oms_crc32c(const void *p, size_t len);

/* The same by the table alone (the portable path; tests compare). */
uint32_t oms_crc32c_table(const void *p, size_t len);

/*
 * The same by the CPU's instruction alone: 0 with *@crc, or -EOPNOTSUPP
 * when this CPU (or this build) has none.
 */
int oms_crc32c_hw(const void *p, size_t len, uint32_t *crc);

#endif
