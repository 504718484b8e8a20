/* SPDX-License-Identifier: MIT */
/*
 * The emulated-device lab of the mixed litmus programs
 * (tests/litmus_emu_mixed_*.c): one device of the mode under test (chaos
 * seed, read order), NINI initiator contexts on node 0 and targets on
 * nodes 1..ndest, each with @words zeroed 64-bit words registered and
 * described remotely.  A program instance owns a few words at each target;
 * the program, its observer (oms_emu_set_observer(), set by the test) and
 * what it counts as forbidden are each test's own.  Public API only.
 */
#ifndef T_LAB_H
#define T_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "oms.h"
#include "oms_emu.h"

#define T_LAB_MAX_INI	16
#define T_LAB_MAX_DEST	4	/* targets are nodes 1..3 */

struct t_lab {
	struct oms_emu *emu;
	struct oms_ctx *ini[T_LAB_MAX_INI], *tgt[T_LAB_MAX_DEST];
	struct oms_mr *mr[T_LAB_MAX_DEST];
	struct oms_rmr r[T_LAB_MAX_DEST];
	uint64_t *mem[T_LAB_MAX_DEST];
	uint32_t nini, ndest;
	size_t words;			/* per target */
};

struct t_lab_cfg {
	uint32_t nini, ndest;		/* <= T_LAB_MAX_INI, < T_LAB_MAX_DEST */
	size_t words;
	uint32_t flags;			/* the initiators' context flags */
	uint64_t seed;			/* the device's chaos (0: in order) */
	int read_order_set;		/* else the device's default */
	uint32_t read_order;		/* OMS_ORDER_* */
};

/* Make the lab; 0, or -1 with whatever was made closed again. */
int t_lab_open(struct t_lab *l, const struct t_lab_cfg *cfg);

/* Undo t_lab_open() (also a half-made lab); the observer goes first. */
void t_lab_close(struct t_lab *l);

/* The target node whose region is @region, or -1. */
int t_lab_dest_of(const struct t_lab *l, uint32_t region);

/* Zero every target's words; nothing may be outstanding. */
void t_lab_zero(struct t_lab *l);

#endif
