// SPDX-License-Identifier: MIT
/*
 * What the emulated device does with each command, lock held: take rung
 * commands (intake), check them (keys with the drop counter of seed 003,
 * ranges, rights, sizes), execute puts and atomics against host memory,
 * and send completions back.  Chaos mode is here too: puts and atomics
 * of a queue execute in random order except that two touching the same
 * bytes keep their order (what one channel guarantees), and completions
 * are delayed and returned in random order.
 */
#include <errno.h>
#include <string.h>

#include "emu/emu.h"

static uint64_t bus_ns(const struct emu_dev *dev)
{
	return dev->cfg.time_scale ? dev->cfg.lat_bus_ns : 0;
}

int emu_validate(struct emu_dev *dev, const struct emu_queue *q,
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

/* Host memory of a region changed: squash speculative reads of it. */
void emu_invalidate(struct emu_dev *dev, uint32_t region, uint64_t off,
		    uint64_t len)
{
	uint64_t first = off / EMU_LINE, last = (off + len - 1) / EMU_LINE;

	if (!len || !dev->rlsq.nspec)
		return;
	for (uint64_t l = first; l <= last; l++)
		oms_rlsq_invalidate(&dev->rlsq, ((uint64_t)region << 32) | l);
}

int emu_complete(struct emu_dev *dev, struct emu_queue *q, uint32_t slot,
		 int status, uint64_t value, uint64_t due)
{
	struct emu_done *d = &q->acks[q->nacks++];

	(void)dev;
	d->wc.slot = slot;
	d->wc.status = status;
	d->wc.value = value;
	d->due = due;
	return 1;
}

static void src_done(struct emu_queue *q)
{
	__atomic_add_fetch(&q->src_done, 1, __ATOMIC_RELEASE);
}

/*
 * The responder NIC serves one request every lat_req_ns, whatever its
 * length (its message rate, the bound of small RDMA READs on real NICs):
 * how long the request arriving at @now waits until it has been served.
 */
static uint64_t nic_admit(struct emu_dev *dev, const struct oms_wr *wr,
			  uint64_t now)
{
	uint64_t *free_at = &dev->nic_free[wr->dest % OMS_MAX_NODES];
	uint64_t start;

	if (!dev->cfg.time_scale || !dev->cfg.lat_req_ns ||
	    wr->op == OMS_WR_FLUSH || wr->op == OMS_WR_NOP)
		return 0;
	start = *free_at > now ? *free_at : now;
	*free_at = start + dev->cfg.lat_req_ns;
	return *free_at - now;
}

static int accept(struct emu_dev *dev, struct emu_queue *q,
		  const struct oms_wr *wr)
{
	uint64_t now = emu_now(dev), wait;
	struct emu_pend *p;
	int err = emu_validate(dev, q, wr);

	if (err) {
		/* keep the stream moving past a refused member */
		if ((wr->flags & OMS_WR_F_SEQ) && wr->op != OMS_WR_FLUSH)
			emu_seq_skip(dev, q, wr);
		src_done(q);
		return emu_complete(dev, q, wr->slot, err, 0,
				    now + 2 * bus_ns(dev));
	}
	if (wr->op == OMS_WR_FLUSH && (wr->flags & OMS_WR_F_SEQ)) {
		emu_seq_flush(dev, q, wr);
		return 1;
	}
	wait = nic_admit(dev, wr, now);
	if (wr->op == OMS_WR_GET && !(wr->flags & OMS_WR_F_SEQ))
		return emu_get_accept(dev, q, wr, wait);
	if (wr->op == OMS_WR_GET)
		q->gets_pending++;
	p = &q->pool[q->npool++];
	p->wr = *wr;
	p->due = now + wait + bus_ns(dev);
	p->posted = 0;
	/* Seed 002: a posted write of node q->node to wr->dest is tracked
	 * until it is visible, so class-2 responses can wait for it. */
	if (wr->op == OMS_WR_PUT && !dev->cfg.no_hold &&
	    !oms_hold_post(&dev->hold[q->node], wr->dest, &p->hold_id))
		p->posted = 1;
	return 1;
}

int emu_intake(struct emu_dev *dev, struct emu_queue *q)
{
	uint32_t db = __atomic_load_n(&q->doorbell, __ATOMIC_ACQUIRE);
	int n = 0;

	/* A doorbell beyond what the ring can hold is refused (counted). */
	if (db - q->cons.taken > q->size) {
		q->cons.refused++;
		return 0;
	}
	q->cons.written = q->cons.rung = db;
	while (q->npool < EMU_POOL &&
	       q->get_tail - q->get_head + q->gets_pending < EMU_MAX_GETS &&
	       q->cons.taken - q->cq_tail < q->size) {
		int slot = oms_db_consume(&q->cons);

		if (slot < 0)
			break;
		accept(dev, q, &q->sq[slot]);
		n++;
	}
	if (n)
		__atomic_store_n(&q->taken, q->cons.taken, __ATOMIC_RELEASE);
	return n;
}

static int overlaps(const struct oms_wr *a, const struct oms_wr *b)
{
	if (a->op == OMS_WR_FLUSH || b->op == OMS_WR_FLUSH)
		return 1;
	if (a->op == OMS_WR_NOP || b->op == OMS_WR_NOP)
		return 0;
	return a->region == b->region && a->off < b->off + b->len &&
	       b->off < a->off + a->len;
}

/* Retire @p with @status without touching memory. */
void emu_fail(struct emu_dev *dev, struct emu_queue *q,
	      const struct emu_pend *p, int status)
{
	if (p->posted)
		oms_hold_ack(&dev->hold[q->node], p->wr.dest, p->hold_id);
	if (p->wr.op == OMS_WR_GET && (p->wr.flags & OMS_WR_F_SEQ))
		q->gets_pending--;
	src_done(q);
	emu_complete(dev, q, p->wr.slot, status, 0,
		     emu_now(dev) + bus_ns(dev));
}

/* Perform @p against host memory and send its completion. */
void emu_apply(struct emu_dev *dev, struct emu_queue *q,
	       const struct emu_pend *p)
{
	const struct oms_wr *wr = &p->wr;
	struct emu_region *r = &dev->reg[wr->region % EMU_MAX_REGIONS];
	uint64_t value = 0;
	int status = 0;

	if (wr->op == OMS_WR_GET) {
		if (wr->flags & OMS_WR_F_SEQ)
			q->gets_pending--;
		emu_get_accept(dev, q, wr, 0);	/* served at intake */
		return;
	}
	if (wr->op == OMS_WR_PUT || wr->op == OMS_WR_FADD ||
	    wr->op == OMS_WR_CAS) {
		/* Deregistered since it was checked. */
		if (!r->valid || wr->off + wr->len > r->len)
			status = -EACCES;
	}
	if (!status) {
		uint8_t *at = r->base + wr->off;

		switch (wr->op) {
		case OMS_WR_PUT:
			memcpy(at, (const void *)(uintptr_t)wr->local, wr->len);
			break;
		case OMS_WR_FADD:
			value = __atomic_fetch_add((uint64_t *)at, wr->a1,
						   __ATOMIC_SEQ_CST);
			break;
		case OMS_WR_CAS:
			value = wr->a1;
			__atomic_compare_exchange_n((uint64_t *)at, &value,
						    wr->a2, 0,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
			break;
		default:
			break;
		}
		if (wr->op == OMS_WR_PUT || wr->op == OMS_WR_FADD ||
		    wr->op == OMS_WR_CAS) {
			emu_invalidate(dev, wr->region, wr->off, wr->len);
			dev->executed++;
			if (dev->observe)
				dev->observe(dev->observe_arg, q->id, wr);
		}
	}
	if (p->posted)
		oms_hold_ack(&dev->hold[q->node], wr->dest, p->hold_id);
	src_done(q);
	emu_complete(dev, q, wr->slot, status, value,
		     emu_now(dev) + bus_ns(dev));
}

static void execute(struct emu_dev *dev, struct emu_queue *q,
		    const struct emu_pend *p)
{
	if (p->wr.flags & OMS_WR_F_SEQ)
		emu_seq_arrive(dev, q, p);
	else
		emu_apply(dev, q, p);
}

static void pool_remove(struct emu_queue *q, uint32_t j)
{
	memmove(&q->pool[j], &q->pool[j + 1],
		(q->npool - j - 1) * sizeof(q->pool[0]));
	q->npool--;
}

int emu_exec_pool(struct emu_dev *dev, struct emu_queue *q)
{
	uint64_t now = emu_now(dev);
	int n = 0;

	if (!dev->cfg.chaos_seed) {
		uint32_t j = 0;

		while (j < q->npool && q->pool[j].due <= now)
			j++;
		for (uint32_t i = 0; i < j; i++)
			execute(dev, q, &q->pool[i]);
		if (j) {
			memmove(&q->pool[0], &q->pool[j],
				(q->npool - j) * sizeof(q->pool[0]));
			q->npool -= j;
		}
		return (int)j;
	}
	/* Chaos: a few random picks; an entry may go only if nothing
	 * older in the queue touches its bytes (else the oldest such one
	 * goes instead). */
	for (int tries = 1 + (int)(emu_rand(dev) % (q->npool + 1));
	     tries > 0 && q->npool;
	     tries--) {
		uint32_t j = (uint32_t)(emu_rand(dev) % q->npool);
		uint32_t i = 0;

		while (i < j) {
			if (overlaps(&q->pool[i].wr, &q->pool[j].wr)) {
				j = i;
				i = 0;
				continue;
			}
			i++;
		}
		if (q->pool[j].due > now)
			continue;
		execute(dev, q, &q->pool[j]);
		pool_remove(q, j);
		n++;
	}
	return n;
}

int emu_flush_acks(struct emu_dev *dev, struct emu_queue *q)
{
	uint32_t head = __atomic_load_n(&q->cq_head, __ATOMIC_ACQUIRE);
	uint32_t tail = q->cq_tail, n = 0;
	uint64_t now = emu_now(dev);

	if (!q->nacks)
		return 0;
	if (!dev->cfg.chaos_seed) {
		uint32_t j = 0;

		while (j < q->nacks && tail - head < q->size &&
		       q->acks[j].due <= now) {
			q->cq[tail++ & (q->size - 1)] = q->acks[j].wc;
			j++;
		}
		if (j)
			memmove(&q->acks[0], &q->acks[j],
				(q->nacks - j) * sizeof(q->acks[0]));
		q->nacks -= j;
		n = j;
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
	if (n)
		__atomic_store_n(&q->cq_tail, tail, __ATOMIC_RELEASE);
	return (int)n;
}
