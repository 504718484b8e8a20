// SPDX-License-Identifier: MIT
/*
 * When the emulated device does each command, lock held: take rung
 * commands (intake, each numbered with its intake index), check them
 * (keys with the drop counter of seed 003, ranges, rights, sizes), keep
 * them in the pool until they may go (lib/emu/order.c says what each
 * waits for), then hand them on - puts and atomics to perform.c, gets
 * to the read engine (reads.c), sequenced ones to the reorder buffer
 * (seq.c) - and send completions back.  Chaos mode is here too: the pool
 * lets ready entries go in random order, and completions are delayed and
 * returned in random order.
 */
#include <errno.h>
#include <string.h>

#include "emu/emu.h"

int emu_validate(struct oms_emu *dev, const struct emu_queue *q,
		 const struct oms_wr *wr)
{
	const struct emu_region *r;
	uint32_t need;
	int err;

	(void)q;
	switch (wr->op) {
	case OMS_WR_PUT:
		need = OMS_ACCESS_REMOTE_WRITE;
		break;
	case OMS_WR_GET:
		need = OMS_ACCESS_REMOTE_READ;
		break;
	case OMS_WR_FADD:
	case OMS_WR_CAS:
		need = OMS_ACCESS_REMOTE_ATOMIC;
		break;
	case OMS_WR_FLUSH:
	case OMS_WR_NOP:
	case OMS_WR_RESUME:
		/* Stream, fence and resume state is kept per destination. */
		if ((wr->op == OMS_WR_RESUME ||
		     (wr->flags & (OMS_WR_F_SEQ | OMS_WR_F_FENCE))) &&
		    wr->dest >= OMS_MAX_NODES)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
	if (wr->len == 0 || wr->len > EMU_MAX_OP)
		return -EMSGSIZE;
	err = oms_kc_check(&dev->kc, wr->region, wr->key);
	if (err)
		return err;
	r = &dev->reg[wr->region];
	if (!r->valid || r->node != wr->dest)
		return -EFAULT;
	if (wr->off > r->len || wr->len > r->len - wr->off)
		return -EFAULT;
	if (!(r->access & need))
		return -EPERM;
	if ((wr->op == OMS_WR_FADD || wr->op == OMS_WR_CAS) &&
	    (wr->len != 8 || ((uintptr_t)r->base + wr->off) % 8))
		return -EINVAL;
	return 0;
}

/*
 * The pool entry of command @wr (intake index @idx), which passed its
 * checks.  A data command carries the generation its key passed for, and
 * one through a listener's window names the window's memory from here on
 * (the same bytes for C1, the same lines for the read engine).
 */
static struct emu_pend admit(const struct oms_emu *dev,
			     const struct oms_wr *wr, uint32_t idx)
{
	struct emu_pend p = { .wr = *wr, .idx = idx };
	uint32_t home;

	switch (wr->op) {
	case OMS_WR_PUT:
	case OMS_WR_GET:
	case OMS_WR_FADD:
	case OMS_WR_CAS:
		home = dev->reg[wr->region].home;
		p.wr.region = home;
		p.gen = dev->reg[home].gen;
		break;
	default:
		break;
	}
	return p;
}

/*
 * The responder NIC serves one request every lat_req_ns, whatever its
 * length (its message rate, the bound of small RDMA READs on real NICs):
 * how long the request arriving at @now waits until it has been served.
 * Requests are admitted in the order they arrive in model time (see
 * emu_admit()), so the NIC is a FIFO of model time.
 */
static uint64_t nic_admit(struct oms_emu *dev, const struct oms_wr *wr,
			  uint64_t now)
{
	uint64_t *free_at = &dev->nic_free[wr->dest % OMS_MAX_NODES];
	uint64_t start;

	if (!dev->cfg.time_scale || !dev->cfg.lat_req_ns ||
	    wr->op == OMS_WR_FLUSH || wr->op == OMS_WR_NOP ||
	    wr->op == OMS_WR_RESUME)
		return 0;
	start = *free_at > now ? *free_at : now;
	*free_at = start + dev->cfg.lat_req_ns;
	return *free_at - now;
}

/* Pool entry @p has reached the responder NIC (model time @now): when it
 * reaches the memory, or for a get the root complex. */
static void admit_at(struct oms_emu *dev, struct emu_pend *p, uint64_t now)
{
	uint64_t wait = nic_admit(dev, &p->wr, now);

	p->due = p->wr.op == OMS_WR_GET ? emu_get_due(dev, now, wait) :
					  now + wait + emu_bus_ns(dev);
	p->admitted = 1;
}

/* A command that fails its checks: completed at once, memory untouched. */
static int refuse(struct oms_emu *dev, struct emu_queue *q,
		  const struct oms_wr *wr, uint32_t idx, uint64_t arrive,
		  int err)
{
	/* A refused stream member fills its sequence number; the stream
	 * stops there (seq.c). */
	if ((wr->flags & OMS_WR_F_SEQ) && wr->op != OMS_WR_FLUSH &&
	    wr->op != OMS_WR_RESUME)
		emu_seq_skip(dev, q, wr);
	emu_note_fail(q, wr->dest, idx);
	emu_src_done(q);
	return emu_complete(dev, q, wr->slot, err, 0,
			    arrive + 2 * emu_bus_ns(dev));
}

/* Gets of an unordered queue (the control) go straight to the RLSQ. */
static int get_bypasses_pool(const struct emu_queue *q,
			     const struct oms_wr *wr)
{
	return wr->op == OMS_WR_GET && (q->flags & EMU_Q_UNORDERED) &&
	       !(wr->flags & (OMS_WR_F_SEQ | OMS_WR_F_FENCE));
}

/*
 * @not_before: the model time its initiator thread posted it at (0
 * without a latency model).  It reaches the responder NIC then, or now
 * if the clock is past that (a thread back from the kernel).
 */
static int accept(struct oms_emu *dev, struct emu_queue *q,
		  const struct oms_wr *wr, uint32_t idx, uint64_t not_before)
{
	uint64_t now = emu_now(dev);
	uint64_t arrive = not_before > now ? not_before : now;
	struct emu_pend *p;
	int err = emu_validate(dev, q, wr);

	if (err)
		return refuse(dev, q, wr, idx, arrive, err);
	if (wr->op == OMS_WR_FLUSH && (wr->flags & OMS_WR_F_SEQ)) {
		emu_seq_flush(dev, q, &(struct emu_pend){ .wr = *wr,
							  .idx = idx });
		return 1;
	}
	if (get_bypasses_pool(q, wr)) {
		struct emu_pend g = admit(dev, wr, idx);

		/* the control's gets take their NIC turn at intake */
		admit_at(dev, &g, arrive);
		return emu_get_accept(dev, q, &g);
	}
	p = &q->pool[q->npool++];
	*p = admit(dev, wr, idx);
	p->arrive = arrive;
	if (wr->op == OMS_WR_GET)
		q->gets_pending++;
	/* without a model everything is due at once */
	if (!dev->cfg.time_scale)
		admit_at(dev, p, 0);
	else
		q->unadmitted++;
	/* A resume sets where a stream goes on; it is never a member of one. */
	if (wr->op == OMS_WR_RESUME)
		p->wr.flags &= (uint8_t)~OMS_WR_F_SEQ;
	/* Seed 002: a posted write of node q->node to wr->dest is tracked
	 * until it is visible, so class-2 responses can wait for it. */
	if (wr->op == OMS_WR_PUT && !dev->cfg.no_hold &&
	    !oms_hold_post(&dev->hold[q->node], wr->dest, &p->hold_id))
		p->posted = 1;
	return 1;
}

/*
 * Commands that have reached their responder NIC by the clock's time
 * take their turn there, in the order they arrived: the clock stands at
 * the time of the earliest arrival not yet admitted (clock.c), so each
 * pass admits the arrivals of one instant.  Those of one instant go queue
 * by queue, from a queue that changes at every tick, so that no queue is
 * always served first.
 */
int emu_admit(struct oms_emu *dev)
{
	uint64_t now = emu_now(dev);
	int n = 0;

	for (uint32_t k = 0; k < dev->nq; k++) {
		struct emu_queue *q = dev->qlist[(dev->admit_from + k) %
						 dev->nq];
		uint32_t i;

		/* Those not admitted are the pool's last ones (a queue's
		 * arrivals are in intake order, and only admitted ones leave
		 * the pool), in the order they arrive. */
		for (i = q->npool - q->unadmitted;
		     i < q->npool && q->pool[i].arrive <= now; i++) {
			admit_at(dev, &q->pool[i], now);
			q->unadmitted--;
			n++;
		}
	}
	return n;
}

int emu_intake(struct oms_emu *dev, struct emu_queue *q)
{
	uint32_t db = __atomic_load_n(&q->doorbell, __ATOMIC_ACQUIRE);
	int n = 0;

	/* A doorbell beyond what the ring can hold is refused (counted). */
	if (db - q->cons.taken > q->size) {
		q->cons.refused++;
		return 0;
	}
	q->cons.written = q->cons.rung = db;
	/* Bounds: the pool, the reads, and the commands outstanding (at
	 * most the ring: the completion ring and the flush list never
	 * overflow). */
	while (q->npool < EMU_POOL &&
	       q->get_tail - q->get_head + q->gets_pending < EMU_MAX_GETS &&
	       q->cons.taken - q->cq_tail < q->size) {
		uint32_t idx = q->cons.taken;
		int slot = oms_db_consume(&q->cons);

		if (slot < 0)
			break;
		accept(dev, q, &q->sq[slot], idx,
		       dev->cfg.time_scale ? q->not_before[slot] : 0);
		n++;
	}
	if (n)
		__atomic_store_n(&q->taken, q->cons.taken, __ATOMIC_RELEASE);
	return n;
}

/* OMS_WR_RESUME: forget the destination's failures, resume its stream
 * at the number the resume carries (backend.h). */
static void resume(struct oms_emu *dev, struct emu_queue *q,
		  const struct emu_pend *p)
{
	uint32_t bit = 1u << p->wr.dest;

	q->failed &= ~bit;
	emu_seq_resume(dev, q, p->wr.dest, (uint16_t)p->wr.seq);
	emu_src_done(q);
	emu_complete(dev, q, p->wr.slot, 0, 0, emu_now(dev) + emu_bus_ns(dev));
}

/* @p left the pool (emu_pool_ready() said so): perform it. */
static void execute(struct oms_emu *dev, struct emu_queue *q,
		    const struct emu_pend *p)
{
	if (p->wr.flags & OMS_WR_F_SEQ) {
		emu_seq_arrive(dev, q, p);
		return;
	}
	if ((p->wr.flags & OMS_WR_F_FENCE) &&
	    emu_fence_failed(q, p->wr.dest, p->idx)) {
		emu_fail(dev, q, p, -ECANCELED);
		return;
	}
	switch (p->wr.op) {
	case OMS_WR_GET:
		q->gets_pending--;
		emu_get_accept(dev, q, p);
		break;
	case OMS_WR_RESUME:
		resume(dev, q, p);
		break;
	default:
		emu_apply(dev, q, p);
		break;
	}
}

static void pool_remove(struct emu_queue *q, uint32_t j)
{
	memmove(&q->pool[j], &q->pool[j + 1],
		(q->npool - j - 1) * sizeof(q->pool[0]));
	q->npool--;
}

/* Take pool entry @j out and perform it (the pool then no longer holds
 * it, so what it performs sees the pool as it is). */
static void leave_pool(struct oms_emu *dev, struct emu_queue *q, uint32_t j)
{
	struct emu_pend p = q->pool[j];

	pool_remove(q, j);
	execute(dev, q, &p);
}

int emu_exec_pool(struct oms_emu *dev, struct emu_queue *q)
{
	uint64_t now = emu_now(dev);
	int n = 0;

	if (!dev->cfg.chaos_seed) {
		/* In order, while the next is ready; one move at the end.
		 * The ones done stay in the pool until then, so a fence
		 * behind them waits for the next step. */
		uint32_t j = 0;

		while (j < q->npool && emu_pool_ready(q, &q->pool[j], now))
			execute(dev, q, &q->pool[j++]);
		if (j) {
			memmove(&q->pool[0], &q->pool[j],
				(q->npool - j) * sizeof(q->pool[0]));
			q->npool -= j;
		}
		return (int)j;
	}
	/* Chaos: a few random picks; an entry may go only if nothing
	 * older in the pool must go first (else the oldest such one is
	 * tried instead) and it is ready. */
	for (int tries = 1 + (int)(emu_rand(dev) % (q->npool + 1));
	     tries > 0 && q->npool;
	     tries--) {
		uint32_t j = (uint32_t)(emu_rand(dev) % q->npool);

		j = emu_pool_first_blocker(q, j);
		if (!emu_pool_ready(q, &q->pool[j], now))
			continue;
		leave_pool(dev, q, j);
		n++;
	}
	return n;
}

int emu_deliver_acks(struct oms_emu *dev, struct emu_queue *q)
{
	uint32_t head = __atomic_load_n(&q->cq_head, __ATOMIC_ACQUIRE);
	uint32_t tail = q->cq_tail, n = 0;
	uint64_t now = emu_now(dev);

	if (!q->nacks || q->ack_due_min > now)
		return 0;
	if (!dev->cfg.chaos_seed) {
		/* Every one due, in the order they were made; the others
		 * keep theirs (under the latency model a get's response can
		 * be due after a later put's completion). */
		uint32_t keep = 0;

		for (uint32_t j = 0; j < q->nacks; j++) {
			if (q->acks[j].due <= now && tail - head < q->size) {
				q->cq[tail++ & (q->size - 1)] = q->acks[j].wc;
				n++;
			} else {
				q->acks[keep++] = q->acks[j];
			}
		}
		q->nacks = keep;
	} else {
		/* Delay and reorder: return a random half, in random order. */
		for (uint32_t k = q->nacks / 2 + 1; k > 0 && q->nacks &&
		     tail - head < q->size; k--) {
			uint32_t j = (uint32_t)(emu_rand(dev) % q->nacks);

			if (q->acks[j].due > now || (emu_rand(dev) & 1))
				continue;
			q->cq[tail++ & (q->size - 1)] = q->acks[j].wc;
			q->acks[j] = q->acks[--q->nacks];
			n++;
		}
	}
	q->ack_due_min = EMU_NO_EVENT;
	for (uint32_t j = 0; j < q->nacks; j++)
		if (q->acks[j].due < q->ack_due_min)
			q->ack_due_min = q->acks[j].due;
	if (n)
		__atomic_store_n(&q->cq_tail, tail, __ATOMIC_RELEASE);
	return (int)n;
}
