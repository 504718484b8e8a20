// SPDX-License-Identifier: MIT
/*
 * Exhaustive explorer for the store orderer.
 *
 * Every program of 1..4 operations drawn from {unordered, weak, strong}
 * stores on 2 channels and fences on 2 destinations, followed by a global
 * fence (what quiet issues), is run on the model fabric of helpers.h under
 * every order in which submissions, deliveries, acks (cumulative, possibly
 * stale) and flush responses can happen.  States reached twice are
 * explored once (hashed).  Invariants, in every state:
 *   - no strong store and no fenced store landed early (the observer);
 *   - no engine call failed; counters match the fabric;
 *   - a state with nothing left to happen is drained: everything landed,
 *     the orderer quiescent, every counter raised exactly as often as
 *     lowered (no deadlock, counters conserve).
 * Two channel layouts: one posted + one acked channel on two destinations
 * (with and without acks on the posted channel), and two acked channels.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "engine_model.h"

#define MAX_LEN 4
#define MAX_DEPTH 64
#define NSYM 8

struct explorer {
	struct t_fabric lvl[MAX_DEPTH];
	uint64_t *set;
	size_t set_cap, set_used;
	uint64_t states, terminal, programs;
	int failed;
	char why[512];
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* A canonical digest of everything that decides the future. */
static uint64_t digest(const struct t_fabric *f)
{
	const struct oms_so *so = &f->so;
	uint64_t h = 0x12345, acks[T_MAX_MSGS];

	h = mix(h, f->pc);
	for (uint32_t i = 0; i < f->nops; i++)
		h = mix(h, f->issued[i] | f->delivered[i] << 1 |
			   f->opseq[i] << 2);
	for (uint32_t c = 0; c < f->nch; c++) {
		h = mix(h, f->qn[c]);
		for (uint32_t k = 0; k < f->qn[c]; k++)
			h = mix(h, f->q[c][k]);
		/* ack messages are a multiset */
		memcpy(acks, f->acks[c], f->nacks[c] * sizeof(acks[0]));
		for (uint32_t a = 1; a < f->nacks[c]; a++)
			for (uint32_t b = a; b > 0 && acks[b - 1] > acks[b]; b--) {
				uint64_t t = acks[b];

				acks[b] = acks[b - 1];
				acks[b - 1] = t;
			}
		h = mix(h, f->nacks[c]);
		for (uint32_t k = 0; k < f->nacks[c]; k++)
			h = mix(h, acks[k]);
		h = mix(h, f->flush_req[c] | f->flush_tok[c] << 1);
		h = mix(h, so->chan[c].issued | so->chan[c].visible << 16 |
			   so->chan[c].flush_token << 32 |
			   so->chan[c].fifo_released << 48 |
			   (uint64_t)so->chan[c].flush_inflight << 63);
	}
	h = mix(h, f->uqn);
	for (uint32_t k = 0; k < f->uqn; k++)
		h = mix(h, f->uq[k]);
	h = mix(h, so->count | (uint64_t)so->all_fences << 32);
	for (uint32_t i = 0; i < so->count; i++) {
		const struct oms_so_held *e =
			&so->held[(so->head + i) % so->max_held];
		const uint64_t *s =
			so->snap + ((so->head + i) % so->max_held) * so->nchan;

		h = mix(h, e->st.cookie | (uint64_t)e->st.cls << 32 |
			   (uint64_t)e->dest << 40);
		for (uint32_t x = 0; x < so->nchan; x++)
			h = mix(h, s[x]);
	}
	for (uint32_t d = 0; d < so->ndest; d++)
		h = mix(h, so->dest_fences[d]);
	return h ? h : 1;
}

/* Open-addressing set of digests; returns 1 if @h was new. */
static int set_add(struct explorer *e, uint64_t h)
{
	size_t i;

	if (2 * (e->set_used + 1) > e->set_cap) {
		uint64_t *old = e->set;
		size_t oc = e->set_cap;

		e->set_cap = oc ? oc * 2 : 1 << 16;
		e->set = calloc(e->set_cap, sizeof(*e->set));
		e->set_used = 0;
		for (size_t k = 0; k < oc; k++)
			if (old[k])
				set_add(e, old[k]);
		free(old);
	}
	for (i = h & (e->set_cap - 1); e->set[i]; i = (i + 1) & (e->set_cap - 1))
		if (e->set[i] == h)
			return 0;
	e->set[i] = h;
	e->set_used++;
	return 1;
}

static void fail(struct explorer *e, const struct t_fabric *f, const char *w)
{
	char prog[96] = "";
	static const char cls[] = "UWS";

	if (e->failed++)
		return;
	for (uint32_t i = 0; i < f->nops; i++) {
		char op[16];

		if (f->ops[i].kind == T_OP_FENCE)
			snprintf(op, sizeof(op), "F%d ", f->ops[i].scope ==
				 OMS_SO_ALL ? 9 : f->ops[i].scope);
		else
			snprintf(op, sizeof(op), "%c%u ", cls[f->ops[i].cls],
				 f->ops[i].chan);
		strncat(prog, op, sizeof(prog) - strlen(prog) - 1);
	}
	snprintf(e->why, sizeof(e->why), "%.64s | program: %.96s| %.160s", w, prog,
		 f->why);
}

static int counters_match(const struct t_fabric *f)
{
	uint64_t held = 0, unacked = 0;

	/* held ordered ops: not markers (cls 0xfe, 0xff), not unordered
	 * stores held behind a held one of the same bytes */
	for (uint32_t i = 0; i < f->so.count; i++) {
		uint8_t cls = f->so.held[(f->so.head + i) %
					 f->so.max_held].st.cls;

		held += cls != OMS_STORE_UNORDERED && cls < 0xfe;
	}
	for (uint32_t c = 0; c < f->nch; c++)
		unacked += f->so.chan[c].issued - f->so.chan[c].visible;
	return held == f->so.ctr.pending_issue &&
	       unacked == f->so.ctr.pending_ack;
}

static void dfs(struct explorer *e, int depth)
{
	struct t_fabric *f = &e->lvl[depth];
	struct t_event ev[64];
	uint32_t n;

	if (e->failed || !set_add(e, digest(f)))
		return;
	e->states++;
	if (f->violations || f->err) {
		fail(e, f, f->err ? "engine call failed" : "ordering violated");
		return;
	}
	if (!counters_match(f)) {
		fail(e, f, "counters disagree with the fabric");
		return;
	}
	n = t_fab_events(f, ev, 64);
	if (!n) {
		e->terminal++;
		if (!t_fab_settled(f))
			fail(e, f, "stuck: nothing can happen, not drained");
		return;
	}
	if (depth + 1 >= MAX_DEPTH) {
		fail(e, f, "too deep");
		return;
	}
	for (uint32_t k = 0; k < n && !e->failed; k++) {
		t_fab_copy(&e->lvl[depth + 1], f);
		t_fab_step(&e->lvl[depth + 1], &ev[k]);
		dfs(e, depth + 1);
	}
}

static void add_symbol(struct t_fabric *f, unsigned int sym, unsigned int i)
{
	if (sym < 6)	/* class = sym / 2, channel = sym % 2 */
		t_fab_store(f, (uint8_t)(sym / 2), (uint16_t)(sym % 2),
			    (uint8_t)(i % 2), i + 1);
	else
		t_fab_fence(f, (uint16_t)(sym - 6));
}

static int explore_layout(struct explorer *e,
			  const struct oms_so_chan_cfg *cfg, int posted_acks)
{
	for (unsigned int len = 1; len <= MAX_LEN; len++) {
		unsigned int total = 1;

		for (unsigned int i = 0; i < len; i++)
			total *= NSYM;
		for (unsigned int p = 0; p < total && !e->failed; p++) {
			struct t_fabric *f = &e->lvl[0];
			unsigned int code = p;

			for (int d = 0; d < MAX_DEPTH; d++)
				t_fab_fini(&e->lvl[d]);
			for (int d = 0; d < MAX_DEPTH; d++)
				if (t_fab_init(&e->lvl[d], 2, cfg, 2, 0))
					return -1;
			f->posted_acks = posted_acks;
			for (unsigned int i = 0; i < len; i++, code /= NSYM)
				add_symbol(f, code % NSYM, i);
			t_fab_fence(f, OMS_SO_ALL);
			if (e->set)
				memset(e->set, 0, e->set_cap * sizeof(*e->set));
			e->set_used = 0;
			dfs(e, 0);
			e->programs++;
		}
	}
	return 0;
}

TEST(explore_all_programs_up_to_4_ops)
{
	static const struct oms_so_chan_cfg posted_acked[] = {
		{ .dest = 0, .kind = OMS_CHAN_POSTED },
		{ .dest = 1, .kind = OMS_CHAN_ACKED },
	};
	static const struct oms_so_chan_cfg acked_acked[] = {
		{ .dest = 0, .kind = OMS_CHAN_ACKED },
		{ .dest = 1, .kind = OMS_CHAN_ACKED },
	};
	struct explorer *e = calloc(1, sizeof(*e));

	ASSERT_NE(NULL, e);
	ASSERT_EQ(0, explore_layout(e, posted_acked, 0));
	ASSERT_EQ(0, e->failed) TH_LOG("%s", e->why);
	ASSERT_EQ(0, explore_layout(e, posted_acked, 1));
	ASSERT_EQ(0, e->failed) TH_LOG("%s", e->why);
	ASSERT_EQ(0, explore_layout(e, acked_acked, 0));
	ASSERT_EQ(0, e->failed) TH_LOG("%s", e->why);
	ksft_print_msg("explorer: %llu programs, %llu states, %llu terminal states, 0 violations\n",
		       (unsigned long long)e->programs,
		       (unsigned long long)e->states,
		       (unsigned long long)e->terminal);
	fflush(stdout);
	for (int d = 0; d < MAX_DEPTH; d++)
		t_fab_fini(&e->lvl[d]);
	free(e->set);
	free(e);
}

TEST_HARNESS_MAIN
