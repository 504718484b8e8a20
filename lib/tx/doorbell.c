// SPDX-License-Identifier: MIT
/*
 * oms_tx_doorbell(): the NIC driver's post (seed 000's doorbell sequence,
 * WO(WQE) SO(dbrec) SO(db)) through a transmit queue's window.  On a
 * mapped window the library stores and fences, exactly as the module's
 * OMS_IOC_DOORBELL does (kmod/oms_store.c, oms_doorbell_exec): the same
 * three fences, at the same points.  On the ioctl window the module does
 * it, after the queue's pending vector, so the post stays behind the
 * queue's earlier messages on both paths.
 *
 * Both paths check the request the same way before anything is stored,
 * so a refused post changes nothing and is refused with the same errno.
 */
#include <errno.h>
#include <sys/ioctl.h>

#include "tx/tx_priv.h"

static int tx_db_area_ok(const struct oms_tx_window *w, uint64_t off,
			 uint64_t len)
{
	return off <= w->len && len <= w->len - off;
}

static int tx_db_on_ring(const struct oms_tx_queue *q, uint64_t off,
			 uint64_t len)
{
	uint64_t ring = (uint64_t)(q->ring - q->win->base);
	uint64_t ring_len = (q->mask + 1) * OMS_TX_CHUNK;

	return off < ring + ring_len && ring < off + len;
}

/*
 * The module's checks of OMS_IOC_DOORBELL (kmod/oms_store.c), made here
 * too on purpose: a mapped window has no module to refuse a bad post, and
 * the two paths must refuse the same posts with the same errno.  The
 * limits come from the shared uapi header, so they cannot drift apart.
 */
static int tx_db_check(const struct oms_tx_queue *q,
		       const struct oms_tx_doorbell *d)
{
	int bf = !!(d->flags & OMS_TX_DB_BLUEFLAME);
	uint32_t align = bf ? OMS_BF_CHUNK : 8;
	uint64_t db_len = bf ? d->wqe_len : 8;

	if (d->flags & ~OMS_TX_DB_BLUEFLAME || d->reserved || !d->wqe)
		return -EINVAL;
	if (!d->wqe_len || d->wqe_len % align || d->wqe_offset % align ||
	    d->db_offset % align || d->dbrec_offset % 4)
		return -EINVAL;
	if (bf ? d->wqe_len > OMS_BF_SIZE || d->db :
		 d->wqe_len > OMS_STORE_MAX_BYTES)
		return -EINVAL;
	if (!tx_db_area_ok(q->win, d->wqe_offset, d->wqe_len) ||
	    !tx_db_area_ok(q->win, d->dbrec_offset, 4) ||
	    !tx_db_area_ok(q->win, d->db_offset, db_len))
		return -ERANGE;
	if (tx_db_on_ring(q, d->wqe_offset, d->wqe_len) ||
	    tx_db_on_ring(q, d->dbrec_offset, 4) ||
	    tx_db_on_ring(q, d->db_offset, db_len))
		return -EINVAL;
	return 0;
}

/*
 * The stores themselves, into a mapped window, where the engine's
 * write-combining channel fences them (as oms.ko's DOORBELL does):
 * returns the fences.
 */
static int tx_db_stores(uint8_t *base, const struct oms_tx_doorbell *d)
{
	struct oms_wc_chan wc = OMS_WC_CHAN_UNKNOWN;
	const uint8_t *wqe = d->wqe;

	/* 1. weak: the WQE (the queue's earlier chunks may still be in the
	 * write-combining buffers; the next fence drains them too) */
	if (oms_wc_chan_store(&wc, OMS_STORE_WEAK))
		oms_barrier_wc_drain();
	memcpy(base + d->wqe_offset, wqe, d->wqe_len);

	/* 2. strong: the doorbell record, after the WQE */
	if (oms_wc_chan_store(&wc, OMS_STORE_STRONG))
		oms_barrier_wc_drain();
	*(volatile uint32_t *)(base + d->dbrec_offset) = d->dbrec;

	/* 3. strong: the doorbell or the BlueFlame copy, after the record */
	if (oms_wc_chan_store(&wc, OMS_STORE_STRONG))
		oms_barrier_wc_drain();
	if (d->flags & OMS_TX_DB_BLUEFLAME) {
		for (uint32_t off = 0; off < d->wqe_len; off += OMS_BF_CHUNK)
			memcpy(base + d->db_offset + off, wqe + off,
			       OMS_BF_CHUNK);
	} else {
		*(volatile uint64_t *)(base + d->db_offset) = d->db;
	}
	/* push it out now, not whenever the buffer is evicted */
	oms_barrier_wc_drain();
	oms_wc_chan_drain(&wc);
	return (int)wc.drains;
}

static int tx_db_ioctl(struct oms_tx_queue *q, const struct oms_tx_doorbell *d)
{
	struct oms_doorbell a = {
		.flags = d->flags & OMS_TX_DB_BLUEFLAME ? OMS_DB_BLUEFLAME : 0,
		.wqe_len = d->wqe_len,
		.wqe = (uint64_t)(uintptr_t)d->wqe,
		.wqe_offset = d->wqe_offset,
		.dbrec_offset = d->dbrec_offset,
		.db_offset = d->db_offset,
		.db = d->db,
		.dbrec = d->dbrec,
	};
	int r;

	/* the queue's earlier messages first: that call ends with a flush */
	r = tx_iob_submit(q);
	if (r)
		return r;
	if (ioctl(q->iob->fd, OMS_IOC_DOORBELL, &a))
		return -errno;
	q->iob->calls++;
	return (int)a.barriers;
}

OMS_EXPORT int oms_tx_doorbell(struct oms_tx_queue *q,
			       const struct oms_tx_doorbell *d)
{
	int r;

	if (!q || !d)
		return -EINVAL;
	r = tx_db_check(q, d);
	if (r)
		return r;
	r = q->iob ? tx_db_ioctl(q, d) : tx_db_stores(q->win->base, d);
	if (r >= 0)
		q->st.fences += (uint64_t)r;
	return r;
}
