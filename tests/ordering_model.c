// SPDX-License-Identifier: MIT
/*
 * Reference model of docs/ordering.md; see ordering_model.h.  Each rule is
 * one line of om_rule(); om_check() applies the relation to a trace.
 */
#include <stdio.h>
#include <string.h>

#include "ordering_model.h"

uint64_t om_value(uint32_t i)
{
	return (uint64_t)(i + 1) << 8;	/* sums of distinct FAAs stay unique */
}

static int writes(const struct om_op *o)
{
	return o->kind == OM_PUT || o->kind == OM_FAA || o->kind == OM_CAS;
}

static int atomic(const struct om_op *o)
{
	return o->kind == OM_FAA || o->kind == OM_CAS;
}

/* Weak, strong and release puts, gets, atomics (not unordered puts). */
static int ordered(const struct om_op *o)
{
	return om_is_mem(o) && !(o->kind == OM_PUT && o->cls == OM_U);
}

static int is_put(const struct om_op *o, uint8_t cls)
{
	return o->kind == OM_PUT && o->cls == cls;
}

static int is_acquire(const struct om_op *o)
{
	return o->kind == OM_GET && o->acquire;
}

/* Is there a fence of @dest (or a global one) between a and b? */
static int fence_between(const struct om_prog *p, uint32_t a, uint32_t b,
			 uint8_t dest, int global_only)
{
	for (uint32_t k = a + 1; k < b; k++) {
		const struct om_op *f = &p->op[k];

		if (f->kind == OM_FENCE_ALL ||
		    (!global_only && f->kind == OM_FENCE && f->dest == dest))
			return 1;
	}
	return 0;
}

const char *om_rule(const struct om_prog *p, uint32_t a, uint32_t b)
{
	const struct om_op *A = &p->op[a], *B = &p->op[b];
	int same_dest = A->dest == B->dest;

	if (a >= b || !om_is_mem(A) || !om_is_mem(B))
		return NULL;
	/* C1: same bytes, one of the two writes. */
	if (same_dest && A->addr == B->addr && (writes(A) || writes(B)))
		return "C1";
	/* S1: a strong put after every earlier ordered op. */
	if (ordered(A) && is_put(B, OM_S))
		return "S1";
	/* R1: a release put after every earlier op to its destination. */
	if (same_dest && is_put(B, OM_REL))
		return "R1";
	/* A1: an acquire before every later op, any destination. */
	if (is_acquire(A))
		return "A1";
	/* A2: an atomic before a later acquire at its destination (and
	 * fenced or release ops there, which F1/F3/R1 cover too). */
	if (atomic(A) && same_dest && is_acquire(B))
		return "A2";
	if (ordered(A) && ordered(B)) {
		/* F1 and F3: fences order ordered ops. */
		if (same_dest && fence_between(p, a, b, A->dest, 0))
			return "F1";
		if (fence_between(p, a, b, 0, 1))
			return "F3";
		/* D1: a sequenced destination applies program order. */
		if (same_dest && A->dest < OM_MAX_DEST && p->dest_seq[A->dest])
			return "D1";
	}
	return NULL;
}

static const char *const kind_txt[] = { "P", "G", "FAA", "CAS", "F", "FG" };
static const char *const cls_txt[] = { "U", "W", "S", "REL" };

void om_format(const struct om_prog *p, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (uint32_t i = 0; i < p->n && o < len; i++) {
		const struct om_op *x = &p->op[i];
		const char *name = x->kind == OM_PUT ? cls_txt[x->cls & 3] :
				   x->kind == OM_GET ?
				   (x->acquire ? "ACQ" : "G") :
				   kind_txt[x->kind <= OM_FENCE_ALL ? x->kind : 0];
		int r;

		if (x->kind == OM_FENCE)
			r = snprintf(buf + o, len - o, "%sF%u", i ? " " : "",
				     x->dest);
		else if (x->kind == OM_FENCE_ALL)
			r = snprintf(buf + o, len - o, "%sFG", i ? " " : "");
		else
			r = snprintf(buf + o, len - o, "%s%s%u.%u%s",
				     i ? " " : "", name, x->dest, x->addr,
				     x->fail ? "!" : "");
		if (r < 0)
			break;
		o += (size_t)r;
	}
}

const char *om_verdict_name(int v)
{
	static const char *const n[] = {
		"ok", "order", "failed op performed", "not quiet",
		"read value", "lost (nothing failed)", "cancelled for nothing",
	};

	return v >= 0 && v <= OM_V_EXCESS ? n[v] : "?";
}

#define SAY(v, ...) do { \
	if (why && len) \
		snprintf(why, len, __VA_ARGS__); \
	return (v); \
} while (0)

/* Replay the performed ops in trace order; compare what was read. */
static int check_reads(const struct om_prog *p, const struct om_trace *t,
		       char *why, size_t len)
{
	uint64_t mem[OM_MAX_DEST][256];
	uint32_t order[OM_MAX_OPS], n = 0;

	memset(mem, 0, sizeof(mem));
	for (uint32_t i = 0; i < p->n; i++)
		if (om_is_mem(&p->op[i]) && t->fate[i] == OM_PERFORMED)
			order[n++] = i;
	for (uint32_t x = 1; x < n; x++)	/* insertion sort by moment */
		for (uint32_t y = x; y > 0 &&
		     t->when[order[y - 1]] > t->when[order[y]]; y--) {
			uint32_t tmp = order[y];

			order[y] = order[y - 1];
			order[y - 1] = tmp;
		}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = order[k];
		const struct om_op *o = &p->op[i];
		uint64_t *m = &mem[o->dest % OM_MAX_DEST][o->addr];

		if (k && t->when[order[k - 1]] == t->when[i])
			SAY(OM_V_READ,
				"ops %u and %u performed at one moment",
				   order[k - 1], i);
		if (o->kind != OM_PUT && t->read[i] != *m)
			SAY(OM_V_READ,
				"op %u read %llu, which no order gives",
				   i, (unsigned long long)t->read[i]);
		if (o->kind == OM_PUT)
			*m = om_value(i);
		else if (o->kind == OM_FAA)
			*m += om_value(i);
		else if (o->kind == OM_CAS && *m == 0)
			*m = om_value(i);
	}
	return OM_OK;
}

static int check(const struct om_prog *p, const struct om_trace *t,
		 unsigned int flags, struct om_result *res, char *why,
		 size_t len)
{
	int any_fail = 0, r;

	for (uint32_t b = 0; b < p->n; b++) {
		const struct om_op *B = &p->op[b];

		if (!om_is_mem(B))
			continue;
		any_fail |= B->fail;
		res->b = b;
		if (t->fate[b] == OM_PENDING)
			SAY(OM_V_QUIET,
				"op %u neither performed, failed nor cancelled", b);
		if (B->fail && t->fate[b] == OM_PERFORMED)
			SAY(OM_V_FAILED,
				"op %u performed, though refused", b);
		if (t->fate[b] != OM_PERFORMED)
			continue;
		for (uint32_t a = 0; a < b; a++) {
			const char *rule = om_rule(p, a, b);

			if (!rule)
				continue;
			res->a = a;
			res->rule = rule;
			/* Coherence orders what is performed; after a
			 * refused op it neither requires nor forbids
			 * cancelling (a write after a refused write of the
			 * same bytes is no less coherent; a fenced one is
			 * refused by the device). */
			if (t->fate[a] != OM_PERFORMED && !strcmp(rule, "C1"))
				continue;
			/* The narrowing of docs/ordering.md ("A failed
			 * acquire and the gets behind it"): a get to the
			 * destination of an acquire that was never performed
			 * may still be performed (a read changes nothing
			 * there; fencing every such get would turn RC-opt
			 * ordered reads into RC).  When both are performed
			 * the order still holds. */
			if (t->fate[a] != OM_PERFORMED && !strcmp(rule, "A1") &&
			    p->op[b].kind == OM_GET &&
			    p->op[a].dest == p->op[b].dest)
				continue;
			if (t->fate[a] != OM_PERFORMED)
				SAY(OM_V_ORDER,
				"op %u not performed, op %u performed (%s)",
					   a, b, rule);
			if (t->when[a] > t->when[b])
				SAY(OM_V_ORDER,
				"op %u performed before op %u (%s)",
					   b, a, rule);
		}
	}
	res->a = res->b = 0;
	res->rule = NULL;
	r = check_reads(p, t, why, len);
	if (r || !(flags & OM_CHECK_PRECISION))
		return r;
	for (uint32_t b = 0; b < p->n; b++) {
		const struct om_op *B = &p->op[b];
		int reason = 0;

		if (!om_is_mem(B) || t->fate[b] == OM_PERFORMED || B->fail)
			continue;
		res->b = b;
		if (!any_fail)
			SAY(OM_V_LOST,
				"op %u not performed, nothing failed", b);
		for (uint32_t a = 0; a < p->n && !reason; a++) {
			const struct om_op *A = &p->op[a];

			if (a == b || !om_is_mem(A) ||
			    t->fate[a] == OM_PERFORMED)
				continue;
			reason = (a < b && om_rule(p, a, b)) ||
				 (A->dest == B->dest &&
				  (a < b ||
				   p->dest_in_order[B->dest % OM_MAX_DEST]));
		}
		/* Behind an op of an in-order destination that stopped: the
		 * flush that would show the op visible is refused too. */
		for (uint32_t a = 0; a < b && !reason; a++) {
			const struct om_op *A = &p->op[a];

			if (!om_rule(p, a, b) ||
			    !p->dest_in_order[A->dest % OM_MAX_DEST])
				continue;
			for (uint32_t x = 0; x < p->n && !reason; x++)
				reason = om_is_mem(&p->op[x]) &&
					 p->op[x].dest == A->dest &&
					 t->fate[x] != OM_PERFORMED;
		}
		if (!reason)
			SAY(OM_V_EXCESS,
				"op %u cancelled, though nothing it follows failed", b);
	}
	return OM_OK;
}

int om_check(const struct om_prog *p, const struct om_trace *t,
	     unsigned int flags, struct om_result *res, char *why,
	     size_t len)
{
	struct om_result local;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	res->verdict = check(p, t, flags, res, why, len);
	if (!res->verdict) {
		res->a = res->b = 0;
		res->rule = NULL;
	}
	return res->verdict;
}
