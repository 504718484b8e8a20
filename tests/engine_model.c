// SPDX-License-Identifier: MIT
/*
 * Model fabrics for the ordering engine (engine_model.h): test support
 * of internals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_model.h"

/* ---- model fabric for the store orderer (see engine_model.h) ---- */

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
		oms_so_quiet(&f->so);
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

int t_fab_settled(const struct t_fabric *f)
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

/* ---- model device for whole programs (see engine_model.h, t_mx_*) ---- */

static int mx_in_order(const struct t_mx *f, uint32_t c)
{
	return f->kind[c] != OMS_CHAN_ACKED;
}

static int mx_seq(const struct t_mx *f, uint32_t c)
{
	return f->kind[c] == OMS_CHAN_SEQ && f->mut != T_MX_MUT_SEQ_ARRIVAL;
}

static int mx_writes(const struct om_op *o)
{
	return o->kind != OM_GET;
}

int t_mx_init(struct t_mx *f, uint32_t nch, const uint8_t *kind,
	      uint32_t mut)
{
	struct oms_so_chan_cfg cfg[T_MX_CH];

	memset(f, 0, sizeof(*f));
	if (nch == 0 || nch > T_MX_CH)
		return -EINVAL;
	f->nch = nch;
	f->mut = mut;
	for (uint32_t c = 0; c < nch; c++) {
		f->kind[c] = kind[c];
		f->ch[c].fail_post = 0xff;
		cfg[c].dest = (uint16_t)c;
		cfg[c].kind = kind[c];
		if (mut == T_MX_MUT_POSTED_ACKED && kind[c] == OMS_CHAN_POSTED)
			cfg[c].kind = OMS_CHAN_ACKED;
	}
	/* Room for every op of a fuzzed program (16) with a barrier and a
	 * fence marker each: submission never meets a full queue. */
	return oms_so_init(&f->so, nch, cfg, nch, T_MX_HELD);
}

void t_mx_fini(struct t_mx *f)
{
	oms_so_destroy(&f->so);
}

void t_mx_set_prog(struct t_mx *f, const struct om_prog *p)
{
	f->prog = *p;
	for (uint32_t c = 0; c < f->nch && c < OM_MAX_DEST; c++) {
		f->prog.dest_seq[c] = f->kind[c] == OMS_CHAN_SEQ;
		f->prog.dest_in_order[c] = mx_in_order(f, c);
	}
	memset(&f->tr, 0, sizeof(f->tr));
}

static void mx_err(struct t_mx *f, int r, const char *what)
{
	if (r >= 0 || f->err)
		return;
	f->err = r;
	snprintf(f->why, sizeof(f->why), "%s returned %d", what, r);
}

static void mx_post(struct t_mx *f, uint32_t c, uint8_t type, uint32_t op,
		    uint64_t seq, uint8_t flags, uint64_t token)
{
	struct t_mx_chan *ch = &f->ch[c];
	struct t_mx_ent *e;

	if (ch->qn >= T_MX_Q || ch->cn >= T_MX_Q) {
		mx_err(f, -ENOSPC, "device queue");
		return;
	}
	e = &ch->q[ch->qn++];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->op = (uint8_t)op;
	e->flags = flags;
	e->pidx = ch->posts++;
	e->seq = seq == OMS_SO_NONE ? T_MX_NOSEQ : (uint16_t)seq;
	e->token = (uint16_t)token;
	if (f->mut == T_MX_MUT_GET_EARLY_ACK && type == T_MX_E_OP &&
	    f->prog.op[op].kind == OM_GET && !f->prog.op[op].fail) {
		struct t_mx_cpl *x = &ch->cq[ch->cn++];

		memset(x, 0, sizeof(*x));
		x->type = T_MX_E_OP;
		x->op = (uint8_t)op;
		x->seq = e->seq;
		e->cpl_sent = 1;
	}
}

static void mx_poll(struct t_mx *f)
{
	struct oms_so_action act[8];
	int n;

	while ((n = oms_so_progress(&f->so, act, 8)) > 0) {
		for (int k = 0; k < n; k++) {
			const struct oms_so_action *a = &act[k];
			uint32_t i = (uint32_t)a->cookie;

			if (a->type == OMS_SO_ACT_FLUSH) {
				mx_post(f, a->chan, T_MX_E_FLUSH, 0, OMS_SO_NONE,
					0, a->seq);
			} else if (a->type == OMS_SO_ACT_ISSUE ||
				   f->mut == T_MX_MUT_CANCEL_ISSUES) {
				mx_post(f, a->chan, T_MX_E_OP, i, a->seq,
					a->flags, 0);
			} else {
				f->tr.fate[i] = OM_CANCELLED;
				if (a->seq != OMS_SO_NONE)
					mx_post(f, a->chan, T_MX_E_NOP, i,
						a->seq, 0, 0);
			}
		}
	}
	mx_err(f, n, "oms_so_progress");
}

static void mx_perform(struct t_mx *f, uint32_t i);

static void mx_submit(struct t_mx *f)
{
	uint32_t i = f->pc++;
	const struct om_op *o = &f->prog.op[i];
	struct oms_so_action a;
	int r;

	if (o->kind == OM_FENCE || o->kind == OM_FENCE_ALL) {
		r = oms_so_fence(&f->so, o->kind == OM_FENCE ? o->dest :
				 OMS_SO_ALL);
		mx_err(f, r, "oms_so_fence");
	} else {
		struct oms_so_store st = {
			.cookie = i, .addr = o->addr, .len = 1,
			.chan = o->dest,
			.cls = o->kind == OM_PUT ? o->cls : OMS_STORE_WEAK,
			.op = o->kind == OM_PUT ? OMS_SO_OP_PUT :
			      o->kind == OM_GET ? OMS_SO_OP_GET :
			      OMS_SO_OP_ATOMIC,
			.acquire = o->kind == OM_GET && o->acquire,
		};

		r = oms_so_submit_op(&f->so, &st, &a);
		mx_err(f, r, "oms_so_submit_op");
		if (r == OMS_SO_ISSUE)
			mx_post(f, o->dest, T_MX_E_OP, i, a.seq, a.flags, 0);
		if (r == OMS_SO_HELD && !o->fail &&
		    ((f->mut == T_MX_MUT_NO_HOLD_STRONG &&
		      o->kind == OM_PUT && o->cls == OM_S) ||
		     (f->mut == T_MX_MUT_NO_HOLD_OTHER &&
		      !(o->kind == OM_PUT && o->cls == OM_S)))) {
			mx_perform(f, i);
			f->early |= 1u << i;
		}
	}
	if (f->pc == f->prog.n)
		oms_so_quiet(&f->so);
}

static int mx_seq_done_below(const struct t_mx_chan *ch, uint32_t s)
{
	uint64_t m = s >= 64 ? ~0ull : (1ull << s) - 1;

	return (ch->seqdone & m) == m;
}

static int mx_executable(const struct t_mx *f, uint32_t c, uint32_t k)
{
	const struct t_mx_chan *ch = &f->ch[c];
	const struct t_mx_ent *e = &ch->q[k];
	const struct om_op *o = &f->prog.op[e->op];
	int fence = (e->flags & OMS_SO_A_FENCE) &&
		    f->mut != T_MX_MUT_NO_FENCE;

	if (e->type == T_MX_E_FLUSH)
		return mx_seq(f, c) ? mx_seq_done_below(ch, e->token) &&
				      !ch->ln :
				      k == 0 && !ch->ln;
	if (e->type == T_MX_E_NOP)
		return !mx_seq(f, c) || mx_seq_done_below(ch, e->seq);
	if (fence && ch->ln)
		return 0;
	for (uint32_t j = 0; j < k; j++) {
		const struct t_mx_ent *p = &ch->q[j];
		const struct om_op *po = &f->prog.op[p->op];

		/* Two members of a stream: the sequence order decides, for
		 * fences and the RLSQ too (a held op takes its number before
		 * a later one that is posted first). */
		if (mx_seq(f, c) && p->seq != T_MX_NOSEQ &&
		    e->seq != T_MX_NOSEQ)
			continue;
		if (fence)
			return 0;
		if (p->type != T_MX_E_OP)
			continue;
		if (mx_writes(po) && po->addr == o->addr)
			return 0;	/* same bytes after a write */
		if (po->kind == OM_GET && po->acquire && o->kind == OM_GET)
			return 0;	/* OMS_WR_F_ACQUIRE: later gets after */
		if (mx_in_order(f, c) && !mx_seq(f, c) && po->kind == OM_PUT)
			return 0;	/* posted writes keep their order */
	}
	if (mx_seq(f, c) && e->seq != T_MX_NOSEQ &&
	    !mx_seq_done_below(ch, e->seq))
		return 0;
	if (mx_in_order(f, c) && o->kind != OM_PUT && ch->ln)
		return 0;	/* a non-posted op pushes posted writes */
	return 1;
}

static void mx_perform(struct t_mx *f, uint32_t i)
{
	const struct om_op *o = &f->prog.op[i];
	uint64_t *m = &f->mem[o->dest][o->addr % T_MX_NADDR];

	if (f->early & (1u << i))
		return;		/* a NO_HOLD mutation performed it already */
	switch (o->kind) {
	case OM_PUT:
		*m = om_value(i);
		break;
	case OM_GET:
		f->tr.read[i] = *m;
		break;
	case OM_FAA:
		f->tr.read[i] = *m;
		*m += om_value(i);
		break;
	case OM_CAS:
		f->tr.read[i] = *m;
		if (!*m)
			*m = om_value(i);
		break;
	}
	f->tr.fate[i] = OM_PERFORMED;
	f->tr.when[i] = ++f->now;
}

static void mx_exec(struct t_mx *f, uint32_t c, uint32_t k)
{
	struct t_mx_chan *ch = &f->ch[c];
	struct t_mx_ent e = ch->q[k];
	struct t_mx_cpl *x;
	int status = 0;

	memmove(&ch->q[k], &ch->q[k + 1], (ch->qn - k - 1) * sizeof(e));
	ch->qn--;
	if (mx_in_order(f, c) && ch->stopped)
		status = -ECANCELED;
	/* The orderer's NOP stands for an op it cancelled: the stream
	 * stops there as at a failed member (D1). */
	if (e.type == T_MX_E_NOP) {
		status = -ECANCELED;
		ch->stopped = 1;
	}
	if (e.type == T_MX_E_OP) {
		const struct om_op *o = &f->prog.op[e.op];

		if (!status && !mx_in_order(f, c) &&
		    (e.flags & OMS_SO_A_FENCE) &&
		    f->mut != T_MX_MUT_NO_FENCE && ch->fail_post < e.pidx)
			status = -ECANCELED;
		if (!status && o->fail)
			status = -EACCES;
		if (status) {
			f->tr.fate[e.op] = status == -EACCES ? OM_FAILED :
					   OM_CANCELLED;
			if (e.pidx < ch->fail_post)
				ch->fail_post = e.pidx;
			if (mx_in_order(f, c))
				ch->stopped = 1;
		} else if (o->kind == OM_PUT && mx_in_order(f, c)) {
			ch->land[ch->ln++] = e.op;	/* lands later */
		} else {
			mx_perform(f, e.op);
		}
	}
	if (e.seq != T_MX_NOSEQ && e.seq < 64)
		ch->seqdone |= 1ull << e.seq;
	if (e.cpl_sent)
		return;
	x = &ch->cq[ch->cn++];
	x->type = e.type;
	x->op = e.op;
	x->seq = e.seq;
	x->token = e.token;
	x->status = (int16_t)status;
}

static void mx_ack_seq(struct t_mx *f, uint32_t c, uint32_t seq)
{
	struct t_mx_chan *ch = &f->ch[c];
	uint64_t p = ch->ackprefix;

	if (seq < 64)
		ch->ackbits |= 1ull << seq;
	while (p < 64 && (ch->ackbits >> p) & 1)
		p++;
	if (p != ch->ackprefix) {
		ch->ackprefix = p;
		mx_err(f, oms_so_ack(&f->so, (uint16_t)c, p, 0), "oms_so_ack");
	}
}

static void mx_complete(struct t_mx *f, uint32_t c, uint32_t k)
{
	struct t_mx_chan *ch = &f->ch[c];
	struct t_mx_cpl x = ch->cq[k];

	memmove(&ch->cq[k], &ch->cq[k + 1], (ch->cn - k - 1) * sizeof(x));
	ch->cn--;
	if (x.type == T_MX_E_FLUSH) {
		mx_err(f, oms_so_flush_done(&f->so, (uint16_t)c, x.token,
					    x.status), "oms_so_flush_done");
		return;
	}
	if (x.seq == T_MX_NOSEQ) {
		if (f->kind[c] == OMS_CHAN_SEQ)
			oms_so_unordered_done(&f->so, (uint16_t)c);
		return;
	}
	/* The orderer knows what it cancelled (lib/core/ctx.c does the same). */
	if (x.status && x.type != T_MX_E_NOP)
		mx_err(f, oms_so_fail(&f->so, (uint16_t)c, x.seq, x.status),
		       "oms_so_fail");
	mx_ack_seq(f, c, x.seq);
}

uint32_t t_mx_events(const struct t_mx *f, struct t_event *ev, uint32_t max)
{
	uint32_t n = 0;

#define MX_ADD(k, x, y) do { if (n < max) { ev[n].kind = (k); \
	ev[n].a = (uint8_t)(x); ev[n].b = (uint8_t)(y); n++; } } while (0)
	if (f->err)
		return 0;
	if (f->pc < f->prog.n)
		MX_ADD(T_MX_EV_SUBMIT, 0, 0);
	for (uint32_t c = 0; c < f->nch; c++) {
		const struct t_mx_chan *ch = &f->ch[c];

		for (uint32_t k = 0; k < ch->qn; k++)
			if (mx_executable(f, c, k))
				MX_ADD(T_MX_EV_EXEC, c, k);
		for (uint32_t k = 0; k < ch->ln; k++)
			if (k == 0 || f->mut == T_MX_MUT_POSTED_REORDER)
				MX_ADD(T_MX_EV_LAND, c, k);
		for (uint32_t k = 0; k < ch->cn; k++)
			if (k == 0 || !mx_in_order(f, c))
				MX_ADD(T_MX_EV_CPL, c, k);
	}
#undef MX_ADD
	return n;
}

void t_mx_step(struct t_mx *f, const struct t_event *ev)
{
	struct t_mx_chan *ch = &f->ch[ev->a % T_MX_CH];

	switch (ev->kind) {
	case T_MX_EV_SUBMIT:
		mx_submit(f);
		break;
	case T_MX_EV_EXEC:
		mx_exec(f, ev->a, ev->b);
		break;
	case T_MX_EV_LAND:
		mx_perform(f, ch->land[ev->b]);
		memmove(&ch->land[ev->b], &ch->land[ev->b + 1],
			ch->ln - ev->b - 1);
		ch->ln--;
		break;
	case T_MX_EV_CPL:
		mx_complete(f, ev->a, ev->b);
		break;
	}
	mx_poll(f);
}

void t_mx_copy(struct t_mx *dst, const struct t_mx *src)
{
	struct oms_so keep = dst->so;

	memcpy(dst, src, sizeof(*dst));
	dst->so = keep;
	oms_so_copy(&dst->so, &src->so);
}

int t_mx_finish(struct t_mx *f)
{
	const struct oms_so_counters *c = &f->so.ctr;
	uint64_t ordered = 0;
	int failed_ordered = 0, e, r;

	if (f->err)
		return -1;
	for (uint32_t i = 0; i < f->prog.n; i++) {
		const struct om_op *o = &f->prog.op[i];

		if (!om_is_mem(o) || (o->kind == OM_PUT && o->cls == OM_U))
			continue;
		ordered++;
		if (o->fail && f->tr.fate[i] == OM_FAILED)
			failed_ordered = 1;
	}
#define MX_NO(...) do { snprintf(f->why, sizeof(f->why), __VA_ARGS__); \
	return -1; } while (0)
	if (f->pc != f->prog.n)
		MX_NO("program not submitted (%u of %u)", f->pc, f->prog.n);
	if (!oms_so_quiescent(&f->so))
		MX_NO("nothing left to happen, but the orderer is not quiescent");
	e = oms_so_take_error(&f->so);
	if (failed_ordered && e != -EACCES)
		MX_NO("first error %d, not the failed op's -EACCES", e);
	/* An unordered op has no sequence: the orderer never hears of
	 * its failure, only of what the device cancelled after it. */
	if (!failed_ordered && e && e != -ECANCELED)
		MX_NO("error %d recorded, nothing ordered failed", e);
	r = oms_so_resume(&f->so);
	if (r)
		MX_NO("oms_so_resume() = %d at the end", r);
	if (c->pending_issue || c->pending_ack ||
	    c->issue_inc != c->issue_dec || c->ack_inc != c->ack_dec ||
	    c->issue_inc != ordered)
		MX_NO("counters: pending %llu/%llu, issue %llu/%llu of %llu, ack %llu/%llu",
		      (unsigned long long)c->pending_issue,
		      (unsigned long long)c->pending_ack,
		      (unsigned long long)c->issue_inc,
		      (unsigned long long)c->issue_dec,
		      (unsigned long long)ordered,
		      (unsigned long long)c->ack_inc,
		      (unsigned long long)c->ack_dec);
#undef MX_NO
	return 0;
}

static uint64_t mx_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t mx_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t w;

	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		h = mx_mix(h, w);
	}
	w = 0;
	memcpy(&w, b, n);
	return mx_mix(h, w ^ n);
}

uint64_t t_mx_digest(const struct t_mx *f)
{
	const struct oms_so *so = &f->so;
	uint64_t h = 0x6d78;

	h = mx_mix(h, f->pc | (uint64_t)f->now << 32);
	h = mx_mix(h, f->early);
	h = mx_bytes(h, &f->tr, sizeof(f->tr));
	h = mx_bytes(h, f->mem, sizeof(f->mem));
	for (uint32_t c = 0; c < f->nch; c++) {
		const struct t_mx_chan *ch = &f->ch[c];

		h = mx_bytes(h, ch->q, ch->qn * sizeof(ch->q[0]));
		h = mx_bytes(h, ch->cq, ch->cn * sizeof(ch->cq[0]));
		h = mx_bytes(h, ch->land, ch->ln);
		h = mx_mix(h, ch->qn | ch->cn << 8 | ch->ln << 16 |
			   (uint64_t)ch->stopped << 24 |
			   (uint64_t)ch->fail_post << 32 |
			   (uint64_t)ch->posts << 40);
		h = mx_mix(h, ch->seqdone);
		h = mx_mix(h, ch->ackbits);
	}
	/* the orderer */
	h = mx_bytes(h, so->chan, so->nchan * sizeof(so->chan[0]));
	h = mx_mix(h, so->count | (uint64_t)so->all_fences << 32);
	h = mx_mix(h, so->acq_barriers | (uint64_t)so->held_acq << 32);
	h = mx_mix(h, so->acq_mask ^ so->stopped_dests << 1);
	h = mx_mix(h, so->lost_dests);
	h = mx_mix(h, so->lost_ordered_dests);
	h = mx_mix(h, so->lost_atomic_dests);
	h = mx_mix(h, (uint64_t)so->lost_ordered | (uint64_t)so->lost_acquire << 1);
	h = mx_mix(h, (uint64_t)so->stopped_all | (uint64_t)so->any_fail << 1 |
		   (uint64_t)so->quieting << 2 |
		   (uint64_t)(uint32_t)so->first_error << 32);
	h = mx_bytes(h, &so->ctr, sizeof(so->ctr));
	for (uint32_t i = 0; i < so->count; i++) {
		uint32_t at = (so->head + i) % so->max_held;

		h = mx_bytes(h, &so->held[at], sizeof(so->held[at]));
		h = mx_bytes(h, so->snap + (size_t)at * so->nchan,
			     so->nchan * sizeof(uint64_t));
	}
	h = mx_bytes(h, so->dest_fences, so->ndest * sizeof(uint32_t));
	h = mx_bytes(h, so->dest_held, so->ndest * sizeof(uint32_t));
	h = mx_bytes(h, so->dest_held_acq, so->ndest * sizeof(uint32_t));
	return h ? h : 1;
}
