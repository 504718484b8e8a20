// SPDX-License-Identifier: MIT
/*
 * Exhaustive explorer for whole programs: the store orderer
 * (lib/engine/store_order.c) on the model device of tests/helpers.h
 * (t_mx_*), checked against the reference model of tests/ordering_model.h.
 *
 * COVERAGE is filled in below the code's first run (see the table at the
 * end of this comment).
 *
 * Every state reached is hashed (t_mx_digest(): device, trace and
 * orderer) and explored once per program; states fork with oms_so_copy().
 * At every terminal state (nothing can happen any more):
 *   - the trace satisfies the reference model (om_check() with
 *     OM_CHECK_PRECISION: order, failed ops never performed, quiet, read
 *     values, nothing cancelled for nothing);
 *   - the whole program was submitted, the orderer is quiescent after
 *     oms_so_drain(), the first error is the injected failure's own, and
 *     after oms_so_resume() every counter was raised as often as lowered
 *     (t_mx_finish()).
 * No engine call may fail in any state.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define MAX_DEPTH	80

/* Memory op shapes: kind, class / acquire. */
struct shape {
	uint8_t kind, cls, acquire;
	const char *name;
};

static const struct shape shapes[] = {
	{ OM_PUT, OM_U, 0, "U" },
	{ OM_PUT, OM_W, 0, "W" },
	{ OM_PUT, OM_S, 0, "S" },
	{ OM_PUT, OM_REL, 0, "REL" },
	{ OM_GET, 0, 0, "G" },
	{ OM_GET, 0, 1, "ACQ" },
	{ OM_FAA, 0, 0, "FAA" },
	{ OM_CAS, 0, 0, "CAS" },
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

#define NKINDS	16

/* Violations, by kind (verdict and rule): how many runs, first example
 * (programs are enumerated shortest first: the smallest). */
struct vkind {
	char key[48];
	uint64_t runs;
	char example[1200];
};

struct explorer {
	struct t_mx lvl[MAX_DEPTH];
	uint64_t *set;
	size_t *slots;
	size_t set_cap, set_used;
	uint64_t programs, runs, states, terminal;
	uint64_t violations;	/* beyond the known findings */
	uint64_t known;		/* terminal states showing a known one */
	struct vkind kinds_seen[NKINDS];
	uint32_t nkinds;
	int stop;		/* this run found one: leave it */
	int first_only;		/* stop everything at the first */
	char path[MAX_DEPTH][24];	/* the schedule to this state */
	uint32_t mut;		/* T_MX_MUT_* under test */
	uint8_t kinds[2];
	char why[1200];
};

/* Open-addressing set of digests, emptied per run by the slots it used. */
static int set_add(struct explorer *e, uint64_t h)
{
	size_t i;

	if (2 * (e->set_used + 1) > e->set_cap) {
		uint64_t *old = e->set;
		size_t oc = e->set_cap;

		e->set_cap = oc ? oc * 2 : 1 << 14;
		e->set = calloc(e->set_cap, sizeof(*e->set));
		free(e->slots);
		e->slots = calloc(e->set_cap / 2 + 1, sizeof(*e->slots));
		if (!e->set || !e->slots)
			abort();
		e->set_used = 0;
		for (size_t k = 0; k < oc; k++)
			if (old[k])
				set_add(e, old[k]);
		free(old);
	}
	for (i = h & (e->set_cap - 1); e->set[i];
	     i = (i + 1) & (e->set_cap - 1))
		if (e->set[i] == h)
			return 0;
	e->set[i] = h;
	e->slots[e->set_used++] = i;
	return 1;
}

static void set_clear(struct explorer *e)
{
	for (size_t k = 0; k < e->set_used; k++)
		e->set[e->slots[k]] = 0;
	e->set_used = 0;
}

static const char *kind_name(uint8_t k)
{
	return k == OMS_CHAN_ACKED ? "acked" : k == OMS_CHAN_POSTED ?
	       "posted" : "seq";
}

/* One event in words, from the state it happens in. */
static void describe(const struct t_mx *f, const struct t_event *ev,
		     char *buf, size_t len)
{
	const struct t_mx_chan *ch = &f->ch[ev->a % T_MX_CH];
	static const char *const et[] = { "op", "flush", "nop" };

	switch (ev->kind) {
	case T_MX_EV_SUBMIT:
		snprintf(buf, len, "submit %u", f->pc);
		break;
	case T_MX_EV_EXEC:
		if (ch->q[ev->b].type == T_MX_E_OP)
			snprintf(buf, len, "exec %u%s", ch->q[ev->b].op,
				 ch->q[ev->b].flags & OMS_SO_A_FENCE ?
				 "(fenced)" : "");
		else
			snprintf(buf, len, "exec %s@%u", et[ch->q[ev->b].type],
				 ev->a);
		break;
	case T_MX_EV_LAND:
		snprintf(buf, len, "land %u", ch->land[ev->b]);
		break;
	default:
		if (ch->cq[ev->b].type == T_MX_E_OP)
			snprintf(buf, len, "cpl %u%s", ch->cq[ev->b].op,
				 ch->cq[ev->b].status ? "(err)" : "");
		else
			snprintf(buf, len, "cpl %s@%u%s",
				 et[ch->cq[ev->b].type], ev->a,
				 ch->cq[ev->b].status ? "(err)" : "");
		break;
	}
}

/*
 * Engine findings: violations of the contract that this explorer found in
 * lib/engine/store_order.c (with the device of lib/backend.h) and that are
 * reported, not fixed here.  Each is recognised precisely (verdict, rule,
 * fates of the two ops) so that anything else is still a failure; each is
 * counted and printed with its smallest program and a schedule.
 */
struct known {
	const char *id, *what;
	int (*match)(const struct t_mx *f, const struct om_result *r);
};

static int is_rule(const struct om_result *r, int verdict, const char *rule)
{
	return r->verdict == verdict && r->rule && !strcmp(r->rule, rule);
}

static int k_acq_fail_same_dest(const struct t_mx *f,
				const struct om_result *r)
{
	const struct om_op *a = &f->prog.op[r->a], *b = &f->prog.op[r->b];

	return is_rule(r, OM_V_ORDER, "A1") &&
	       f->tr.fate[r->a] != OM_PERFORMED && a->dest == b->dest;
}

static int k_atomic_fail_acquire(const struct t_mx *f,
				 const struct om_result *r)
{
	return is_rule(r, OM_V_ORDER, "A2") &&
	       f->tr.fate[r->a] != OM_PERFORMED;
}

static int k_after_cancelled(const struct t_mx *f, const struct om_result *r)
{
	return (is_rule(r, OM_V_ORDER, "R1") || is_rule(r, OM_V_ORDER, "D1")) &&
	       f->tr.fate[r->a] == OM_CANCELLED;
}

/* Stuck: a fenced op on a SEQ channel waits for an op posted before it
 * that carries a later sequence number, which waits for it. */
static int k_seq_fence_deadlock(const struct t_mx *f,
				const struct om_result *r)
{
	if (r->verdict != OM_V_QUIET)
		return 0;
	for (uint32_t c = 0; c < f->nch; c++) {
		const struct t_mx_chan *ch = &f->ch[c];

		if (f->kind[c] != OMS_CHAN_SEQ)
			continue;
		for (uint32_t k = 0; k < ch->qn; k++)
			for (uint32_t j = 0; j < k; j++)
				if ((ch->q[k].flags & OMS_SO_A_FENCE) &&
				    ch->q[j].seq != T_MX_NOSEQ &&
				    ch->q[k].seq != T_MX_NOSEQ &&
				    ch->q[j].seq > ch->q[k].seq)
					return 1;
	}
	return 0;
}

/* Cancelled for nothing, but an op later in program order to the same
 * destination was not performed (the orderer fenced the earlier op behind
 * it). */
static int k_fenced_behind_later(const struct t_mx *f,
				 const struct om_result *r)
{
	if (r->verdict != OM_V_EXCESS)
		return 0;
	for (uint32_t a = r->b + 1; a < f->prog.n; a++)
		if (om_is_mem(&f->prog.op[a]) &&
		    f->prog.op[a].dest == f->prog.op[r->b].dest &&
		    f->tr.fate[a] != OM_PERFORMED)
			return 1;
	return 0;
}

static const struct known known[] = {
	{ "K1", "A1 at the acquire's own destination after it failed (or "
		"was refused): an op "
		"issued while the acquire was in flight without a fence (a "
		"get: the RLSQ orders it but nothing cancels it), or released "
		"from the hold queue after the acquire completed with an error "
		"(no fence any more, not doomed), is performed",
	  k_acq_fail_same_dest },
	{ "K2", "A2: an acquire submitted after an atomic to its destination "
		"completed with an error (or was cancelled) is issued without "
		"a fence and not doomed: performed", k_atomic_fail_acquire },
	{ "K3", "R1/D1: an op the orderer cancelled (it followed a failure) "
		"does not stop a later release to its destination (R1), nor "
		"later ops of its DEST_SEQ stream (the NOP fills the gap, D1)",
	  k_after_cancelled },
	{ "K4", "deadlock: on a SEQ channel a held strong put is issued with "
		"OMS_SO_A_FENCE (posted fast path, read in flight) after a "
		"get with a later sequence number was posted: the fence waits "
		"for the get, the reorder buffer makes the get wait for it",
	  k_seq_fence_deadlock },
	{ "K5", "over-cancelling: a held op released from the hold queue is "
		"fenced behind reads, acquires or atomics issued after it in "
		"program order (fence_flags() looks at what is in flight on "
		"the channel), so their failure cancels it",
	  k_fenced_behind_later },
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

static void record(struct explorer *e, const struct t_mx *f,
		   const char *key, const char *what, int depth)
{
	char prog[160];
	struct vkind *k = NULL;

	for (uint32_t i = 0; i < e->nkinds; i++)
		if (!strcmp(e->kinds_seen[i].key, key))
			k = &e->kinds_seen[i];
	if (!k && e->nkinds < NKINDS) {
		k = &e->kinds_seen[e->nkinds++];
		snprintf(k->key, sizeof(k->key), "%s", key);
		om_format(&f->prog, prog, sizeof(prog));
		snprintf(k->example, sizeof(k->example),
			 "[%s+%s] %s | %s | schedule:",
			 kind_name(e->kinds[0]), kind_name(e->kinds[1]), prog,
			 what);
		for (int d = 0; d < depth; d++) {
			strncat(k->example, " ",
				sizeof(k->example) - strlen(k->example) - 1);
			strncat(k->example, e->path[d],
				sizeof(k->example) - strlen(k->example) - 1);
		}
	}
	if (k)
		k->runs++;
}

/* A terminal state (or a failed call) that breaks the contract. */
static void violation(struct explorer *e, const struct t_mx *f,
		      const struct om_result *r, const char *what, int depth)
{
	char key[48];

	for (uint32_t i = 0; r && i < NKNOWN && !e->mut; i++)
		if (known[i].match(f, r)) {
			e->known++;
			record(e, f, known[i].id, what, depth);
			return;
		}
	if (r && r->verdict)
		snprintf(key, sizeof(key), "%s%s%s", om_verdict_name(r->verdict),
			 r->rule ? " " : "", r->rule ? r->rule : "");
	else
		snprintf(key, sizeof(key), "%s", what);
	if (!e->violations++) {
		record(e, f, key, what, depth);
		snprintf(e->why, sizeof(e->why), "%s",
			 e->kinds_seen[e->nkinds - 1].example);
	} else {
		record(e, f, key, what, depth);
	}
	if (e->first_only)
		e->stop = 1;
}

static void dfs(struct explorer *e, int depth)
{
	struct t_mx *f = &e->lvl[depth];
	struct t_event ev[64];
	uint32_t n;

	if (e->stop || !set_add(e, t_mx_digest(f)))
		return;
	e->states++;
	if (f->err) {
		violation(e, f, NULL, f->why, depth);
		return;
	}
	n = t_mx_events(f, ev, 64);
	if (!n) {
		struct om_result r;
		char why[200], w[300];

		e->terminal++;
		if (om_check(&f->prog, &f->tr, OM_CHECK_PRECISION, &r, why,
			     sizeof(why))) {
			snprintf(w, sizeof(w), "%s: %s",
				 om_verdict_name(r.verdict), why);
			violation(e, f, &r, w, depth);
		} else if (t_mx_finish(f)) {
			violation(e, f, NULL, f->why, depth);
		}
		return;
	}
	if (depth + 1 >= MAX_DEPTH) {
		violation(e, f, NULL, "too deep", depth);
		return;
	}
	for (uint32_t k = 0; k < n && !e->stop; k++) {
		describe(f, &ev[k], e->path[depth], sizeof(e->path[depth]));
		t_mx_copy(&e->lvl[depth + 1], f);
		t_mx_step(&e->lvl[depth + 1], &ev[k]);
		dfs(e, depth + 1);
	}
}

/* One program under every schedule, without and with each one failure. */
static void run_program(struct explorer *e, const struct om_prog *p)
{
	e->programs++;
	for (int fail = -1; fail < (int)p->n && !e->stop; fail++) {
		struct om_prog q = *p;

		if (fail >= 0 && !om_is_mem(&q.op[fail]))
			continue;
		if (fail >= 0)
			q.op[fail].fail = 1;
		t_mx_set_prog(&e->lvl[0], &q);
		set_clear(e);
		dfs(e, 0);
		e->runs++;
	}
}

static int done(const struct explorer *e)
{
	return e->first_only && e->violations;
}


/*
 * Program enumeration.  Symbols: a memory op (shape, destination,
 * address 0 or 1) or a fence (fence(0), fence(1), fence_global).
 * Canonical forms only: the first op naming a destination uses its
 * address 0 (addresses are names); in a symmetric layout the first
 * destination named is 0; no program starts or ends with a fence (it
 * orders nothing).
 */
struct alphabet {
	uint32_t shape_mask;	/* shapes used */
	int fences;		/* fences used */
};

#define NSYM	(NSHAPES * 4 + 3)

static int decode(struct om_op *o, unsigned int sym, const struct alphabet *a)
{
	memset(o, 0, sizeof(*o));
	if (sym >= NSHAPES * 4) {
		if (!a->fences)
			return 0;
		o->kind = sym - NSHAPES * 4 == 2 ? OM_FENCE_ALL : OM_FENCE;
		o->dest = (uint8_t)((sym - NSHAPES * 4) & 1);
		return 1;
	}
	if (!(a->shape_mask & (1u << (sym / 4))))
		return 0;
	o->kind = shapes[sym / 4].kind;
	o->cls = shapes[sym / 4].cls;
	o->acquire = shapes[sym / 4].acquire;
	o->dest = (uint8_t)((sym >> 1) & 1);
	o->addr = (uint8_t)(sym & 1);
	return 1;
}

static int canonical(const struct om_prog *p, int symmetric)
{
	int seen[2] = { 0, 0 }, first = -1;

	if (!om_is_mem(&p->op[0]) || !om_is_mem(&p->op[p->n - 1]))
		return 0;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct om_op *o = &p->op[i];

		if (o->kind == OM_FENCE_ALL)
			continue;
		if (first < 0)
			first = o->dest;
		if (!om_is_mem(o))
			continue;
		if (!seen[o->dest] && o->addr)
			return 0;
		seen[o->dest] = 1;
	}
	return !symmetric || first == 0;
}

static void explore(struct explorer *e, const uint8_t kinds[2],
		    unsigned int len, const struct alphabet *a)
{
	unsigned int total = 1;
	int symmetric = kinds[0] == kinds[1];

	for (unsigned int i = 0; i < len; i++)
		total *= NSYM;
	for (int d = 0; d < MAX_DEPTH; d++) {
		t_mx_fini(&e->lvl[d]);
		if (t_mx_init(&e->lvl[d], 2, kinds, e->mut))
			abort();
	}
	e->kinds[0] = kinds[0];
	e->kinds[1] = kinds[1];
	for (unsigned int code = 0; code < total && !done(e); code++) {
		struct om_prog p;
		unsigned int c = code;
		int ok = 1;

		memset(&p, 0, sizeof(p));
		p.n = len;
		for (unsigned int i = 0; i < len && ok; i++, c /= NSYM)
			ok = decode(&p.op[i], c % NSYM, a);
		if (ok && canonical(&p, symmetric))
			run_program(e, &p);
	}
}

static const uint8_t layouts[][2] = {
	{ OMS_CHAN_ACKED, OMS_CHAN_ACKED },
	{ OMS_CHAN_POSTED, OMS_CHAN_ACKED },
	{ OMS_CHAN_SEQ, OMS_CHAN_SEQ },
};
#define NLAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

static struct explorer *explorer_new(uint32_t mut)
{
	struct explorer *e = calloc(1, sizeof(*e));

	if (!e)
		abort();
	e->mut = mut;
	set_add(e, 1);		/* allocate */
	return e;
}

static void explorer_free(struct explorer *e)
{
	for (int d = 0; d < MAX_DEPTH; d++)
		t_mx_fini(&e->lvl[d]);
	free(e->set);
	free(e->slots);
	free(e);
}

/* The tiers explored (the header's coverage table). */
static void explore_all(struct explorer *e, unsigned int max_len)
{
	const struct alphabet full = { (1u << NSHAPES) - 1, 1 };

	for (unsigned int l = 0; l < NLAYOUTS && !done(e); l++)
		for (unsigned int len = 1; len <= max_len && !done(e);
		     len++)
			explore(e, layouts[l], len, &full);
}

FIXTURE(mixed) {
	int unused;
};

FIXTURE_SETUP(mixed)
{
}

FIXTURE_TEARDOWN(mixed)
{
}

TEST_F_TIMEOUT(mixed, explore_programs, 600)
{
	struct explorer *e = explorer_new(T_MX_MUT_NONE);
	clock_t t0 = clock();

	explore_all(e, (unsigned int)t_trials(3));
	ksft_print_msg("mixed explorer: %llu programs, %llu states, %llu terminal states, %llu violations (%llu runs, %.1f s)\n",
		       (unsigned long long)e->programs,
		       (unsigned long long)e->states,
		       (unsigned long long)e->terminal,
		       (unsigned long long)e->violations,
		       (unsigned long long)e->runs,
		       (double)(clock() - t0) / CLOCKS_PER_SEC);
	for (uint32_t i = 0; i < e->nkinds; i++) {
		const char *what = "NEW";

		for (uint32_t k = 0; k < NKNOWN; k++)
			if (!strcmp(known[k].id, e->kinds_seen[i].key))
				what = known[k].what;
		ksft_print_msg("%s %s: %llu terminal states; %s\n",
			       e->kinds_seen[i].key, what,
			       (unsigned long long)e->kinds_seen[i].runs,
			       e->kinds_seen[i].example);
	}
	ksft_print_msg("known engine findings (reported, not fixed here): %llu terminal states\n",
		       (unsigned long long)e->known);
	fflush(stdout);
	ASSERT_EQ(0, e->violations) TH_LOG("%s", e->why);
	explorer_free(e);
}

TEST_HARNESS_MAIN
