// SPDX-License-Identifier: MIT
/*
 * Gets on the emulated device: each read is split into cache lines that go
 * through the remote load-store queue (lib/engine/rlsq.h, seed 004) as
 * relaxed or acquire reads of the initiator's thread, in program order.
 * The RLSQ says when a line may execute; this file performs the access
 * (immediately, after the latency model's delay, or - in chaos mode - at a
 * random later step, so the lines of a relaxed read land in any order,
 * L30), buffers the data, and copies it to the initiator's buffer when the
 * RLSQ delivers it.  Writes to host memory invalidate the lines (RC-opt
 * squashes and retries speculative reads, L31).  A finished read is a
 * response: class-2 responses pass through the responder hold (seed 002).
 *
 * Latency model (model ns, Table 2 of seed 004): the request crosses the
 * I/O bus (lat_bus), each line costs root complex + memory latency at the
 * RC; in NIC mode each line is a full round trip (2 x lat_bus + RC + mem)
 * because ordering is enforced at the source.  Responses are serialised on
 * a link of link_gbps and cross the bus back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"

#define ORPHAN 0xffffu

int emu_reads_init(struct oms_emu *dev)
{
	static const unsigned mode[] = {
		[OMS_ORDER_RC_OPT] = OMS_RLSQ_RC_OPT,
		[OMS_ORDER_RC] = OMS_RLSQ_RC,
		[OMS_ORDER_NIC] = OMS_RLSQ_NIC,
	};
	uint32_t cap = dev->cfg.rlsq_entries;
	int err;

	if (dev->cfg.read_order > OMS_ORDER_NIC)
		return -EINVAL;
	err = oms_rlsq_init(&dev->rlsq, cap, EMU_MAX_QUEUES,
			    mode[dev->cfg.read_order], NULL, 0);
	if (err)
		return err;
	dev->lines = calloc(cap, sizeof(*dev->lines));
	dev->line_free = calloc(cap, sizeof(*dev->line_free));
	if (!dev->lines || !dev->line_free) {
		emu_reads_fini(dev);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cap; i++)
		dev->line_free[i] = cap - 1 - i;
	dev->nline_free = cap;
	dev->line_due_min = EMU_NO_EVENT;
	return 0;
}

void emu_reads_fini(struct oms_emu *dev)
{
	if (dev->rlsq.e)
		oms_rlsq_destroy(&dev->rlsq);
	free(dev->lines);
	free(dev->line_free);
	dev->lines = NULL;
	dev->line_free = NULL;
}

static uint64_t lat(const struct oms_emu *dev, uint64_t ns)
{
	return dev->cfg.time_scale ? ns : 0;
}

/*
 * Model time a get taken at @now reaches the read engine, @nic_wait being
 * how long the responder NIC takes to serve it.
 */
uint64_t emu_get_due(const struct oms_emu *dev, uint64_t now,
		     uint64_t nic_wait)
{
	/* RC modes: the request crosses the bus before the RC sees it. */
	return now + nic_wait + (dev->cfg.read_order == OMS_ORDER_NIC ? 0 :
				 lat(dev, dev->cfg.lat_bus_ns));
}

/* Hand get @p to the read engine, from model time p->due on; its lines
 * go to the RLSQ in the order of these calls. */
int emu_get_accept(struct oms_emu *dev, struct emu_queue *q,
		   const struct emu_pend *p)
{
	struct emu_get *g = &q->gets[q->get_tail % EMU_MAX_GETS];
	(void)dev;
	g->wr = p->wr;
	g->idx = p->idx;
	g->gen = p->gen;
	g->nlines = oms_line_count(p->wr.off, p->wr.len);
	g->submitted = g->executed = g->delivered = 0;
	g->status = 0;
	g->resp_due = p->due;
	g->active = 1;
	q->get_tail++;
	return 1;
}

static void get_done(struct oms_emu *dev, struct emu_queue *q,
		     struct emu_get *g)
{
	if (dev->observe)
		dev->observe(dev->observe_arg, q->id, &g->wr);
	emu_src_done(q);
	emu_complete(dev, q, g->wr.slot, g->status, 0, g->resp_due);
	g->active = 0;
	while (q->get_head != q->get_sub &&
	       !q->gets[q->get_head % EMU_MAX_GETS].active)
		q->get_head++;
}

/* Every line delivered: the response leaves (maybe held, seed 002). */
static void get_respond(struct oms_emu *dev, struct emu_queue *q,
			struct emu_get *g)
{
	uint64_t now = emu_now(dev);

	if (dev->cfg.time_scale) {
		uint64_t ps = 512000ull / (dev->cfg.link_gbps ? : 100);
		/* the responder's own link (each node's NIC has one) */
		uint64_t *free_ps = &dev->link_free[g->wr.dest % OMS_MAX_NODES];
		uint64_t start = *free_ps > now * 1000 ? *free_ps : now * 1000;

		*free_ps = start + g->nlines * ps;
		g->resp_due = *free_ps / 1000 +
			      (dev->cfg.read_order == OMS_ORDER_NIC ? 0 :
			       dev->cfg.lat_bus_ns);
	} else {
		g->resp_due = 0;
	}
	if ((g->wr.flags & OMS_WR_F_RESP_ORDERED) && !dev->cfg.no_hold) {
		uint64_t cookie = ((uint64_t)q->gen << 32) |
				  ((uint64_t)q->id << 16) |
				  (uint64_t)(g - q->gets);
		int r = oms_hold_send(&dev->hold[g->wr.dest], q->node,
				      OMS_HOLD_CLASS2, cookie);

		if (r == OMS_HOLD_HELD) {
			g->active = 2;
			return;
		}
	}
	get_done(dev, q, g);
}

/* The next get of @q to submit lines of, if its request has arrived. */
static struct emu_get *arrived(struct emu_queue *q, uint64_t now)
{
	struct emu_get *g;

	if (q->get_sub == q->get_tail)
		return NULL;
	g = &q->gets[q->get_sub % EMU_MAX_GETS];
	return g->resp_due <= now ? g : NULL;
}

/* submit_get(): every line in, the RLSQ full, the queue waits at its NIC */
enum { SUB_DONE, SUB_FULL, SUB_HELD };

/*
 * Lines of @g into the RLSQ.  Under NIC ordering the source orders its
 * own reads: a line that would wait for an earlier one of its queue stays
 * at the NIC, without an entry, until that one has come back.
 */
static int submit_get(struct oms_emu *dev, struct emu_queue *q,
		      struct emu_get *g)
{
	unsigned kind = g->wr.flags & OMS_WR_F_ACQUIRE ?
			OMS_RLSQ_ACQUIRE : OMS_RLSQ_READ;
	uint64_t first = oms_line_first(g->wr.off);

	while (g->submitted < g->nlines) {
		uint64_t line = ((uint64_t)g->wr.region << 32) |
				(first + g->submitted);
		uint32_t lb, id;

		if (!dev->nline_free)
			return SUB_FULL;
		if (dev->cfg.read_order == OMS_ORDER_NIC &&
		    oms_rlsq_would_wait(&dev->rlsq, q->id, kind, line) == 1)
			return SUB_HELD;
		lb = dev->line_free[dev->nline_free - 1];
		if (oms_rlsq_submit(&dev->rlsq, q->id, kind, line, lb, &id))
			return SUB_FULL;
		dev->nline_free--;
		dev->lines[lb].q = (uint16_t)q->id;
		dev->lines[lb].g = (uint16_t)(g - q->gets);
		dev->lines[lb].idx = g->submitted;
		dev->lines[lb].state = EMU_LINE_FREE;
		dev->lines[lb].counted = 0;
		g->submitted++;
	}
	q->get_sub++;
	return SUB_DONE;
}

/*
 * The RLSQ's entries are shared by every queue.  They go to the queues in
 * turn, a get at a time, as a NIC's scheduler issues its queues' read
 * requests in turn: a queue with a hundred reads waiting (in an entry
 * each, under RC ordering) cannot keep the other queues' reads out.  The
 * turn moves only when a get is handed in or a queue has none to hand,
 * so it is the model's state, the same however often the device looks;
 * a get cut short by a full RLSQ goes on first when entries free.
 */
static void submit_lines(struct oms_emu *dev)
{
	uint64_t now = emu_now(dev);
	uint32_t passed = 0;

	while (dev->nline_free && passed < dev->nq) {
		struct emu_queue *q = dev->qlist[dev->sub_turn % dev->nq];
		struct emu_get *g = arrived(q, now);
		int r = g ? submit_get(dev, q, g) : SUB_HELD;

		if (r == SUB_FULL)
			return;
		dev->sub_turn = (dev->sub_turn + 1) % dev->nq;
		passed = r == SUB_DONE ? 0 : passed + 1;
	}
}

/* Byte range of line @idx of get @g, relative to the region. */
static void line_span(const struct emu_get *g, uint32_t idx, uint64_t *off,
		      uint64_t *len)
{
	oms_line_span(g->wr.off, g->wr.len, idx, off, len);
}

/* A line of @g could not be read: the get fails (and its stream stops:
 * a sequenced get is its stream's head while it reads). */
static void get_fail(struct oms_emu *dev, struct emu_queue *q,
		     struct emu_get *g, int status)
{
	g->status = status;
	emu_note_fail(q, g->wr.dest, g->idx);
	if (g->wr.flags & OMS_WR_F_SEQ)
		emu_seq_failed(dev, q, g->wr.dest, (uint16_t)g->wr.seq);
}

/* @lb of @g has read for good: a speculative read may still be squashed
 * and re-read (RC-opt), so it counts when it is delivered instead. */
static void line_count(struct emu_get *g, struct emu_line *lb)
{
	if (!lb->counted) {
		lb->counted = 1;
		g->executed++;
	}
}

static void line_execute(struct oms_emu *dev, struct emu_line *lb)
{
	if (lb->q != ORPHAN) {
		struct emu_queue *q = dev->q[lb->q];
		struct emu_get *g = &q->gets[lb->g];
		uint64_t off, len;

		line_span(g, lb->idx, &off, &len);
		if (emu_region_live(dev, g->wr.region, g->gen, off, len))
			memcpy(lb->data, dev->reg[g->wr.region].base + off,
			       len);
		else
			get_fail(dev, q, g, -EACCES);
		if (oms_rlsq_speculative(&dev->rlsq, lb->rid) != 1)
			line_count(g, lb);
	}
	lb->state = EMU_LINE_DONE;
	dev->nline_exec--;
	oms_rlsq_complete(&dev->rlsq, lb->rid, 0);
}

static void line_deliver(struct oms_emu *dev, struct emu_line *lb)
{
	if (lb->q != ORPHAN) {
		struct emu_queue *q = dev->q[lb->q];
		struct emu_get *g = &q->gets[lb->g];
		uint64_t off, len;

		line_span(g, lb->idx, &off, &len);
		line_count(g, lb);
		if (!g->status)
			memcpy((uint8_t *)(uintptr_t)g->wr.local +
			       (off - g->wr.off), lb->data, len);
		if (++g->delivered == g->nlines)
			get_respond(dev, q, g);
	}
	lb->state = EMU_LINE_FREE;
	dev->line_free[dev->nline_free++] = (uint32_t)(lb - dev->lines);
}

/* The least due time of the lines executing (EMU_NO_EVENT: none). */
uint64_t emu_lines_next(struct oms_emu *dev)
{
	uint64_t least = EMU_NO_EVENT;

	if (dev->line_due_min > emu_now(dev) || !dev->nline_exec)
		return dev->nline_exec ? dev->line_due_min : EMU_NO_EVENT;
	for (uint32_t i = 0; i < dev->cfg.rlsq_entries; i++)
		if (dev->lines[i].state == EMU_LINE_EXEC &&
		    dev->lines[i].due < least)
			least = dev->lines[i].due;
	dev->line_due_min = least;
	return least;
}

/* Lines in flight whose access is due (chaos: a random few). */
static int exec_due(struct oms_emu *dev, uint64_t now)
{
	uint32_t cap = dev->cfg.rlsq_entries;
	uint32_t start;
	/* Chaos: a few lines per step, so host writes land between the
	 * lines of one read (the lock is dropped between steps). */
	uint32_t budget;
	int done = 0;

	/* none due yet: the latency model's common case, without a scan */
	if (!dev->cfg.chaos_seed && dev->line_due_min > now)
		return 0;
	start = (uint32_t)(emu_rand(dev) % cap);
	budget = dev->cfg.chaos_seed ? 1 + (uint32_t)(emu_rand(dev) % 4) : cap;
	for (uint32_t k = 0; k < cap && budget; k++) {
		struct emu_line *lb = &dev->lines[(start + k) % cap];

		if (lb->state != EMU_LINE_EXEC || lb->due > now)
			continue;
		if (dev->cfg.chaos_seed && (emu_rand(dev) & 1))
			continue;
		line_execute(dev, lb);
		budget--;
		done++;
	}
	return done;
}

int emu_reads_step(struct oms_emu *dev)
{
	uint64_t exec_ns = dev->cfg.lat_rc_ns + dev->cfg.lat_mem_ns;
	struct oms_rlsq_action act[64];
	uint64_t now = emu_now(dev);
	int work = 0, n;

	if (dev->cfg.read_order == OMS_ORDER_NIC)
		exec_ns += 2ull * dev->cfg.lat_bus_ns;
	submit_lines(dev);
	/* Rounds: actions, then due accesses; an access that completes may
	 * let the next ordered line go in the same step (the latency model
	 * then charges the modelled time, not the step's). */
	for (int round = 0; round < 8; round++) {
		int moved = 0;

		do {
			n = oms_rlsq_poll(&dev->rlsq, act, 64);
			for (int i = 0; i < n; i++) {
				struct emu_line *lb =
					&dev->lines[act[i].cookie];

				if (act[i].type == OMS_RLSQ_DELIVER) {
					line_deliver(dev, lb);
					continue;
				}
				lb->rid = act[i].id;
				lb->state = EMU_LINE_EXEC;
				dev->nline_exec++;
				lb->due = now + lat(dev, exec_ns);
				if (lb->due < dev->line_due_min)
					dev->line_due_min = lb->due;
				/* No model, no chaos: perform it now. */
				if (!dev->cfg.time_scale &&
				    !dev->cfg.chaos_seed)
					line_execute(dev, lb);
			}
			moved += n;
		} while (n > 0);
		work += moved > 0;
		if (!(dev->cfg.time_scale || dev->cfg.chaos_seed) ||
		    !dev->nline_exec)
			break;
		moved = exec_due(dev, now);
		work += moved;
		if (!moved || dev->cfg.chaos_seed)
			break;
	}
	/* Class-2 responses the hold released. */
	for (unsigned node = 0; node < OMS_MAX_NODES; node++) {
		unsigned dst;
		uint64_t cookie;

		while (oms_hold_pop(&dev->hold[node], &dst, &cookie) == 1) {
			struct emu_queue *q = dev->q[(cookie >> 16) & 0xffff];

			/* the queue may have closed (and its id been reused) */
			if (q && q->gen == (uint32_t)(cookie >> 32))
				get_done(dev, q, &q->gets[cookie & 0xffff]);
			work++;
		}
	}
	return work;
}

void emu_reads_drop_queue(struct oms_emu *dev, struct emu_queue *q)
{
	for (uint32_t i = 0; i < dev->cfg.rlsq_entries; i++)
		if (dev->lines[i].q == q->id)
			dev->lines[i].q = ORPHAN;
}
