// SPDX-License-Identifier: MIT
/*
 * A sequenced stream's state that both its users reach: each
 * destination's stream machine (lib/engine/dest_stream.h), the members
 * parked for it until they are performed, and what happens when one
 * fails.  seq.c takes members in and performs them; reads.c fails a
 * sequenced get whose line could not be read.  Here, so that neither
 * file calls the other for it.
 */
#include <errno.h>

#include "emu/emu.h"

/*
 * A destination's machine has a stream for every queue the device may
 * have (EMU_MAX_QUEUES): megabytes, made when the destination gets its
 * first sequenced command rather than for every node of every device.
 * NULL: none yet and @make is 0, or no memory.
 */
struct oms_dseq *emu_seq_machine(struct oms_emu *dev, uint32_t dest, int make)
{
	struct oms_dseq *m = &dev->dseq[dest];

	if (!m->st &&
	    (!make || oms_dseq_init(m, EMU_MAX_QUEUES, EMU_SEQ_WINDOW)))
		return NULL;
	return m;
}

int emu_seq_init(struct oms_emu *dev)
{
	(void)dev;
	return 0;
}

void emu_seq_fini(struct oms_emu *dev)
{
	for (unsigned n = 0; n < OMS_MAX_NODES; n++)
		oms_dseq_destroy(&dev->dseq[n]);
}

void emu_seq_queue_init(struct emu_queue *q)
{
	for (uint32_t i = 0; i < EMU_SEQ_WINDOW; i++)
		q->park_free[i] = (uint16_t)(EMU_SEQ_WINDOW - 1 - i);
	q->npark_free = EMU_SEQ_WINDOW;
	for (uint32_t d = 0; d < OMS_MAX_NODES; d++)
		q->seq_head[d] = EMU_SEQ_NO_HEAD;
	q->seq_lost = 0;
}

void emu_seq_park(struct emu_queue *q, uint16_t slot,
		  const struct emu_pend *p)
{
	q->parked[slot] = *p;
	q->park_used[slot / 64] |= 1ull << (slot % 64);
	q->npark_dest[p->wr.dest]++;
}

void emu_seq_unpark(struct emu_queue *q, uint16_t slot)
{
	q->park_used[slot / 64] &= ~(1ull << (slot % 64));
	q->npark_dest[q->parked[slot].wr.dest]--;
	q->park_free[q->npark_free++] = slot;
}

/* Member @cookie is not performed (a skip was completed at intake). */
void emu_seq_cancel(struct oms_emu *dev, struct emu_queue *q, uint64_t cookie)
{
	if (cookie == EMU_SEQ_SKIP)
		return;
	emu_fail(dev, q, &q->parked[cookie], -ECANCELED);
	emu_seq_unpark(q, (uint16_t)cookie);
}

/* Complete what the machine gave up (a stop, a resume). */
void emu_seq_complete_dropped(struct oms_emu *dev, struct emu_queue *q,
			      struct oms_dseq *m)
{
	uint64_t cookie;

	while (oms_dseq_dropped(m, &cookie))
		emu_seq_cancel(dev, q, cookie);
}

/* Member @seq of @dest's stream failed when performed: nothing after it
 * is performed. */
void emu_seq_failed(struct oms_emu *dev, struct emu_queue *q, uint32_t dest,
		    uint16_t seq)
{
	struct oms_dseq *m = dest < OMS_MAX_NODES ?
			      emu_seq_machine(dev, dest, 0) : NULL;

	if (!m)
		return;
	oms_dseq_failed(m, q->id, seq);
	emu_seq_complete_dropped(dev, q, m);
}
