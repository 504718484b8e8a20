// SPDX-License-Identifier: MIT
/*
 * A ConnectX send queue as a transmit window: a raw packet QP from verbs,
 * mlx5dv_init_obj() for sq.buf, dbrec, bf.reg and bf.size, WQEs built by
 * mlx5_wqe.c and copied into the BlueFlame register.  libibverbs.so.1 and
 * libmlx5.so.1 are loaded at run time (dlopen), so liboms links against
 * neither and runs where they are absent; the gate says why it cannot
 * open a window: no libraries, no RDMA device, no mlx5 device
 * (mlx5dv_is_supported), no permission for a raw packet QP, or no
 * BlueFlame register (bf.size 0).
 *
 * Completions: every quarter of the send queue a WQE asks for a CQE; the
 * queue is reclaimed by reading the CQ directly (mlx5dv_init_obj for the
 * CQ: owner bit, opcode, wqe_counter), since WQEs posted without
 * ibv_post_send have no wr_id in the provider.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tx/mlx5_wqe.h"
#include "tx/tx_priv.h"

#include "oms_config.h"

#if OMS_HAVE_MLX5DV && OMS_HAVE_DLFCN
#include <dlfcn.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#endif

static void tx_why(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void tx_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

#if OMS_HAVE_MLX5DV && OMS_HAVE_DLFCN

struct tx_verbs {
	void *ibv, *mlx5;
	struct ibv_device **(*get_device_list)(int *);
	void (*free_device_list)(struct ibv_device **);
	const char *(*get_device_name)(struct ibv_device *);
	struct ibv_context *(*open_device)(struct ibv_device *);
	int (*close_device)(struct ibv_context *);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	int (*dealloc_pd)(struct ibv_pd *);
	struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *,
				    struct ibv_comp_channel *, int);
	int (*destroy_cq)(struct ibv_cq *);
	struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
	int (*destroy_qp)(struct ibv_qp *);
	int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
	bool (*is_supported)(struct ibv_device *);
	int (*init_obj)(struct mlx5dv_obj *, uint64_t);
};

struct tx_mlx5_win {
	struct tx_verbs v;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct tx_mlx5_sq sq;
	uint32_t tail;		/* basic blocks known completed */
	uint32_t unsignaled;	/* basic blocks since the last CQE request */
	struct mlx5dv_cq dcq;
	uint32_t ci;		/* CQ consumer index */
	uint32_t *sig_end;	/* [wqe_cnt]: SQ index after a signaled WQE */
};

static int tx_verbs_load(struct tx_verbs *v, char *why, size_t whylen)
{
	v->ibv = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!v->ibv) {
		tx_why(why, whylen, "mlx5 window: libibverbs.so.1 not installed "
		       "(Debian: ibverbs-providers, libibverbs1)");
		return -ENOENT;
	}
	v->mlx5 = dlopen("libmlx5.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!v->mlx5) {
		tx_why(why, whylen, "mlx5 window: libmlx5.so.1 not installed "
		       "(Debian: ibverbs-providers)");
		return -ENOENT;
	}
#define TX_SYM(lib, field, name)						\
	do {								\
		*(void **)(&v->field) = dlsym(v->lib, name);		\
		if (!v->field) {					\
			tx_why(why, whylen, "mlx5 window: %s missing", name); \
			return -ENOENT;					\
		}							\
	} while (0)
	TX_SYM(ibv, get_device_list, "ibv_get_device_list");
	TX_SYM(ibv, free_device_list, "ibv_free_device_list");
	TX_SYM(ibv, get_device_name, "ibv_get_device_name");
	TX_SYM(ibv, open_device, "ibv_open_device");
	TX_SYM(ibv, close_device, "ibv_close_device");
	TX_SYM(ibv, alloc_pd, "ibv_alloc_pd");
	TX_SYM(ibv, dealloc_pd, "ibv_dealloc_pd");
	TX_SYM(ibv, create_cq, "ibv_create_cq");
	TX_SYM(ibv, destroy_cq, "ibv_destroy_cq");
	TX_SYM(ibv, create_qp, "ibv_create_qp");
	TX_SYM(ibv, destroy_qp, "ibv_destroy_qp");
	TX_SYM(ibv, modify_qp, "ibv_modify_qp");
	TX_SYM(mlx5, is_supported, "mlx5dv_is_supported");
	TX_SYM(mlx5, init_obj, "mlx5dv_init_obj");
#undef TX_SYM
	return 0;
}

static void tx_mlx5_free(struct tx_mlx5_win *m)
{
	if (m->qp)
		m->v.destroy_qp(m->qp);
	if (m->cq)
		m->v.destroy_cq(m->cq);
	if (m->pd)
		m->v.dealloc_pd(m->pd);
	if (m->ctx)
		m->v.close_device(m->ctx);
	free(m->sig_end);
	/* the libraries stay loaded: their globals stay reachable */
	free(m);
}

static void tx_mlx5_fini(struct oms_tx_window *w)
{
	tx_mlx5_free(w->priv);
}

/* Pick the device and open it; fills @why on failure. */
static int tx_mlx5_open(struct tx_mlx5_win *m, const char *dev, char *why,
			size_t whylen)
{
	struct ibv_device **list, *pick = NULL;
	int n = 0, err = 0;

	list = m->v.get_device_list(&n);
	if (!list || n <= 0) {
		tx_why(why, whylen, "mlx5 window: no RDMA device on this machine");
		err = -ENODEV;
		goto out;
	}
	for (int i = 0; i < n && !pick; i++) {
		if (dev && strcmp(m->v.get_device_name(list[i]), dev))
			continue;
		if (m->v.is_supported(list[i]))
			pick = list[i];
		else if (dev)
			break;
	}
	if (!pick) {
		tx_why(why, whylen, dev ?
		       "mlx5 window: %s is not a ConnectX (mlx5dv_is_supported)" :
		       "mlx5 window: no ConnectX device (mlx5dv_is_supported)%s",
		       dev ? dev : "");
		err = -EOPNOTSUPP;
		goto out;
	}
	m->ctx = m->v.open_device(pick);
	if (!m->ctx) {
		tx_why(why, whylen, "mlx5 window: ibv_open_device failed");
		err = -EIO;
	}
out:
	if (list)
		m->v.free_device_list(list);
	return err;
}

static int tx_mlx5_qp(struct tx_mlx5_win *m, unsigned port, char *why,
		      size_t whylen)
{
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr qa = { 0 };
	struct mlx5dv_qp dq = { 0 };
	struct mlx5dv_obj obj = { 0 };

	m->pd = m->v.alloc_pd(m->ctx);
	m->cq = m->pd ? m->v.create_cq(m->ctx, 256, NULL, NULL, 0) : NULL;
	if (!m->cq) {
		tx_why(why, whylen, "mlx5 window: ibv_alloc_pd/ibv_create_cq failed");
		return -EIO;
	}
	ia.send_cq = m->cq;
	ia.recv_cq = m->cq;
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.cap.max_send_wr = 256;
	ia.cap.max_send_sge = 1;
	ia.cap.max_inline_data = 512;
	m->qp = m->v.create_qp(m->pd, &ia);
	if (!m->qp) {
		int e = errno;

		tx_why(why, whylen, "mlx5 window: raw packet QP refused (%s)%s",
		       strerror(e), e == EPERM ? ": needs CAP_NET_RAW" : "");
		return e == EPERM ? -EPERM : -EIO;
	}
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = (uint8_t)port;
	if (m->v.modify_qp(m->qp, &qa, IBV_QP_STATE | IBV_QP_PORT))
		goto err_modify;
	qa.qp_state = IBV_QPS_RTR;
	if (m->v.modify_qp(m->qp, &qa, IBV_QP_STATE))
		goto err_modify;
	qa.qp_state = IBV_QPS_RTS;
	if (m->v.modify_qp(m->qp, &qa, IBV_QP_STATE))
		goto err_modify;
	obj.qp.in = m->qp;
	obj.qp.out = &dq;
	obj.cq.in = m->cq;
	obj.cq.out = &m->dcq;
	if (m->v.init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ)) {
		tx_why(why, whylen, "mlx5 window: mlx5dv_init_obj failed");
		return -EIO;
	}
	if (!dq.bf.reg || !dq.bf.size) {
		tx_why(why, whylen, "mlx5 window: no BlueFlame register on this "
		       "QP (bf.size 0): only doorbells, no MMIO transmit");
		return -EOPNOTSUPP;
	}
	m->sq.buf = dq.sq.buf;
	m->sq.wqe_cnt = dq.sq.wqe_cnt;
	m->sq.stride = dq.sq.stride;
	m->sq.dbrec = (uint32_t *)(void *)dq.dbrec;
	m->sq.bf_reg = dq.bf.reg;
	m->sq.bf_size = dq.bf.size;
	m->sq.qpn = m->qp->qp_num;
	m->sig_end = calloc(dq.sq.wqe_cnt ? dq.sq.wqe_cnt : 1, sizeof(uint32_t));
	if (!m->sig_end)
		return -ENOMEM;
	if (tx_mlx5_sq_check(&m->sq) || m->dcq.cqe_size < 64 ||
	    (m->dcq.cqe_cnt & (m->dcq.cqe_cnt - 1))) {
		tx_why(why, whylen, "mlx5 window: unexpected SQ geometry "
		       "(stride %u, %u blocks)", dq.sq.stride, dq.sq.wqe_cnt);
		return -EOPNOTSUPP;
	}
	return 0;
err_modify:
	tx_why(why, whylen, "mlx5 window: ibv_modify_qp to RTS failed on port %u",
	       port);
	return -EIO;
}

OMS_EXPORT int oms_tx_window_mlx5(const char *dev, unsigned port, char *why,
				  size_t whylen,
				  struct oms_tx_window **out)
{
	struct oms_tx_window *w;
	struct tx_mlx5_win *m;
	int err;

	if (!out || !port || port > 255) {
		tx_why(why, whylen, "mlx5 window: bad arguments");
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	w = calloc(1, sizeof(*w));
	if (!m || !w) {
		free(m);
		free(w);
		return -ENOMEM;
	}
	err = tx_verbs_load(&m->v, why, whylen);
	if (!err)
		err = tx_mlx5_open(m, dev, why, whylen);
	if (!err)
		err = tx_mlx5_qp(m, port, why, whylen);
	if (err) {
		tx_mlx5_free(m);
		free(w);
		return err;
	}
	w->base = m->sq.bf_reg;
	w->len = 2 * (size_t)m->sq.bf_size;
	w->kind = OMS_TX_WIN_MLX5;
	w->fd = -1;
	w->priv = m;
	w->fini = tx_mlx5_fini;
	*out = w;
	return 0;
}

/* Reclaim send queue room from completions, read straight from the CQ. */
static void tx_mlx5_reap(struct tx_mlx5_win *m)
{
	for (;;) {
		uint8_t *e = (uint8_t *)m->dcq.buf +
			     (size_t)(m->ci & (m->dcq.cqe_cnt - 1)) * m->dcq.cqe_size;
		struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(void *)
			(e + m->dcq.cqe_size - sizeof(struct mlx5_cqe64));
		uint8_t sw_owner = !!(m->ci & m->dcq.cqe_cnt);

		if (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_INVALID ||
		    mlx5dv_get_cqe_owner(cqe) != sw_owner)
			break;
		oms_barrier_from_device();	/* the CQE's fields after its owner bit */
		if (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ)
			m->tail = m->sig_end[be16toh(cqe->wqe_counter) &
					     (m->sq.wqe_cnt - 1)];
		m->ci++;
	}
	oms_barrier_to_device();
	m->dcq.dbrec[0] = htobe32(m->ci & 0xffffff);
}

OMS_EXPORT int oms_tx_mlx5_send(struct oms_tx_window *w, unsigned cls,
				const void *frame, size_t len)
{
	uint8_t wqe[TX_MLX5_MAX_WQE + TX_MLX5_BB] __attribute__((aligned(64)));
	struct tx_mlx5_win *m;
	unsigned flags = 0;
	uint32_t nbb;
	int size;

	if (!w || w->kind != OMS_TX_WIN_MLX5 || !frame ||
	    !oms_tx_class_valid(cls))
		return -EINVAL;
	if (cls == OMS_TX_SEQUENCED)
		return -EOPNOTSUPP;	/* no reorder buffer in today's NICs */
	m = w->priv;
	size = tx_mlx5_build_eth_send(wqe, (uint16_t)m->sq.head, m->sq.qpn, 0,
				      frame, len);
	if (size < 0)
		return size;
	nbb = ((uint32_t)size + TX_MLX5_BB - 1) / TX_MLX5_BB;
	if (m->sq.head + nbb - m->tail > m->sq.wqe_cnt) {
		tx_mlx5_reap(m);
		if (m->sq.head + nbb - m->tail > m->sq.wqe_cnt)
			return -EAGAIN;
	}
	m->unsignaled += nbb;
	if (m->unsignaled >= m->sq.wqe_cnt / 4) {
		/* ask for a CQE; its wr_id is where the queue will be */
		flags |= TX_MLX5_SIGNAL;
		m->unsignaled = 0;
		size = tx_mlx5_build_eth_send(wqe, (uint16_t)m->sq.head,
					      m->sq.qpn, flags, frame, len);
		m->sig_end[m->sq.head & (m->sq.wqe_cnt - 1)] = m->sq.head + nbb;
	}
	return tx_mlx5_post(&m->sq, wqe, (size_t)size, cls == OMS_TX_STRONG) < 0 ?
	       -EIO : 0;
}

_Static_assert(OMS_TX_MLX5_BATCH_MAX <= TX_MLX5_MAX_BATCH,
	       "a public batch fits tx_mlx5_post_batch");

OMS_EXPORT int oms_tx_mlx5_send_batch(struct oms_tx_window *w, unsigned cls,
				      const struct iovec *frames, unsigned n)
{
	static const size_t cap = TX_MLX5_MAX_WQE + TX_MLX5_BB;
	uint8_t *buf, *wqe[TX_MLX5_MAX_BATCH];
	size_t size[TX_MLX5_MAX_BATCH];
	struct tx_mlx5_win *m;
	uint32_t head, room;
	unsigned k = 0;
	int r = 0;

	if (!w || w->kind != OMS_TX_WIN_MLX5 || !frames || !n ||
	    n > OMS_TX_MLX5_BATCH_MAX || !oms_tx_class_valid(cls))
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		if (!frames[i].iov_base)
			return -EINVAL;
	if (cls == OMS_TX_SEQUENCED)
		return -EOPNOTSUPP;	/* no reorder buffer in today's NICs */
	m = w->priv;
	buf = aligned_alloc(64, cap * n);
	if (!buf)
		return -ENOMEM;
	tx_mlx5_reap(m);
	head = m->sq.head;
	room = m->sq.wqe_cnt - (m->sq.head - m->tail);
	/* build what fits, each at the index it will have */
	for (; k < n; k++) {
		unsigned flags = 0;
		uint32_t nbb;

		wqe[k] = buf + cap * k;
		r = tx_mlx5_build_eth_send(wqe[k], (uint16_t)head, m->sq.qpn,
					   0, frames[k].iov_base,
					   frames[k].iov_len);
		if (r < 0)
			break;
		nbb = ((uint32_t)r + TX_MLX5_BB - 1) / TX_MLX5_BB;
		if (nbb > room) {
			r = -EAGAIN;
			break;
		}
		if (m->unsignaled + nbb >= m->sq.wqe_cnt / 4) {
			/* ask for a CQE; its wr_id is where the queue will be */
			flags |= TX_MLX5_SIGNAL;
			r = tx_mlx5_build_eth_send(wqe[k], (uint16_t)head,
						   m->sq.qpn, flags,
						   frames[k].iov_base,
						   frames[k].iov_len);
		}
		size[k] = (size_t)r;
		m->unsignaled = flags ? 0 : m->unsignaled + nbb;
		if (flags)
			m->sig_end[head & (m->sq.wqe_cnt - 1)] = head + nbb;
		head += nbb;
		room -= nbb;
	}
	if (k && tx_mlx5_post_batch(&m->sq, (const uint8_t *const *)wqe,
				    size, k, cls == OMS_TX_STRONG) < 0)
		r = -EIO;
	else if (k)
		r = (int)k;	/* a short batch: the frame at k was not sent */
	free(buf);
	return r;
}

#else /* !(OMS_HAVE_MLX5DV && OMS_HAVE_DLFCN) */

OMS_EXPORT int oms_tx_window_mlx5(const char *dev, unsigned port, char *why,
				  size_t whylen,
				  struct oms_tx_window **out)
{
	(void)dev; (void)port; (void)out;
	tx_why(why, whylen, "mlx5 window: built without infiniband/mlx5dv.h");
	return -EOPNOTSUPP;
}

OMS_EXPORT int oms_tx_mlx5_send(struct oms_tx_window *w, unsigned cls,
				const void *frame, size_t len)
{
	(void)w; (void)cls; (void)frame; (void)len;
	return -EOPNOTSUPP;
}

OMS_EXPORT int oms_tx_mlx5_send_batch(struct oms_tx_window *w, unsigned cls,
				      const struct iovec *frames, unsigned n)
{
	(void)w; (void)cls; (void)frames; (void)n;
	return -EOPNOTSUPP;
}

#endif
