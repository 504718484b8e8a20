// SPDX-License-Identifier: MIT
#include <stdlib.h>

#include "helpers.h"

uint64_t t_seed(uint64_t dflt)
{
	const char *s = getenv("OMS_TEST_SEED");

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

void t_shuffle_u32(struct t_rng *r, uint32_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = t_rng_below(r, (uint32_t)i);
		uint32_t tmp = v[i - 1];

		v[i - 1] = v[j];
		v[j] = tmp;
	}
}

unsigned long t_trials(unsigned long dflt)
{
	const char *s = getenv("OMS_TEST_TRIALS");

	return s && *s ? strtoul(s, NULL, 0) : dflt;
}

/* ---- model fabric for the store orderer (see helpers.h) ---- */
#include <errno.h>
#include <stdio.h>
#include <string.h>

int t_fab_init(struct t_fabric *f, uint32_t nch,
	       const struct oms_so_chan_cfg *cfg, uint32_t ndest, int bypass)
{
	memset(f, 0, sizeof(*f));
	if (nch > T_MAX_CH || ndest > T_MAX_CH)
		return -EINVAL;
	f->nch = nch;
	f->ndest = ndest;
	f->bypass = bypass;
	memcpy(f->cfg, cfg, nch * sizeof(*cfg));
	return oms_so_init(&f->so, nch, cfg, ndest, 64);
}

void t_fab_fini(struct t_fabric *f)
{
	oms_so_destroy(&f->so);
}

void t_fab_store(struct t_fabric *f, uint8_t cls, uint16_t chan,
		 uint8_t addr, uint32_t val)
{
	struct t_op *op = &f->ops[f->nops++];

	op->kind = T_OP_STORE;
	op->cls = cls;
	op->chan = chan;
	op->addr = addr;
	op->val = val;
}

void t_fab_fence(struct t_fabric *f, uint16_t scope)
{
	struct t_op *op = &f->ops[f->nops++];

	memset(op, 0, sizeof(*op));
	op->kind = T_OP_FENCE;
	op->scope = scope;
}

static uint16_t op_dest(const struct t_fabric *f, uint32_t i)
{
	return f->cfg[f->ops[i].chan].dest;
}

static int ordered(const struct t_fabric *f, uint32_t i)
{
	return f->ops[i].kind == T_OP_STORE &&
	       f->ops[i].cls != OMS_STORE_UNORDERED;
}

static void violation(struct t_fabric *f, uint32_t i, uint32_t j,
		      const char *what)
{
	if (!f->violations++)
		snprintf(f->why, sizeof(f->why),
			 "op %u landed before op %u (%s)", i, j, what);
}

/* The observer: what may not have been overtaken by op i landing now. */
static void observe(struct t_fabric *f, uint32_t i)
{
	if (!ordered(f, i))
		return;
	for (uint32_t j = 0; j < i; j++)
		if (ordered(f, j) && !f->delivered[j] &&
		    f->ops[i].cls == OMS_STORE_STRONG)
			violation(f, i, j, "strong store overtook");
	for (uint32_t k = 0; k < i; k++) {
		uint16_t sc = f->ops[k].scope;

		if (f->ops[k].kind != T_OP_FENCE ||
		    (sc != OMS_SO_ALL && sc != op_dest(f, i)))
			continue;
		for (uint32_t j = 0; j < k; j++)
			if (ordered(f, j) && !f->delivered[j] &&
			    (sc == OMS_SO_ALL || op_dest(f, j) == sc))
				violation(f, i, j, "store overtook a fence");
	}
}

static void enqueue(struct t_fabric *f, uint32_t i, uint64_t seq)
{
	uint16_t c = f->ops[i].chan;

	f->issued[i] = 1;
	f->opseq[i] = seq;
	f->q[c][f->qn[c]++] = (uint8_t)i;
}

static void poll_orderer(struct t_fabric *f)
{
	struct oms_so_action act[8];
	int n;

	if (f->bypass)
		return;
	while ((n = oms_so_progress(&f->so, act, 8)) > 0) {
		for (int k = 0; k < n; k++) {
			if (act[k].type == OMS_SO_ACT_ISSUE &&
			    act[k].seq == OMS_SO_NONE) {
				/* an unordered store held behind a held one
				 * of the same bytes: now it goes its way */
				f->issued[act[k].cookie] = 1;
				f->uq[f->uqn++] = (uint8_t)act[k].cookie;
			} else if (act[k].type == OMS_SO_ACT_ISSUE) {
				enqueue(f, (uint32_t)act[k].cookie, act[k].seq);
			} else {
				f->flush_req[act[k].chan] = 1;
				f->flush_tok[act[k].chan] = act[k].seq;
			}
		}
	}
	if (n < 0)
		f->err = n;
}

static void submit(struct t_fabric *f)
{
	uint32_t i = f->pc++;
	const struct t_op *op = &f->ops[i];
	struct oms_so_store st = {
		.cookie = i, .addr = op->addr, .len = 1,
		.chan = op->chan, .cls = op->cls,
	};
	uint64_t seq;
	int r;

	/* The whole program is in: quiet wants every posted channel
	 * flushed (a completion there is not visibility). */
	if (f->pc == f->nops && !f->bypass)
		oms_so_drain(&f->so);
	if (op->kind == T_OP_FENCE) {
		if (!f->bypass && (r = oms_so_fence(&f->so, op->scope)))
			f->err = r;
		return;
	}
	if (!f->bypass) {
		r = oms_so_submit(&f->so, &st, &seq);
		if (r < 0) {
			f->err = r;
			return;
		}
	} else {
		r = OMS_SO_ISSUE;
		seq = op->cls == OMS_STORE_UNORDERED ? 0 : f->bseq[op->chan]++;
	}
	if (op->cls == OMS_STORE_UNORDERED) {
		f->issued[i] = 1;
		f->uq[f->uqn++] = (uint8_t)i;
	} else if (r == OMS_SO_ISSUE) {
		enqueue(f, i, seq);
	}
}

static void land(struct t_fabric *f, uint32_t i)
{
	f->mem[op_dest(f, i)][f->ops[i].addr] = f->ops[i].val;
	observe(f, i);
	f->delivered[i] = 1;
	f->vis_time[i] = ++f->now;
}

static void deliver(struct t_fabric *f, uint16_t c, uint32_t idx)
{
	uint32_t i = f->q[c][idx];
	uint64_t old = f->prefix[c];

	memmove(&f->q[c][idx], &f->q[c][idx + 1], f->qn[c] - idx - 1);
	f->qn[c]--;
	land(f, i);
	f->dbits[c] |= 1ull << f->opseq[i];
	while (f->prefix[c] < 64 && (f->dbits[c] >> f->prefix[c]) & 1)
		f->prefix[c]++;
	if (f->bypass || f->prefix[c] == old)
		return;
	/* Every channel acknowledges what it executed; on a posted one
	 * that is not visibility (only a flush is). */
	f->acks[c][f->nacks[c]++] = f->prefix[c];
}

/* Two writes to one address on one channel stay in order (the channel's
 * duty, store_order.h). */
static int deliverable(const struct t_fabric *f, uint16_t c, uint32_t idx)
{
	if (f->cfg[c].kind == OMS_CHAN_POSTED)
		return idx == 0;
	for (uint32_t k = 0; k < idx; k++)
		if (f->ops[f->q[c][k]].addr == f->ops[f->q[c][idx]].addr)
			return 0;
	return 1;
}

uint32_t t_fab_events(const struct t_fabric *f, struct t_event *ev,
		      uint32_t max)
{
	uint32_t n = 0;

#define T_ADD(k, x, y) do { if (n < max) { ev[n].kind = (k); \
	ev[n].a = (uint8_t)(x); ev[n].b = (uint8_t)(y); n++; } } while (0)
	if (f->pc < f->nops && !f->err)
		T_ADD(T_EV_SUBMIT, 0, 0);
	for (uint32_t c = 0; c < f->nch; c++) {
		for (uint32_t k = 0; k < f->qn[c]; k++)
			if (deliverable(f, (uint16_t)c, k))
				T_ADD(T_EV_DELIVER, c, k);
		for (uint32_t k = 0; k < f->nacks[c]; k++)
			T_ADD(T_EV_ACK, c, k);
		if (f->flush_req[c] && f->prefix[c] >= f->flush_tok[c])
			T_ADD(T_EV_FLUSH, c, 0);
	}
	for (uint32_t k = 0; k < f->uqn; k++)
		T_ADD(T_EV_DELIVER_U, 0, k);
#undef T_ADD
	return n;
}

void t_fab_step(struct t_fabric *f, const struct t_event *ev)
{
	int r = 0;

	switch (ev->kind) {
	case T_EV_SUBMIT:
		submit(f);
		break;
	case T_EV_DELIVER:
		deliver(f, ev->a, ev->b);
		break;
	case T_EV_DELIVER_U:
		land(f, f->uq[ev->b]);
		memmove(&f->uq[ev->b], &f->uq[ev->b + 1], f->uqn - ev->b - 1);
		f->uqn--;
		break;
	case T_EV_ACK: {
		uint64_t cnt = f->acks[ev->a][ev->b];

		memmove(&f->acks[ev->a][ev->b], &f->acks[ev->a][ev->b + 1],
			(f->nacks[ev->a] - ev->b - 1) * sizeof(uint64_t));
		f->nacks[ev->a]--;
		r = oms_so_ack(&f->so, ev->a, cnt, 0);
		break;
	}
	case T_EV_FLUSH:
		f->flush_req[ev->a] = 0;
		r = oms_so_flush_done(&f->so, ev->a, f->flush_tok[ev->a], 0);
		break;
	}
	if (r && !f->err)
		f->err = r;
	poll_orderer(f);
}

uint32_t t_fab_run_random(struct t_fabric *f, struct t_rng *r,
			  uint32_t max_steps)
{
	struct t_event ev[T_MAX_OPS * 4];
	uint32_t steps = 0, n;

	while (steps < max_steps &&
	       (n = t_fab_events(f, ev, T_MAX_OPS * 4)) > 0) {
		t_fab_step(f, &ev[t_rng_below(r, n)]);
		steps++;
	}
	return steps;
}

int t_fab_drained(const struct t_fabric *f)
{
	const struct oms_so_counters *c = &f->so.ctr;

	if (f->err || f->pc != f->nops)
		return 0;
	for (uint32_t i = 0; i < f->nops; i++)
		if (f->ops[i].kind == T_OP_STORE && !f->delivered[i])
			return 0;
	if (f->bypass)
		return 1;
	return oms_so_quiescent(&f->so) && c->issue_inc == c->issue_dec &&
	       c->ack_inc == c->ack_dec && c->issue_inc == c->weak + c->strong &&
	       c->ack_inc == c->issue_inc;
}

void t_fab_copy(struct t_fabric *dst, const struct t_fabric *src)
{
	struct oms_so keep = dst->so;

	memcpy(dst, src, sizeof(*dst));
	dst->so = keep;
	oms_so_copy(&dst->so, &src->so);
}
