// SPDX-License-Identifier: MIT
/*
 * What the emulated device does to host memory, whoever decided it was
 * time (the pool, exec.c; a stream's head, seq.c; the read engine,
 * reads.c): perform a put, an atomic, a flush or a NOP, or retire a
 * command that fails, and queue its completion, due after the bus.
 * Lock held.
 */
#include <errno.h>
#include <string.h>

#include "emu/emu.h"

/* The bus's latency in model time (0 without a model). */
uint64_t emu_bus_ns(const struct oms_emu *dev)
{
	return dev->cfg.time_scale ? dev->cfg.lat_bus_ns : 0;
}

int emu_complete(struct oms_emu *dev, struct emu_queue *q, uint32_t slot,
		 int status, uint64_t value, uint64_t due)
{
	struct emu_done *d = &q->acks[q->nacks++];

	(void)dev;
	if (due < q->ack_due_min)
		q->ack_due_min = due;
	d->wc.slot = slot;
	d->wc.status = status;
	d->wc.value = value;
	d->due = due;
	return 1;
}

void emu_src_done(struct emu_queue *q)
{
	__atomic_add_fetch(&q->src_done, 1, __ATOMIC_RELEASE);
}

/* Retire @p with @status without touching memory. */
void emu_fail(struct oms_emu *dev, struct emu_queue *q,
	      const struct emu_pend *p, int status)
{
	if (p->posted)
		oms_hold_ack(&dev->hold[q->node], p->wr.dest, p->hold_id);
	/* A get failed here never reached the RLSQ. */
	if (p->wr.op == OMS_WR_GET)
		q->gets_pending--;
	emu_note_fail(q, p->wr.dest, p->idx);
	emu_src_done(q);
	emu_complete(dev, q, p->wr.slot, status, 0,
		     emu_now(dev) + emu_bus_ns(dev));
}

/*
 * Perform put, atomic, flush or NOP @p against host memory and send its
 * completion; returns its status.  (Gets go to emu_get_accept().)
 */
int emu_apply(struct oms_emu *dev, struct emu_queue *q,
	      const struct emu_pend *p)
{
	const struct oms_wr *wr = &p->wr;
	struct emu_region *r = &dev->reg[wr->region % EMU_MAX_REGIONS];
	uint64_t value = 0;
	int status = 0;

	if ((wr->op == OMS_WR_PUT || wr->op == OMS_WR_FADD ||
	     wr->op == OMS_WR_CAS) &&
	    !emu_region_live(dev, wr->region, p->gen, wr->off, wr->len))
		status = -EACCES;
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
	if (status)
		emu_note_fail(q, wr->dest, p->idx);
	emu_src_done(q);
	emu_complete(dev, q, wr->slot, status, value,
		     emu_now(dev) + emu_bus_ns(dev));
	return status;
}
