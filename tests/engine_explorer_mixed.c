// SPDX-License-Identifier: MIT
/*
 * Exhaustive explorer for whole programs: the store orderer
 * (lib/engine/store_order.c) on the model device of tests/helpers.h
 * (t_mx_*), checked against the reference model of tests/ordering_model.h.
 *
 * Coverage: every canonical program of up to 3 ops, and two 4-op tiers
 * (tiers[] below; OMS_MIXED_LONG=1 adds long_tiers[], minutes), on
 * acked+acked, posted+acked and seq+seq channels.  Any violation fails
 * the test, with the smallest program and a schedule that shows it; six
 * device mutations check that the explorer notices a broken device.
 *
 * Every state reached is hashed (t_mx_digest(): device, trace and
 * orderer) and explored once per program; states fork with oms_so_copy().
 * At every terminal state (nothing can happen any more):
 *   - the trace satisfies the reference model (om_check() with
 *     OM_CHECK_PRECISION: order, failed ops never performed, quiet, read
 *     values, nothing cancelled for nothing);
 *   - the whole program was submitted, the orderer is quiescent after
 *     oms_so_quiet(), the first error is the injected failure's own, and
 *     after oms_so_resume() every counter was raised as often as lowered
 *     (t_mx_finish()).
 * No engine call may fail in any state.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "engine_model.h"

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
	uint64_t violations;	/* terminal states (or calls) breaking it */
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
			size_t o = strlen(k->example);
			char step[sizeof(e->path[d])];

			if (o + 1 >= sizeof(k->example))
				break;
			memcpy(step, e->path[d], sizeof(step));
			step[sizeof(step) - 1] = 0;
			snprintf(k->example + o, sizeof(k->example) - o,
				 " %s", step);
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
	uint32_t shape_mask;	/* shapes used (bit = index in shapes[]) */
	uint32_t fence_mask;	/* 1: fence(0), 2: fence(1), 4: global */
	uint32_t addrs;		/* addresses per destination: 1 or 2 */
};

#define NSYM	(NSHAPES * 4 + 3)

static int decode(struct om_op *o, unsigned int sym, const struct alphabet *a)
{
	memset(o, 0, sizeof(*o));
	if (sym >= NSHAPES * 4) {
		if (!(a->fence_mask & (1u << (sym - NSHAPES * 4))))
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
	return o->addr < a->addrs;
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

/* Shapes by name, for alphabets. */
#define SH(i)	(1u << (i))
#define SH_U	SH(0)
#define SH_W	SH(1)
#define SH_S	SH(2)
#define SH_REL	SH(3)
#define SH_G	SH(4)
#define SH_ACQ	SH(5)
#define SH_FAA	SH(6)
#define SH_CAS	SH(7)

/* The tiers explored (the header's coverage table). */
struct tier {
	unsigned int len;
	struct alphabet a;
	const char *name;
};

static const struct tier tiers[] = {
	{ 1, { SH(NSHAPES) - 1, 7, 2 }, "1 op, everything" },
	{ 2, { SH(NSHAPES) - 1, 7, 2 }, "2 ops, everything" },
	{ 3, { SH(NSHAPES) - 1, 7, 2 }, "3 ops, everything" },
	{ 4, { SH_W | SH_S | SH_ACQ | SH_FAA, 4, 1 },
	  "4 ops: W S ACQ FAA, fence_global, one address per destination" },
	{ 4, { SH_U | SH_W | SH_S, 3, 1 },
	  "4 ops: U W S, fence(0) fence(1), one address per destination" },
};

/* OMS_MIXED_LONG=1: also these (minutes). */
static const struct tier long_tiers[] = {
	{ 4, { SH_U | SH_W | SH_S | SH_ACQ, 7, 2 },
	  "4 ops: U W S ACQ, every fence, two addresses" },
	{ 4, { SH_W | SH_S | SH_REL | SH_G | SH_ACQ | SH_FAA, 4, 1 },
	  "4 ops: W S REL G ACQ FAA, fence_global, one address" },
};

static void explore_tiers(struct explorer *e, const struct tier *t,
			  unsigned int n)
{
	for (unsigned int i = 0; i < n && !done(e); i++)
		for (unsigned int l = 0; l < NLAYOUTS && !done(e); l++)
			explore(e, layouts[l], t[i].len, &t[i].a);
}

static void explore_all(struct explorer *e)
{
	const char *l = getenv("OMS_MIXED_LONG");

	explore_tiers(e, tiers, sizeof(tiers) / sizeof(tiers[0]));
	if (l && *l && *l != '0')
		explore_tiers(e, long_tiers,
			      sizeof(long_tiers) / sizeof(long_tiers[0]));
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

/* With OMS_MIXED_LONG=1 this takes about 245 s of CPU on this machine
 * kind; two checkouts running make check at once gave it a quarter of a
 * core and 600 s ran out.  The bound is a hang detector, not a budget. */
TEST_F_TIMEOUT(mixed, explore_programs, 2400)
{
	struct explorer *e = explorer_new(T_MX_MUT_NONE);
	clock_t t0 = clock();

	explore_all(e);
	ksft_print_msg("mixed explorer: %llu programs, %llu states, %llu terminal states, %llu violations (%llu runs, %.1f s)\n",
		       (unsigned long long)e->programs,
		       (unsigned long long)e->states,
		       (unsigned long long)e->terminal,
		       (unsigned long long)e->violations,
		       (unsigned long long)e->runs,
		       (double)(clock() - t0) / CLOCKS_PER_SEC);
	for (uint32_t i = 0; i < e->nkinds; i++)
		ksft_print_msg("violation %s: %llu terminal states; smallest: %s\n",
			       e->kinds_seen[i].key,
			       (unsigned long long)e->kinds_seen[i].runs,
			       e->kinds_seen[i].example);
	fflush(stdout);
	ASSERT_EQ(0, e->violations) TH_LOG("%s", e->why);
	explorer_free(e);
}

/* Each mutation breaks one duty of the device (or tells the orderer a
 * wrong channel kind), or drops the orderer's holds of one kind (the
 * device performs a held op when it is submitted); the explorer must
 * find a violation. */
static const struct {
	uint32_t mut;
	const char *name;
} mutations[] = {
	{ T_MX_MUT_NO_FENCE, "device ignores OMS_SO_A_FENCE" },
	{ T_MX_MUT_CANCEL_ISSUES, "CANCEL delivered as an ISSUE" },
	{ T_MX_MUT_POSTED_ACKED, "posted ack taken as visibility" },
	{ T_MX_MUT_GET_EARLY_ACK, "get acked before it read (acquire barrier opens early)" },
	{ T_MX_MUT_SEQ_ARRIVAL, "SEQ channel ignores sequence numbers" },
	{ T_MX_MUT_POSTED_REORDER, "posted channel lands puts out of order" },
	{ T_MX_MUT_NO_HOLD_STRONG, "orderer's hold of strong puts dropped (S1)" },
	{ T_MX_MUT_NO_HOLD_OTHER, "orderer's other holds dropped (A1, A2, D1, behind held ops)" },
};

TEST_F_TIMEOUT(mixed, mutations_are_caught, 600)
{
	unsigned int caught = 0;

	for (unsigned int i = 0; i < sizeof(mutations) / sizeof(mutations[0]);
	     i++) {
		struct explorer *e = explorer_new(mutations[i].mut);

		e->first_only = 1;
		explore_tiers(e, tiers, sizeof(tiers) / sizeof(tiers[0]));
		ksft_print_msg("mutation %u (%s): %s after %llu programs%s%s\n",
			       mutations[i].mut, mutations[i].name,
			       e->violations ? "caught" : "NOT caught",
			       (unsigned long long)e->programs,
			       e->violations ? ": " : "",
			       e->violations ? e->why : "");
		caught += !!e->violations;
		explorer_free(e);
	}
	ksft_print_msg("mutations caught: %u of %zu\n", caught,
		       sizeof(mutations) / sizeof(mutations[0]));
	fflush(stdout);
	ASSERT_EQ(sizeof(mutations) / sizeof(mutations[0]), caught);
}

TEST_HARNESS_MAIN
