// SPDX-License-Identifier: MIT
/*
 * Remote load-store queue (seed 004, section 5.1).  See rlsq.h.
 *
 * Entry states:
 *   FREE -> QUEUED (waiting for rules R1-R4) -> READY (in the execute
 *   queue) -> ISSUED (driver performing it) -> DONE (value buffered, still
 *   speculative) -> RESOLVED (in the deliver queue) -> FREE.
 *   QUEUED -> READY as soon as the rules allow; DONE is skipped when the
 *   entry is not speculative.  A squash sends DONE back to READY (retry),
 *   or marks an ISSUED entry so that its completion is discarded and it
 *   goes back to READY.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rlsq.h"
#include "engine/engine_mem.h"

#define NIL 0xffffu

enum {
	S_FREE = 0,
	S_QUEUED,
	S_READY,
	S_ISSUED,
	S_DONE,
	S_RESOLVED,
};

enum {
	F_SPEC = 1,	/* an earlier acquire of the thread is unresolved */
	F_SQUASH = 2,	/* squashed while ISSUED: discard its completion */
	F_RETRY = 4,	/* next execute action is a RETRY */
};

static inline int is_read(unsigned kind)
{
	return kind == OMS_RLSQ_READ || kind == OMS_RLSQ_ACQUIRE;
}

static inline unsigned bucket(uint64_t line)
{
	line ^= line >> 29;
	line *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(line >> 60) & (OMS_RLSQ_BUCKETS - 1);
}

static int bad_geometry(unsigned cap, unsigned nthreads)
{
	return cap == 0 || cap > OMS_RLSQ_MAX_ENTRIES || nthreads == 0 ||
	       nthreads > OMS_RLSQ_MAX_THREADS;
}

size_t oms_rlsq_memsize(unsigned cap, unsigned nthreads)
{
	if (bad_geometry(cap, nthreads))
		return 0;
	return (size_t)cap * sizeof(struct oms_rlsq_entry) +
	       (size_t)nthreads * sizeof(struct oms_rlsq_thread);
}

int oms_rlsq_init(struct oms_rlsq *q, unsigned cap, unsigned nthreads,
		  unsigned mode, void *mem, size_t memlen)
{
	size_t need = oms_rlsq_memsize(cap, nthreads);
	int owns, r;

	if (!q || !need || mode > OMS_RLSQ_RC_OPT)
		return -EINVAL;
	r = oms_engine_mem(mem, memlen, need, &mem, &owns);
	if (r)
		return r;
	memset(q, 0, sizeof(*q));
	q->e = mem;
	q->t = (struct oms_rlsq_thread *)(q->e + cap);
	q->cap = cap;
	q->nthreads = nthreads;
	q->mode = mode;
	for (unsigned i = 0; i < cap; i++)
		q->e[i].qnext = i + 1 < cap ? (uint16_t)(i + 1) : NIL;
	for (unsigned i = 0; i < nthreads; i++)
		q->t[i].head = q->t[i].tail = NIL;
	q->free_head = 0;
	q->xq_head = q->xq_tail = q->dq_head = q->dq_tail = NIL;
	q->owns_mem = owns;
	return 0;
}

void oms_rlsq_destroy(struct oms_rlsq *q)
{
	if (!q)
		return;
	if (q->owns_mem)
		free(q->e);
	memset(q, 0, sizeof(*q));
}

static inline uint16_t idx(const struct oms_rlsq *q,
			   const struct oms_rlsq_entry *e)
{
	return (uint16_t)(e - q->e);
}

static void fifo_add(struct oms_rlsq *q, uint16_t *head, uint16_t *tail,
		     uint16_t i)
{
	q->e[i].qnext = NIL;
	if (*tail == NIL)
		*head = i;
	else
		q->e[*tail].qnext = i;
	*tail = i;
}

static uint16_t fifo_pop(struct oms_rlsq *q, uint16_t *head, uint16_t *tail)
{
	uint16_t i = *head;

	*head = q->e[i].qnext;
	if (*head == NIL)
		*tail = NIL;
	return i;
}

static inline void set_spec(struct oms_rlsq *q, struct oms_rlsq_entry *e,
			    int spec)
{
	if (spec && !(e->flags & F_SPEC)) {
		e->flags |= F_SPEC;
		q->nspec++;
	} else if (!spec && (e->flags & F_SPEC)) {
		e->flags &= ~F_SPEC;
		q->nspec--;
	}
}

static void make_ready(struct oms_rlsq *q, struct oms_rlsq_thread *th,
		       struct oms_rlsq_entry *e, int spec)
{
	e->state = S_READY;
	th->queued--;
	set_spec(q, e, spec);
	fifo_add(q, &q->xq_head, &q->xq_tail, idx(q, e));
}

static void resolve(struct oms_rlsq *q, struct oms_rlsq_thread *th,
		    struct oms_rlsq_entry *e)
{
	e->state = S_RESOLVED;
	set_spec(q, e, 0);
	th->unres--;
	if (e->kind == OMS_RLSQ_ACQUIRE)
		th->unres_acq--;
	fifo_add(q, &q->dq_head, &q->dq_tail, idx(q, e));
}

/*
 * May an op of @kind on @line execute, given what is unresolved / not done
 * before it?  Rules R1-R4 of rlsq.h.
 */
static int may_execute(unsigned mode, unsigned kind, unsigned b,
		       int acq_block, int wr_block, int any_block,
		       uint32_t rdmask)
{
	switch (kind) {
	case OMS_RLSQ_READ:
	case OMS_RLSQ_ACQUIRE:
		return !wr_block && (mode == OMS_RLSQ_RC_OPT || !acq_block);
	case OMS_RLSQ_WRITE:
		return !acq_block && !wr_block && !(rdmask & (1u << b));
	default:
		return !any_block;
	}
}

/*
 * Walk @th's live entries in program order, carrying what is blocked so
 * far: make QUEUED entries ready when the rules allow, refresh the
 * speculative flag, and resolve DONE entries no acquire holds any more.
 */
static void scan_thread(struct oms_rlsq *q, struct oms_rlsq_thread *th)
{
	int acq_block = 0, wr_block = 0, any_block = 0;
	uint32_t rdmask = 0;
	uint16_t i;

	for (i = th->head; i != NIL; i = q->e[i].next) {
		struct oms_rlsq_entry *e = &q->e[i];
		int rd = is_read(e->kind);
		unsigned b = bucket(e->line);

		switch (e->state) {
		case S_QUEUED:
			if (may_execute(q->mode, e->kind, b, acq_block,
					wr_block, any_block, rdmask))
				make_ready(q, th, e, rd && acq_block);
			break;
		case S_READY:
		case S_ISSUED:
			set_spec(q, e, rd && acq_block);
			break;
		case S_DONE:
			if (!acq_block)
				resolve(q, th, e);
			break;
		default:
			break;
		}
		if (e->state != S_RESOLVED) {
			any_block = 1;
			if (e->kind == OMS_RLSQ_ACQUIRE)
				acq_block = 1;
			if (e->state != S_DONE) {
				if (rd)
					rdmask |= 1u << b;
				else
					wr_block = 1;
			}
		}
		/* NIC/RC: nothing after an unresolved acquire has started. */
		if (acq_block && q->mode != OMS_RLSQ_RC_OPT)
			break;
	}
}

int oms_rlsq_submit(struct oms_rlsq *q, unsigned thread, unsigned kind,
		    uint64_t line, uint64_t cookie, uint32_t *id)
{
	struct oms_rlsq_thread *th;
	struct oms_rlsq_entry *e;
	unsigned b;
	uint32_t rdmask = 0;
	uint16_t i;
	int ok, acq_before;

	if (!q || !q->e || !id || thread >= q->nthreads ||
	    kind > OMS_RLSQ_RELEASE)
		return -EINVAL;
	if (q->free_head == NIL)
		return -EAGAIN;
	th = &q->t[thread];
	b = bucket(line);
	if (th->rd_undone[b])
		rdmask = 1u << b;
	/* Everything live in the thread is earlier: the totals are the prefix. */
	acq_before = th->unres_acq != 0;
	ok = may_execute(q->mode, kind, b, acq_before, th->undone_wr != 0,
			 th->unres != 0, rdmask);
	i = q->free_head;		/* the free list is a stack */
	e = &q->e[i];
	q->free_head = e->qnext;
	e->line = line;
	e->cookie = cookie;
	e->value = 0;
	e->kind = (uint8_t)kind;
	e->thread = (uint16_t)thread;
	e->flags = 0;
	e->state = S_QUEUED;
	e->next = NIL;
	e->prev = th->tail;
	if (th->tail == NIL)
		th->head = i;
	else
		q->e[th->tail].next = i;
	th->tail = i;
	th->queued++;
	th->unres++;
	if (kind == OMS_RLSQ_ACQUIRE)
		th->unres_acq++;
	if (is_read(kind))
		th->rd_undone[b]++;
	else
		th->undone_wr++;
	if (ok)
		make_ready(q, th, e, is_read(kind) && acq_before);
	q->live++;
	q->cnt.submitted++;
	*id = (uint32_t)e->gen << 16 | i;
	return 0;
}

int oms_rlsq_would_wait(const struct oms_rlsq *q, unsigned thread,
			unsigned kind, uint64_t line)
{
	const struct oms_rlsq_thread *th;
	unsigned b;

	if (!q || !q->e || thread >= q->nthreads || kind > OMS_RLSQ_RELEASE)
		return -EINVAL;
	th = &q->t[thread];
	b = bucket(line);
	return !may_execute(q->mode, kind, b, th->unres_acq != 0,
			    th->undone_wr != 0, th->unres != 0,
			    th->rd_undone[b] ? 1u << b : 0);
}

static void free_entry(struct oms_rlsq *q, struct oms_rlsq_entry *e)
{
	struct oms_rlsq_thread *th = &q->t[e->thread];
	uint16_t i = idx(q, e);

	if (e->prev == NIL)
		th->head = e->next;
	else
		q->e[e->prev].next = e->next;
	if (e->next == NIL)
		th->tail = e->prev;
	else
		q->e[e->next].prev = e->prev;
	e->state = S_FREE;
	e->gen++;
	e->qnext = q->free_head;
	q->free_head = i;
	q->live--;
}

int oms_rlsq_poll(struct oms_rlsq *q, struct oms_rlsq_action *act,
		  unsigned max)
{
	unsigned n = 0;

	if (!q || !q->e || (!act && max))
		return -EINVAL;
	while (n < max && q->dq_head != NIL) {
		struct oms_rlsq_entry *e =
			&q->e[fifo_pop(q, &q->dq_head, &q->dq_tail)];
		struct oms_rlsq_action *a = &act[n++];

		a->type = OMS_RLSQ_DELIVER;
		a->kind = e->kind;
		a->thread = e->thread;
		a->id = (uint32_t)e->gen << 16 | idx(q, e);
		a->line = e->line;
		a->cookie = e->cookie;
		a->value = e->value;
		q->cnt.delivered++;
		free_entry(q, e);
	}
	while (n < max && q->xq_head != NIL) {
		struct oms_rlsq_entry *e =
			&q->e[fifo_pop(q, &q->xq_head, &q->xq_tail)];
		struct oms_rlsq_action *a = &act[n++];

		a->type = e->flags & F_RETRY ? OMS_RLSQ_RETRY : OMS_RLSQ_EXECUTE;
		a->kind = e->kind;
		a->thread = e->thread;
		a->id = (uint32_t)e->gen << 16 | idx(q, e);
		a->line = e->line;
		a->cookie = e->cookie;
		a->value = 0;
		if (e->flags & F_RETRY)
			q->cnt.retried++;
		e->flags &= ~F_RETRY;
		e->state = S_ISSUED;
		q->cnt.executed++;
	}
	return (int)n;
}

static struct oms_rlsq_entry *lookup(const struct oms_rlsq *q, uint32_t id)
{
	uint32_t i = id & 0xffffu;
	struct oms_rlsq_entry *e;

	if (i >= q->cap)
		return NULL;
	e = &q->e[i];
	if (e->state == S_FREE || e->gen != (uint16_t)(id >> 16))
		return NULL;
	return e;
}

int oms_rlsq_complete(struct oms_rlsq *q, uint32_t id, uint64_t value)
{
	struct oms_rlsq_thread *th;
	struct oms_rlsq_entry *e;

	if (!q || !q->e)
		return -EINVAL;
	e = lookup(q, id);
	if (!e)
		return -ENOENT;
	if (e->state != S_ISSUED)
		return -EPROTO;
	q->cnt.completed++;
	th = &q->t[e->thread];
	if (e->flags & F_SQUASH) {
		/* Squashed while in flight: the value may predate the write. */
		e->flags = (uint8_t)((e->flags & ~F_SQUASH) | F_RETRY);
		e->state = S_READY;
		fifo_add(q, &q->xq_head, &q->xq_tail, idx(q, e));
		return 0;
	}
	e->value = value;
	e->state = S_DONE;
	if (is_read(e->kind))
		th->rd_undone[bucket(e->line)]--;
	else
		th->undone_wr--;
	/*
	 * Fast path: a non-speculative, non-acquire op whose thread has
	 * nothing waiting resolves alone (nothing else can change).
	 */
	if (!(e->flags & F_SPEC) && e->kind != OMS_RLSQ_ACQUIRE &&
	    th->queued == 0) {
		resolve(q, th, e);
		return 0;
	}
	scan_thread(q, th);
	return 0;
}

int oms_rlsq_invalidate(struct oms_rlsq *q, uint64_t line)
{
	unsigned n = 0;

	if (!q || !q->e)
		return -EINVAL;
	q->cnt.invalidations++;
	if (!q->nspec)
		return 0;
	for (unsigned i = 0; i < q->cap; i++) {
		struct oms_rlsq_entry *e = &q->e[i];

		if (!(e->flags & F_SPEC) || e->line != line)
			continue;
		if (e->state == S_ISSUED && !(e->flags & F_SQUASH)) {
			e->flags |= F_SQUASH;
		} else if (e->state == S_DONE) {
			e->state = S_READY;
			e->flags |= F_RETRY;
			q->t[e->thread].rd_undone[bucket(line)]++;
			fifo_add(q, &q->xq_head, &q->xq_tail, (uint16_t)i);
		} else {
			continue;
		}
		n++;
		q->cnt.squashed++;
	}
	return (int)n;
}

int oms_rlsq_live(const struct oms_rlsq *q)
{
	if (!q || !q->e)
		return -EINVAL;
	return (int)q->live;
}

int oms_rlsq_speculative(const struct oms_rlsq *q, uint32_t id)
{
	const struct oms_rlsq_entry *e;

	if (!q || !q->e)
		return -EINVAL;
	e = lookup(q, id);
	if (!e)
		return -ENOENT;
	/* A squashed in-flight read is as good as speculative: its value
	 * is thrown away and read again, even once no acquire holds it. */
	return !!(e->flags & (F_SPEC | F_SQUASH));
}
