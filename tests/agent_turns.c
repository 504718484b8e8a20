// SPDX-License-Identifier: MIT
/*
 * The agent's round-robin turns (lib/agent/turns.h) driven on the host by
 * a model owner: connections with a backlog, room for so many answers
 * (the verbs agent's admit()), and a failure that may strike in a turn.
 * The promise: a backlog waiting for its turn sees at most 2 (n - 1)
 * quantum descriptors of other connections go first, and a run ends only
 * when no connection can move.  Each run's log of taken descriptors is
 * checked on its own terms: the waits are measured from the log (a wait
 * starts with the run, or after a full turn that left more behind), held
 * to the bound and matched against the count turns.c keeps, which the
 * verbs agent prints (OMS_AGENT_STATS) and the three-host suite asserts.
 * Every small case is run (up to three connections, each of every
 * backlog, room and failure kind, from every first connection); more
 * connections and runs with doorbells, acknowledgements and connections
 * coming and going between them are drawn from a fixed seed.
 *
 * Beside it the control: an owner that takes a whole backlog a turn (the
 * quantum ignored) makes a trickling requester wait past the bound, and
 * both the log and the count see it, so the check can fail.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile).
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "agent/turns.h"

#define MAXC	8
#define LOGN	4096
#define ROOM_ANY UINT32_MAX

struct mconn {
	int id;			/* for the log: stays with the connection */
	uint32_t backlog;
	uint32_t room;		/* answers it has room for; ROOM_ANY */
	uint32_t fail_after;	/* fails after taking this many; 0: never */
	uint32_t took;		/* in all, ring order checked by count */
	int err;
	struct oms_turn_wait wait;
};

/* One take() call: which connection, how many, what was asked. */
struct call {
	int id;
	uint32_t n, most;
	int full_more;		/* took @most and could still move */
	int run;		/* the oms_turns_run() it belongs to */
};

struct owner {
	struct mconn c[MAXC];
	uint32_t n;
	int greedy;		/* the control: a whole backlog a turn */
	struct call log[LOGN];
	uint32_t nlog;
	int run;
};

static uint32_t o_nlive(void *p)
{
	return ((struct owner *)p)->n;
}

static struct oms_turn_wait *o_wait(void *p, uint32_t k)
{
	return &((struct owner *)p)->c[k].wait;
}

static int can_move(const struct mconn *c)
{
	return c->backlog && !c->err;
}

static int o_ready(void *p, uint32_t k)
{
	return can_move(&((struct owner *)p)->c[k]);
}

static uint32_t o_take(void *p, uint32_t k, uint32_t most)
{
	struct owner *o = p;
	struct mconn *c = &o->c[k];
	uint32_t n = 0, limit = o->greedy ? UINT32_MAX : most;

	while (n < limit && c->backlog && !c->err && c->room) {
		c->backlog--;
		if (c->room != ROOM_ANY)
			c->room--;
		c->took++;
		n++;
		if (c->fail_after && c->took == c->fail_after)
			c->err = 1;	/* its answer could not go */
	}
	if (o->nlog < LOGN)
		o->log[o->nlog++] = (struct call){
			.id = c->id, .n = n, .most = most, .run = o->run,
			.full_more = n >= most && can_move(c) && c->room,
		};
	return n;
}

static const struct oms_turn_ops model_ops = {
	.nlive = o_nlive, .wait = o_wait, .ready = o_ready, .take = o_take,
};

/* What the log says of the waits, worked out without turns.c's state. */
struct measured {
	uint64_t waited, behind_max, past;
	int asked_more;		/* a call asked for other than the quantum */
};

/*
 * For each turn that took something: the others' descriptors taken since
 * its wait began (the run's first call, or just after its own last turn
 * of that run if that was a full one that left more).  A short turn
 * (nothing left, or no room) ends a wait.  @live: connections in the run.
 */
static void measure(const struct owner *o, uint32_t first_call, uint32_t q,
		    uint32_t live, struct measured *m)
{
	for (uint32_t i = first_call; i < o->nlog; i++) {
		const struct call *t = &o->log[i];
		uint64_t behind = 0;
		uint32_t j = i;

		if (t->most != q)
			m->asked_more = 1;
		if (!t->n)
			continue;
		/* back to the start of its wait */
		while (j > first_call) {
			const struct call *u = &o->log[j - 1];

			if (u->id == t->id) {
				if (!u->full_more)
					behind = 0;	/* it did not wait */
				break;
			}
			behind += u->n;
			j--;
		}
		if (!behind)
			continue;
		m->waited++;
		if (behind > 2ull * (live - 1) * q)
			m->past++;
		if (behind > m->behind_max)
			m->behind_max = behind;
	}
}

/* A run ends only when nothing can move: no backlog, a failure, or no
 * room. */
static int all_stuck(const struct owner *o)
{
	for (uint32_t k = 0; k < o->n; k++)
		if (can_move(&o->c[k]) && o->c[k].room)
			return 0;
	return 1;
}

/* Everything taken is accounted for, per connection (ring order: the
 * model takes from the head only, so counts are the order). */
static int accounted(const struct owner *o, const uint32_t *before)
{
	for (uint32_t k = 0; k < o->n; k++) {
		uint32_t sum = 0;

		for (uint32_t i = 0; i < o->nlog; i++)
			if (o->log[i].run == o->run &&
			    o->log[i].id == o->c[k].id)
				sum += o->log[i].n;
		if (sum != o->c[k].took - before[k])
			return 0;
	}
	return 1;
}

/* What the log says this run took, all connections. */
static uint64_t taken_in_run(const struct owner *o)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < o->nlog; i++)
		if (o->log[i].run == o->run)
			sum += o->log[i].n;
	return sum;
}

struct verdict {
	long runs, bad_bound, bad_count, bad_end, bad_asked;
	uint64_t waited, most_behind;
};

/* One oms_turns_run() on @o, checked; @t carries over between runs. */
static void run_checked(struct oms_turns *t, struct owner *o,
			struct verdict *v)
{
	struct oms_turn_stats st0 = t->st;
	uint32_t before[MAXC], first_call = o->nlog;
	struct measured m = { 0 };
	uint64_t got;

	for (uint32_t k = 0; k < o->n; k++)
		before[k] = o->c[k].took;
	o->run++;
	got = oms_turns_run(t, &model_ops, o);
	measure(o, first_call, t->quantum, o->n, &m);
	v->runs++;
	v->bad_bound += m.past != 0;
	v->bad_asked += m.asked_more;
	v->bad_end += !all_stuck(o) || !accounted(o, before) ||
		      o->nlog >= LOGN || got != taken_in_run(o);
	/* turns.c's count says what the log says */
	v->bad_count += t->st.waited - st0.waited != m.waited ||
			t->st.past - st0.past != m.past ||
			(m.behind_max > st0.behind_max &&
			 t->st.behind_max != m.behind_max);
	v->waited += m.waited;
	if (m.behind_max > v->most_behind)
		v->most_behind = m.behind_max;
}

/* The promise kept in every run: no wait past the bound, turns.c's
 * count equal to the log's, every run ended with nothing able to move,
 * every turn asked for a quantum. */
#define EXPECT_KEPT(v) do {			\
	EXPECT_EQ(0, (v).bad_bound);		\
	EXPECT_EQ(0, (v).bad_count);		\
	EXPECT_EQ(0, (v).bad_end);		\
	EXPECT_EQ(0, (v).bad_asked);		\
} while (0)

static const uint32_t backlogs[] = { 0, 1, 2, 5 };
static const uint32_t rooms[] = { 0, 1, ROOM_ANY };
static const uint32_t fails[] = { 0, 1 };
#define KINDS (4 * 3 * 2)

static void set_kind(struct mconn *c, int id, int kind)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->backlog = backlogs[kind % 4];
	c->room = rooms[kind / 4 % 3];
	c->fail_after = fails[kind / 12];
	oms_turn_wait_init(&c->wait);
}

/* Every case of up to @maxn connections, from every first connection,
 * quantum 2 (the bound is in quanta; 2 keeps a turn shorter than the
 * larger backlogs). */
static void explore(uint32_t maxn, int greedy, struct verdict *v)
{
	static struct owner o;

	for (uint32_t n = 1; n <= maxn; n++) {
		long cases = 1;

		for (uint32_t k = 0; k < n; k++)
			cases *= KINDS;
		for (long code = 0; code < cases; code++)
			for (uint32_t first = 0; first < n; first++) {
				struct oms_turns t;
				long c = code;

				memset(&o, 0, sizeof(o));
				o.n = n;
				o.greedy = greedy;
				for (uint32_t k = 0; k < n; k++, c /= KINDS)
					set_kind(&o.c[k], (int)k, (int)(c % KINDS));
				oms_turns_init(&t, 2);
				t.first = first;
				run_checked(&t, &o, v);
			}
	}
}

TEST(every_small_case_waits_within_the_bound_and_is_counted)
{
	struct verdict v = { 0 };

	explore(3, 0, &v);
	TH_LOG("%ld runs, %llu turns waited, at most %llu behind "
	       "(bound 8 at three connections)", v.runs,
	       (unsigned long long)v.waited,
	       (unsigned long long)v.most_behind);
	EXPECT_KEPT(v);
	EXPECT_LT(0, v.waited);	/* the cases did make turns wait */
	EXPECT_EQ(8, v.most_behind);	/* and the bound is reached */
}

TEST(control_a_whole_backlog_a_turn_waits_past_the_bound)
{
	struct verdict v = { 0 };

	explore(3, 1, &v);
	TH_LOG("greedy owner: %ld of %ld runs past the bound, at most "
	       "%llu behind", v.bad_bound, v.runs,
	       (unsigned long long)v.most_behind);
	EXPECT_LT(0, v.bad_bound);	/* the forbidden outcome happens */
	EXPECT_EQ(0, v.bad_count);	/* and the count sees each one */
}

/* Churn between runs: doorbells, acknowledgements, failures, a
 * connection leaving (the agent packs its array: the last moves into the
 * hole) or coming, up to MAXC connections, quantum 16 as the agent's. */
static void churn(int greedy, long runs, struct verdict *v)
{
	static struct owner o;
	struct oms_turns t;
	unsigned int seed = 0x7e57;
	int next_id = 0;

	memset(&o, 0, sizeof(o));
	oms_turns_init(&t, 16);
	o.greedy = greedy;
	for (long r = 0; r < runs; r++) {
		if (o.nlog > LOGN / 2)
			o.nlog = 0;	/* each run is checked on its own */
		if (o.n && rand_r(&seed) % 6 == 0) {
			uint32_t k = (uint32_t)rand_r(&seed) % o.n;

			o.c[k] = o.c[--o.n];
		}
		if (o.n < MAXC && (o.n < 2 || rand_r(&seed) % 4 == 0)) {
			set_kind(&o.c[o.n], next_id, 0);
			next_id++;
			o.n++;
		}
		for (uint32_t k = 0; k < o.n; k++) {
			struct mconn *c = &o.c[k];
			uint32_t roll = (uint32_t)rand_r(&seed) % 8;

			if (c->err)
				continue;
			if (roll < 3)	/* a doorbell: one, a batch, a flood */
				c->backlog += roll == 0 ? 1 : roll == 1 ? 16 :
					      (uint32_t)rand_r(&seed) % 200;
			else if (roll < 6 && c->room != ROOM_ANY)
				c->room += (uint32_t)rand_r(&seed) % 48;
			else if (roll == 6)
				c->room = ROOM_ANY;
			if (rand_r(&seed) % 64 == 0)
				c->fail_after = c->took + 1 +
						(uint32_t)rand_r(&seed) % 20;
		}
		run_checked(&t, &o, v);
	}
}

TEST(doorbells_acks_and_connections_between_runs_keep_the_promise)
{
	struct verdict v = { 0 };

	churn(0, t_quick() ? 20000 : 200000, &v);
	TH_LOG("%ld runs, %llu turns waited, at most %llu behind",
	       v.runs, (unsigned long long)v.waited,
	       (unsigned long long)v.most_behind);
	EXPECT_KEPT(v);
	EXPECT_LT(16, v.most_behind);	/* waits of more than one turn */
}

TEST(control_churn_with_a_whole_backlog_a_turn_waits_past_the_bound)
{
	struct verdict v = { 0 };

	churn(1, t_quick() ? 20000 : 200000, &v);
	TH_LOG("greedy owner: %ld of %ld runs past the bound",
	       v.bad_bound, v.runs);
	EXPECT_LT(0, v.bad_bound);
	EXPECT_EQ(0, v.bad_count);
}

/* One run, quantum 16, of @n connections with these backlogs and room
 * for all of them. */
static void run_backlogs(struct owner *o, struct oms_turns *t,
			 const uint32_t *backlog, uint32_t n,
			 struct verdict *v)
{
	memset(o, 0, sizeof(*o));
	for (uint32_t k = 0; k < n; k++) {
		set_kind(&o->c[k], (int)k, 0);
		o->c[k].room = ROOM_ANY;
		o->c[k].backlog = backlog[k];
	}
	o->n = n;
	oms_turns_init(t, 16);
	run_checked(t, o, v);
}

/* The agent's case: one requester floods, three trickle; each trickler
 * is served in the first pass, behind at most the flood's one turn and
 * the other tricklers'. */
TEST(a_flood_gets_its_turn_and_no_more)
{
	static struct owner o;
	struct oms_turns t;
	struct verdict v = { 0 };

	run_backlogs(&o, &t, (const uint32_t[]){ 1000, 1, 1, 1 }, 4, &v);
	ASSERT_EQ(0, v.bad_end);
	EXPECT_EQ(0, v.bad_count);
	/* pass one: 16 of the flood, then 1, 1, 1; then the flood alone */
	ASSERT_LE(4, o.nlog);
	EXPECT_EQ(16, o.log[0].n);
	for (int i = 1; i < 4; i++) {
		EXPECT_EQ(i, o.log[i].id);
		EXPECT_EQ(1, o.log[i].n);
	}
	EXPECT_EQ(18, v.most_behind);	/* the last trickler: 16 + 1 + 1 */
	EXPECT_EQ(1000, o.c[0].took);
	EXPECT_EQ(1003, t.taken);
}

/* Each pass starts one connection further on, so that no connection is
 * always first (or always last) when a round begins: three backlogs of
 * three turns each are taken 0 1 2, 1 2 0, 2 0 1. */
TEST(each_pass_starts_one_connection_further_on)
{
	static const int want[9] = { 0, 1, 2, 1, 2, 0, 2, 0, 1 };
	static struct owner o;
	struct oms_turns t;
	struct verdict v = { 0 };

	run_backlogs(&o, &t, (const uint32_t[]){ 48, 48, 48 }, 3, &v);
	EXPECT_KEPT(v);
	ASSERT_EQ(9, o.nlog);
	for (int i = 0; i < 9; i++) {
		EXPECT_EQ(want[i], o.log[i].id);
		EXPECT_EQ(16, o.log[i].n);
	}
	EXPECT_EQ(1, t.first);	/* four passes: the last moved nothing */
}

/* A quantum of 0 would stop every turn: it is taken as 1. */
TEST(quantum_zero_is_one)
{
	struct oms_turns t;

	oms_turns_init(&t, 0);
	EXPECT_EQ(1, t.quantum);
	EXPECT_EQ(0, oms_turns_bound(&t, 1));
	EXPECT_EQ(0, oms_turns_bound(&t, 0));
	EXPECT_EQ(6, oms_turns_bound(&t, 4));
}

TEST_HARNESS_MAIN
