// SPDX-License-Identifier: MIT
/*
 * The oms.ko window through its ioctls: the library's weak, strong and
 * sequenced messages become OMS_IOC_ORDERED_STORE vectors, so the module
 * issues the stores and the fences (kmod/oms_store.c).  For callers who may
 * not map the BAR (a sandbox without mmap of device files, a policy that
 * keeps user space off the BAR) and to measure what a system call per
 * batch costs beside the mapped window (bench/mmio_tx).
 *
 * The queue keeps its ring in process memory (the window's staging copy)
 * and writes it exactly as on a mapped window; the ops point into it.  An
 * op's bytes must not be overwritten before the call that carries them:
 * a vector never spans more of the ring than the ring holds, so nothing
 * pending is written over even without credits (OMS_TX_Q_NO_CREDIT).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tx/tx_priv.h"

OMS_EXPORT int oms_tx_window_kmod_ioctl(const char *dev,
					struct oms_tx_window **out)
{
	struct oms_tx_window *w;
	void *staging;
	size_t len;
	int fd, err;

	if (!out)
		return -EINVAL;
	err = tx_window_kmod_open(dev, OMS_TX_CHUNK, &fd, &len);
	if (err)
		return err;
	w = calloc(1, sizeof(*w));
	if (!w) {
		err = -ENOMEM;
		goto err_fd;
	}
	/* touched only where queues write: a large BAR costs nothing more */
	staging = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (staging == MAP_FAILED) {
		err = -ENOMEM;
		goto err_free;
	}
	return tx_window_mapped(w, staging, len, OMS_TX_WIN_KMOD_IOCTL, fd,
				out);

err_free:
	free(w);
err_fd:
	close(fd);
	return err;
}

int tx_iob_create(struct oms_tx_queue *q, uint64_t ring_off)
{
	struct tx_iobatch *b = calloc(1, sizeof(*b));
	uint64_t ring_bytes = (q->mask + 1) * OMS_TX_CHUNK;

	if (!b)
		return -ENOMEM;
	b->fd = q->win->fd;
	b->ring_off = ring_off;
	b->limit = ring_bytes < OMS_STORE_MAX_BYTES ? ring_bytes :
						      OMS_STORE_MAX_BYTES;
	q->iob = b;
	return 0;
}

void tx_iob_destroy(struct oms_tx_queue *q)
{
	if (!q->iob)
		return;
	/* what was sent goes out, as it would have on a mapped window */
	tx_iob_submit(q);
	free(q->iob);
	q->iob = NULL;
}

int tx_iob_submit(struct oms_tx_queue *q)
{
	struct tx_iobatch *b = q->iob;
	struct oms_ordered_store a = {
		.flags = OMS_STORE_F_FLUSH,
		.count = b->n,
		.ops = (uint64_t)(uintptr_t)b->ops,
	};

	if (!b->n)
		return 0;
	/* the ring was written with non-temporal stores; the kernel reads it
	 * back on this CPU, but make the order explicit */
	oms_barrier_wc_drain();
	if (ioctl(b->fd, OMS_IOC_ORDERED_STORE, &a))
		return -errno;
	b->calls++;
	q->st.fences += a.barriers;
	b->n = 0;
	b->bytes = 0;
	return 0;
}

/* Ops a message at chunk @pos of @nch chunks takes: two if it wraps. */
static uint32_t tx_iob_ops_for(const struct oms_tx_queue *q, uint64_t pos,
			       size_t nch)
{
	return (pos & q->mask) + nch > q->mask + 1 ? 2 : 1;
}

int tx_iob_room(struct oms_tx_queue *q, size_t nch, size_t adv)
{
	struct tx_iobatch *b = q->iob;
	uint64_t bytes = (uint64_t)adv * OMS_TX_CHUNK;

	if (b->n + tx_iob_ops_for(q, q->pos, nch) <= OMS_STORE_MAX_OPS &&
	    b->bytes + bytes <= b->limit)
		return 0;
	return tx_iob_submit(q);
}

static void tx_iob_push(struct tx_iobatch *b, const struct oms_tx_queue *q,
			uint64_t idx, uint64_t nch, uint32_t cls)
{
	uint64_t off = b->ring_off + idx * OMS_TX_CHUNK;
	uint32_t len = (uint32_t)(nch * OMS_TX_CHUNK);
	struct oms_store_op *last = b->n ? &b->ops[b->n - 1] : NULL;

	/* weak ops that touch merge: a sequenced stream is one op per call */
	if (last && cls == OMS_STORE_WEAK && last->cls == OMS_STORE_WEAK &&
	    last->offset + last->length == off) {
		last->length += len;
	} else {
		b->ops[b->n++] = (struct oms_store_op){
			.offset = off, .length = len, .cls = cls,
			.buf = (uint64_t)(uintptr_t)(q->ring + idx * OMS_TX_CHUNK),
		};
	}
}

void tx_iob_add(struct oms_tx_queue *q, uint64_t pos, size_t nch, size_t adv)
{
	struct tx_iobatch *b = q->iob;
	uint64_t idx = pos & q->mask, first = q->mask + 1 - idx;
	/* a strong message is made visible after every earlier one: the
	 * module fences before every STRONG op, a call's first one too.
	 * One numbering (oms_order.h): the queue's class is the op's, but for
	 * a sequenced queue, whose order the chunks carry: weak for the module */
	uint32_t cls = q->cls == OMS_TX_SEQUENCED ? OMS_STORE_WEAK : q->cls;

	/* the ring span, not the bytes sent: a plain slot is longer than a
	 * short message, and a span under the ring is what keeps a pending
	 * op's bytes from being written over before the call carries them */
	b->bytes += (uint64_t)adv * OMS_TX_CHUNK;
	if (nch <= first) {
		tx_iob_push(b, q, idx, nch, cls);
		return;
	}
	/* wraps (sequenced only; plain slots never straddle the end): the
	 * two parts are one message, so the second is weak after the first */
	tx_iob_push(b, q, idx, first, cls);
	tx_iob_push(b, q, 0, nch - first, OMS_STORE_WEAK);
}
