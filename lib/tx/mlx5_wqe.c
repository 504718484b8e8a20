// SPDX-License-Identifier: MIT
/*
 * mlx5 WQE building and posting (see mlx5_wqe.h).  Needs the mlx5dv.h
 * header only (its segment helpers are inline); nothing here calls into
 * libmlx5.  Without the header every call fails with -EOPNOTSUPP.
 */
#include <errno.h>
#include <string.h>

#include "tx/mlx5_wqe.h"
#include "tx/tx_priv.h"

#include "oms_config.h"

#if OMS_HAVE_MLX5DV
#include <endian.h>
#include <infiniband/mlx5dv.h>
#endif

#define TX_MLX5_MAX_DS	63u	/* ds is a 6-bit field */

int tx_mlx5_sq_check(const struct tx_mlx5_sq *sq)
{
	if (!sq || !sq->buf || !sq->dbrec || sq->stride != TX_MLX5_BB ||
	    !sq->wqe_cnt || (sq->wqe_cnt & (sq->wqe_cnt - 1)) ||
	    (sq->bf_reg && sq->bf_size % TX_MLX5_BB) ||
	    (sq->bf_offset && sq->bf_offset != sq->bf_size))
		return -EINVAL;
	return 0;
}

#if OMS_HAVE_MLX5DV

static uint8_t tx_mlx5_fm_ce_se(unsigned flags)
{
	uint8_t v = 0;

	if (flags & TX_MLX5_SIGNAL)
		v |= MLX5_WQE_CTRL_CQ_UPDATE;
	if (flags & TX_MLX5_FENCE)
		v |= MLX5_WQE_CTRL_FENCE;
	return v;
}

/* Inline data segment at @at; returns the end offset of its data. */
static size_t tx_mlx5_inline(uint8_t *wqe, size_t at, const uint8_t *data,
			     size_t len)
{
	struct mlx5_wqe_inl_data_seg inl;

	inl.byte_count = htobe32((uint32_t)len | MLX5_INLINE_SEG);
	memcpy(wqe + at, &inl, sizeof(inl));
	memcpy(wqe + at + sizeof(inl), data, len);
	return at + sizeof(inl) + len;
}

/* Zero padding to the basic block; returns the size in bytes (16s). */
static int tx_mlx5_finish(uint8_t *wqe, size_t end, uint16_t pi, uint32_t qpn,
			  uint8_t opcode, unsigned flags)
{
	size_t size = (end + 15) & ~(size_t)15;
	size_t bbs = (size + TX_MLX5_BB - 1) & ~(size_t)(TX_MLX5_BB - 1);

	memset(wqe + end, 0, bbs - end);
	mlx5dv_set_ctrl_seg((struct mlx5_wqe_ctrl_seg *)(void *)wqe, pi, opcode,
			    0, qpn, tx_mlx5_fm_ce_se(flags),
			    (uint8_t)(size / 16), 0, 0);
	return (int)size;
}

int tx_mlx5_build_eth_send(uint8_t *wqe, uint16_t pi, uint32_t qpn,
			   unsigned flags, const void *pkt, size_t len)
{
	const size_t ctrl = sizeof(struct mlx5_wqe_ctrl_seg);
	const size_t eth = sizeof(struct mlx5_wqe_eth_seg);
	uint8_t hdr[TX_MLX5_L2_INLINE];
	size_t end, rest;

	if (!wqe || !pkt || len < TX_MLX5_L2_INLINE ||
	    (flags & ~(TX_MLX5_SIGNAL | TX_MLX5_FENCE)))
		return -EINVAL;
	rest = len - TX_MLX5_L2_INLINE;
	end = ctrl + eth + (rest ? sizeof(struct mlx5_wqe_inl_data_seg) + rest : 0);
	if ((end + 15) / 16 > TX_MLX5_MAX_DS)
		return -E2BIG;
	memset(wqe, 0, ctrl + eth);
	memcpy(hdr, pkt, sizeof(hdr));
	mlx5dv_set_eth_seg((struct mlx5_wqe_eth_seg *)(void *)(wqe + ctrl), 0, 0,
			   TX_MLX5_L2_INLINE, hdr);
	end = ctrl + eth;
	if (rest)
		end = tx_mlx5_inline(wqe, end, (const uint8_t *)pkt +
				     TX_MLX5_L2_INLINE, rest);
	return tx_mlx5_finish(wqe, end, pi, qpn, MLX5_OPCODE_SEND, flags);
}

int tx_mlx5_build_rdma_write(uint8_t *wqe, uint16_t pi, uint32_t qpn,
			     unsigned flags, uint64_t raddr, uint32_t rkey,
			     const void *data, size_t len)
{
	const size_t ctrl = sizeof(struct mlx5_wqe_ctrl_seg);
	struct mlx5_wqe_raddr_seg rs;
	size_t end;

	if (!wqe || (!data && len) || !len ||
	    (flags & ~(TX_MLX5_SIGNAL | TX_MLX5_FENCE)))
		return -EINVAL;
	end = ctrl + sizeof(rs) + sizeof(struct mlx5_wqe_inl_data_seg) + len;
	if ((end + 15) / 16 > TX_MLX5_MAX_DS)
		return -E2BIG;
	memset(wqe, 0, ctrl);
	rs.raddr = htobe64(raddr);
	rs.rkey = htobe32(rkey);
	rs.reserved = 0;
	memcpy(wqe + ctrl, &rs, sizeof(rs));
	end = tx_mlx5_inline(wqe, ctrl + sizeof(rs), data, len);
	return tx_mlx5_finish(wqe, end, pi, qpn, MLX5_OPCODE_RDMA_WRITE, flags);
}

/* Copy @nbb basic blocks into the send queue at its head, wrapping to its
 * start, and move the head past them. */
static void tx_mlx5_sq_copy(struct tx_mlx5_sq *sq, const uint8_t *wqe,
			    uint32_t nbb)
{
	uint32_t mask = sq->wqe_cnt - 1, idx = sq->head & mask;

	for (uint32_t b = 0; b < nbb; b++)
		memcpy(sq->buf + (size_t)((idx + b) & mask) * TX_MLX5_BB,
		       wqe + (size_t)b * TX_MLX5_BB, TX_MLX5_BB);
	sq->head += nbb;
}

int tx_mlx5_post(struct tx_mlx5_sq *sq, const uint8_t *wqe, size_t size,
		 int strong)
{
	uint32_t nbb;
	uint64_t db;

	if (tx_mlx5_sq_check(sq) || !wqe || !size || size % 16 ||
	    size > TX_MLX5_MAX_DS * 16)
		return -EINVAL;
	nbb = (uint32_t)((size + TX_MLX5_BB - 1) / TX_MLX5_BB);
	if (nbb > sq->wqe_cnt)
		return -EINVAL;
	tx_mlx5_sq_copy(sq, wqe, nbb);
	oms_barrier_to_device();
	sq->dbrec[MLX5_SND_DBR] = htobe32(sq->head & 0xffff);
	if (!sq->bf_reg)
		return (int)nbb;	/* the device polls the record */
	oms_barrier_wc_start();
	if (sq->bf_size && nbb * TX_MLX5_BB <= sq->bf_size) {
		uint8_t *dst = sq->bf_reg + sq->bf_offset;

		for (uint32_t b = 0; b < nbb; b++)
			tx_wc_store64(dst + (size_t)b * TX_MLX5_BB,
				      wqe + (size_t)b * TX_MLX5_BB);
		sq->bf_posts++;
	} else {
		memcpy(&db, wqe, sizeof(db));	/* ctrl: index, opcode, qpn, ds */
		*(volatile uint64_t *)(void *)(sq->bf_reg + sq->bf_offset) = db;
		sq->db_posts++;
	}
	sq->bf_offset ^= sq->bf_size;
	if (strong)
		oms_barrier_wc_drain();
	return (int)nbb;
}

int tx_mlx5_post_batch(struct tx_mlx5_sq *sq, const uint8_t *const *wqe,
		       const size_t *size, unsigned n, int strong)
{
	uint32_t nbb = 0;
	uint64_t db;

	if (n == 1 && wqe && size)
		return tx_mlx5_post(sq, wqe[0], size[0], strong);
	if (tx_mlx5_sq_check(sq) || !wqe || !size || !n ||
	    n > TX_MLX5_MAX_BATCH)
		return -EINVAL;
	/* all checked before the first byte is written */
	for (unsigned i = 0; i < n; i++) {
		if (!wqe[i] || !size[i] || size[i] % 16 ||
		    size[i] > TX_MLX5_MAX_DS * 16)
			return -EINVAL;
		nbb += (uint32_t)((size[i] + TX_MLX5_BB - 1) / TX_MLX5_BB);
	}
	if (nbb > sq->wqe_cnt)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		tx_mlx5_sq_copy(sq, wqe[i], (uint32_t)((size[i] + TX_MLX5_BB - 1) /
						       TX_MLX5_BB));
	/* every WQE is in the queue before the record says so */
	oms_barrier_to_device();
	sq->dbrec[MLX5_SND_DBR] = htobe32(sq->head & 0xffff);
	if (!sq->bf_reg)
		return (int)nbb;
	/* one doorbell for all: the last WQE's first 8 bytes (its index,
	 * opcode, qpn and ds), never a BlueFlame copy of several */
	oms_barrier_wc_start();
	memcpy(&db, wqe[n - 1], sizeof(db));
	*(volatile uint64_t *)(void *)(sq->bf_reg + sq->bf_offset) = db;
	sq->db_posts++;
	sq->bf_offset ^= sq->bf_size;
	if (strong)
		oms_barrier_wc_drain();
	return (int)nbb;
}

#else /* !OMS_HAVE_MLX5DV */

int tx_mlx5_build_eth_send(uint8_t *wqe, uint16_t pi, uint32_t qpn,
			   unsigned flags, const void *pkt, size_t len)
{
	(void)wqe; (void)pi; (void)qpn; (void)flags; (void)pkt; (void)len;
	return -EOPNOTSUPP;
}

int tx_mlx5_build_rdma_write(uint8_t *wqe, uint16_t pi, uint32_t qpn,
			     unsigned flags, uint64_t raddr, uint32_t rkey,
			     const void *data, size_t len)
{
	(void)wqe; (void)pi; (void)qpn; (void)flags; (void)raddr; (void)rkey;
	(void)data; (void)len;
	return -EOPNOTSUPP;
}

int tx_mlx5_post(struct tx_mlx5_sq *sq, const uint8_t *wqe, size_t size,
		 int strong)
{
	(void)sq; (void)wqe; (void)size; (void)strong;
	return -EOPNOTSUPP;
}

int tx_mlx5_post_batch(struct tx_mlx5_sq *sq, const uint8_t *const *wqe,
		       const size_t *size, unsigned n, int strong)
{
	(void)sq; (void)wqe; (void)size; (void)n; (void)strong;
	return -EOPNOTSUPP;
}

#endif
