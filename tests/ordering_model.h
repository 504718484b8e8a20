/* SPDX-License-Identifier: MIT */
/*
 * Reference model of the ordering contract (docs/ordering.md), written
 * from the rules alone: it includes nothing of lib/.  Given a program of
 * one context and a trace of one execution, it says whether the trace is
 * allowed.
 *
 * Program: puts (U, W, S, REL), gets (relaxed or acquire), FAA, CAS,
 * fence(d), fence_global.  Each memory op has a destination and an
 * address there; an op may carry an injected failure (its destination
 * refuses it).  The destinations that apply sequence numbers (DEST_SEQ)
 * and those that are in-order channels (posted, SEQ) are part of the
 * program: D1 holds for the former, and an in-order channel may refuse
 * everything after a failure (the precision check allows it).
 *
 * Trace: for every memory op its fate (performed, failed, cancelled), the
 * moment it was performed (distinct, increasing numbers) and what it read
 * (gets and atomics: the old value).
 *
 * The model is one relation: om_rule(a, b), "b is not performed before a
 * is performed", for a earlier than b in program order, with the rule
 * that puts it there (C1, S1, R1, F1, F3, A1, A2, D1).  Read literally it
 * also says what failures do: if a is never performed, b never is (it is
 * cancelled), and so on down every chain.  Except C1: coherence orders
 * two accesses of the same bytes that are both performed; after a refused
 * one, a later access of its bytes may go on or be cancelled (the device
 * refuses it if the orderer fenced it).  om_check() then checks:
 *   - order:  b performed => a performed (C1: if a was), and earlier;
 *   - failed: an op with an injected failure is never performed;
 *   - quiet:  at the end every memory op is performed, failed or cancelled;
 *   - reads:  replaying the performed ops in trace order over zeroed
 *             memory gives every value that a get or atomic reports;
 * and with OM_CHECK_PRECISION (the engine must not cancel for nothing):
 *   - lost:   with no injected failure, every op is performed;
 *   - excess: an op not performed without an injected failure of its own
 *             follows (by a rule, C1 too) an op not performed, or shares a
 *             destination with one that is earlier in program order (a
 *             device refuses a fenced op after a failure on its channel),
 *             or with any one if the destination is an in-order channel
 *             (it stops at its first failure and refuses what was posted
 *             after it, held ops of earlier program order included),
 *             or follows (by a rule) an op of an in-order destination
 *             where something was not performed (the flush that would
 *             prove that op visible is refused).
 */
#ifndef OMS_TESTS_ORDERING_MODEL_H
#define OMS_TESTS_ORDERING_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define OM_MAX_OPS	32
#define OM_MAX_DEST	4

enum om_kind {
	OM_PUT = 0,
	OM_GET = 1,
	OM_FAA = 2,
	OM_CAS = 3,
	OM_FENCE = 4,		/* fence(dest) */
	OM_FENCE_ALL = 5,	/* fence_global() */
};

/* Put classes (same numbers as enum oms_store_class, by choice). */
enum om_cls { OM_U = 0, OM_W = 1, OM_S = 2, OM_REL = 3 };

struct om_op {
	uint8_t kind;		/* enum om_kind */
	uint8_t cls;		/* put: enum om_cls */
	uint8_t acquire;	/* get: acquire */
	uint8_t dest;		/* memory ops and OM_FENCE */
	uint8_t addr;		/* memory ops: address at dest */
	uint8_t fail;		/* injected: the destination refuses it */
};

struct om_prog {
	uint32_t n;
	uint8_t dest_seq[OM_MAX_DEST];		/* D1 applies */
	uint8_t dest_in_order[OM_MAX_DEST];	/* posted or SEQ channel */
	struct om_op op[OM_MAX_OPS];
};

enum om_fate {
	OM_PENDING = 0,
	OM_PERFORMED = 1,
	OM_FAILED = 2,		/* refused for its own sake */
	OM_CANCELLED = 3,	/* not performed: follows a failure */
};

struct om_trace {
	uint8_t fate[OM_MAX_OPS];
	uint32_t when[OM_MAX_OPS];	/* performed: moment, distinct */
	uint64_t read[OM_MAX_OPS];	/* get, atomic: value read */
};

enum om_verdict {
	OM_OK = 0,
	OM_V_ORDER,		/* a rule's pair performed out of order */
	OM_V_FAILED,		/* an op with an injected failure performed */
	OM_V_QUIET,		/* an op left pending */
	OM_V_READ,		/* a value read disagrees with the trace */
	OM_V_LOST,		/* nothing failed, yet an op not performed */
	OM_V_EXCESS,		/* cancelled without a reason */
};

#define OM_CHECK_PRECISION	(1u << 0)

/* What a memory op writes: put: the value; FAA: the addend; CAS: the new
 * value (expected: 0).  Unique per op so reads identify their write. */
uint64_t om_value(uint32_t i);

static inline int om_is_mem(const struct om_op *o)
{
	return o->kind <= OM_CAS;
}

/* The rule that orders b after a (a < b, memory ops), or NULL. */
const char *om_rule(const struct om_prog *p, uint32_t a, uint32_t b);

/* What om_check() found: the verdict, the two ops (a earlier; b the one
 * that broke it) and the rule, if any. */
struct om_result {
	int verdict;
	uint32_t a, b;
	const char *rule;
};

/* Check @t against @p.  Returns an enum om_verdict; @res (if not NULL)
 * gets the details, @why (if not NULL) says them in words. */
int om_check(const struct om_prog *p, const struct om_trace *t,
	     unsigned int flags, struct om_result *res, char *why,
	     size_t len);

/* Short text of @p ("W0.0 ACQ1.0 F0 S1.1!" ...: kind, dest.addr, "!" for
 * an injected failure). */
void om_format(const struct om_prog *p, char *buf, size_t len);

const char *om_verdict_name(int v);

#endif
