// SPDX-License-Identifier: MIT
/*
 * What the device keeps in order among the commands of one queue (the
 * per-destination contract of lib/backend.h), lock held:
 *
 * - the pool: a taken command leaves it only when no older command of the
 *   queue that it must follow is still there: a write or a get follows an
 *   older overlapping write (same bytes), a get follows every older get
 *   (the RLSQ takes a thread's reads in program order, which acquire
 *   needs), a fenced command or a resume follows every older command to
 *   its destination and a resume precedes every later one, a flush without
 *   OMS_WR_F_SEQ is a barrier both ways.  A write may pass an older
 *   overlapping get (write after read is ordered only with a fence), and
 *   chaos makes it do so.  An unordered queue (a control) keeps only the
 *   barriers;
 * - fences: a fenced command is performed only when every command taken
 *   before it to its destination has been performed: left the pool,
 *   applied from the reorder buffer, and for gets, every line read;
 * - failures: the intake index of the first failed command per
 *   destination since the last resume; a fenced command taken after it is
 *   cancelled (-ECANCELED) instead of performed.
 *
 * Intake indexes are free-running 32-bit counters compared as serial
 * numbers: at most a ring's worth of commands is ever outstanding.
 */
#include "emu/emu.h"

static int before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static int to_dest(const struct oms_wr *wr, uint32_t dest)
{
	return dest == EMU_ANY_DEST || wr->dest == dest;
}

static int is_write(const struct oms_wr *wr)
{
	return wr->op == OMS_WR_PUT || wr->op == OMS_WR_FADD ||
	       wr->op == OMS_WR_CAS;
}

static int is_data(const struct oms_wr *wr)
{
	return is_write(wr) || wr->op == OMS_WR_GET;
}

static int same_bytes(const struct oms_wr *a, const struct oms_wr *b)
{
	return a->region == b->region && a->off < b->off + b->len &&
	       b->off < a->off + a->len;
}

void emu_note_fail(struct emu_queue *q, uint32_t dest, uint32_t idx)
{
	uint32_t bit = 1u << dest;

	if (dest >= OMS_MAX_NODES)
		return;
	if (!(q->failed & bit) || before(idx, q->fail_idx[dest])) {
		q->failed |= bit;
		q->fail_idx[dest] = idx;
	}
}

/* Did a command to @dest taken before @idx fail since the last resume? */
int emu_fence_failed(const struct emu_queue *q, uint32_t dest, uint32_t idx)
{
	return dest < OMS_MAX_NODES && (q->failed & (1u << dest)) &&
	       before(q->fail_idx[dest], idx);
}

static int pool_before(const struct emu_queue *q, uint32_t dest,
		       uint32_t idx, int member)
{
	for (uint32_t i = 0; i < q->npool; i++) {
		const struct emu_pend *p = &q->pool[i];

		if (!before(p->idx, idx))
			break;		/* the pool is in intake order */
		/* the stream's own members: the reorder buffer orders them */
		if (member && (p->wr.flags & OMS_WR_F_SEQ))
			continue;
		if (to_dest(&p->wr, dest))
			return 1;
	}
	return 0;
}

static int parked_before(const struct emu_queue *q, uint32_t dest,
			 uint32_t idx)
{
	if (q->npark_free == EMU_SEQ_WINDOW ||
	    (dest != EMU_ANY_DEST && !q->npark_dest[dest]))
		return 0;
	for (uint32_t w = 0; w < EMU_SEQ_WINDOW / 64; w++) {
		for (uint64_t m = q->park_used[w]; m; m &= m - 1) {
			const struct emu_pend *p =
				&q->parked[w * 64 + __builtin_ctzll(m)];

			if (to_dest(&p->wr, dest) && before(p->idx, idx))
				return 1;
		}
	}
	return 0;
}

static int gets_unread_before(const struct emu_queue *q, uint32_t dest,
			      uint32_t idx)
{
	for (uint32_t i = q->get_head; i != q->get_tail; i++) {
		const struct emu_get *g = &q->gets[i % EMU_MAX_GETS];

		if (g->active && to_dest(&g->wr, dest) && before(g->idx, idx) &&
		    g->executed < g->nlines)
			return 1;
	}
	return 0;
}

/*
 * Has every command taken before @idx to @dest (EMU_ANY_DEST: to any)
 * been performed?  @member: the asker is a member of @dest's sequenced
 * stream, at its head: the stream's earlier members are done, and its
 * later ones (a held store takes its number before a later op that is
 * posted first) must not be waited for: they wait for the asker.
 */
int emu_fence_ready(const struct emu_queue *q, uint32_t dest, uint32_t idx,
		    int member)
{
	if (pool_before(q, dest, idx, member))
		return 0;
	if (!member && parked_before(q, dest, idx))
		return 0;
	return !gets_unread_before(q, dest, idx);
}

/* Must @b (taken after @a) stay in the pool while @a is there? */
static int pool_blocks(const struct emu_queue *q, const struct oms_wr *a,
		       const struct oms_wr *b)
{
	if (a->op == OMS_WR_FLUSH || b->op == OMS_WR_FLUSH)
		return 1;
	if (a->dest == b->dest && (a->op == OMS_WR_RESUME ||
				   b->op == OMS_WR_RESUME ||
				   (b->flags & OMS_WR_F_FENCE)))
		return 1;
	if (q->flags & EMU_Q_UNORDERED)
		return 0;
	if (a->op == OMS_WR_GET && b->op == OMS_WR_GET)
		return 1;
	return is_write(a) && is_data(b) && same_bytes(a, b);
}

/*
 * A command without OMS_WR_F_SEQ may not pass a sequenced write of the
 * same bytes taken before it and still parked in the reorder buffer
 * (leaving the pool did not perform that one).  Only queues with
 * something parked for the destination pay for the scan.
 */
static int parked_write_before(const struct emu_queue *q,
			       const struct emu_pend *b)
{
	uint32_t dest = b->wr.dest;

	if (dest >= OMS_MAX_NODES || !q->npark_dest[dest] ||
	    !is_data(&b->wr) || (q->flags & EMU_Q_UNORDERED))
		return 0;
	for (uint32_t w = 0; w < EMU_SEQ_WINDOW / 64; w++) {
		for (uint64_t m = q->park_used[w]; m; m &= m - 1) {
			const struct emu_pend *p =
				&q->parked[w * 64 + __builtin_ctzll(m)];

			if (p->wr.dest == dest && before(p->idx, b->idx) &&
			    is_write(&p->wr) && same_bytes(&p->wr, &b->wr))
				return 1;
		}
	}
	return 0;
}

/* Commands that wait for every earlier one when not in a stream. */
static int fenced(const struct oms_wr *wr)
{
	return (wr->flags & OMS_WR_F_FENCE) || wr->op == OMS_WR_RESUME ||
	       wr->op == OMS_WR_FLUSH;
}

/*
 * The oldest entry at or before @j that must leave the pool before the
 * others up to @j may: the one to try instead of @j.
 */
uint32_t emu_pool_first_blocker(const struct emu_queue *q, uint32_t j)
{
	uint32_t i = 0;

	while (i < j) {
		if (pool_blocks(q, &q->pool[i].wr, &q->pool[j].wr)) {
			j = i;
			i = 0;
			continue;
		}
		i++;
	}
	return j;
}

/* May pool entry @p, with nothing older in the pool blocking it, go? */
int emu_pool_ready(const struct emu_queue *q, const struct emu_pend *p,
		   uint64_t now)
{
	if (!p->admitted || p->due > now)
		return 0;
	/* Sequenced members are only parked when they leave: their fence
	 * is checked at the head of the stream. */
	if (p->wr.flags & OMS_WR_F_SEQ)
		return 1;
	if (fenced(&p->wr))
		return emu_fence_ready(q, p->wr.op == OMS_WR_FLUSH ?
				       EMU_ANY_DEST : p->wr.dest, p->idx, 0);
	return !parked_write_before(q, p);
}
