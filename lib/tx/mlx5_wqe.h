/* SPDX-License-Identifier: MIT */
/*
 * ConnectX (mlx5) send queue: WQE building and posting, pure byte work over
 * a send queue described by struct tx_mlx5_sq.  The fields are what
 * mlx5dv_init_obj() returns for a QP (sq.buf, sq.wqe_cnt, sq.stride,
 * dbrec, bf.reg, bf.size) plus the producer state; the tests point them at
 * plain memory, lib/tx/window_mlx5.c at a real QP.
 *
 * WQE layouts (16-byte units, "ds"; a WQE takes ceil(ds / 4) 64-byte
 * basic blocks of the SQ):
 *   Ethernet SEND  ctrl (16) | eth seg (32, first 18 packet bytes inline)
 *                  | inline data seg (4 + rest of the packet), padded
 *   RDMA WRITE     ctrl (16) | raddr seg (16) | inline data seg (4 + data),
 *                  padded
 * Segments are filled with the mlx5dv.h helpers (mlx5dv_set_ctrl_seg,
 * mlx5dv_set_eth_seg) and structs (mlx5_wqe_raddr_seg,
 * mlx5_wqe_inl_data_seg).
 *
 * Posting (tx_mlx5_post): the WQE is copied into the SQ at the producer
 * index (wrapping at the end of the buffer), then
 *   oms_barrier_to_device(); doorbell record = producer index;
 *   oms_barrier_wc_start();  BlueFlame: the WQE in 64-byte chunks into the
 *                       current half of the BF register, or, if BlueFlame
 *                       cannot be used (no BF register, WQE larger than a
 *                       half), the 8-byte doorbell (first 8 bytes of ctrl);
 *   then the halves alternate; the strong class ends with oms_barrier_wc_drain().
 */
#ifndef OMS_TX_MLX5_WQE_H
#define OMS_TX_MLX5_WQE_H

#include <stddef.h>
#include <stdint.h>

#define TX_MLX5_BB		64u	/* MLX5_SEND_WQE_BB */
#define TX_MLX5_L2_INLINE	18u	/* Ethernet + VLAN header bytes in the
					 * eth segment */
#define TX_MLX5_MAX_WQE		1024u	/* bytes: 16 basic blocks */

#define TX_MLX5_SIGNAL		(1u << 0)	/* CQE for this WQE */
#define TX_MLX5_FENCE		(1u << 1)	/* ctrl fence bit */

struct tx_mlx5_sq {
	uint8_t *buf;		/* sq.buf */
	uint32_t wqe_cnt;	/* sq.wqe_cnt: basic blocks, power of two */
	uint32_t stride;	/* sq.stride: must be 64 */
	uint32_t *dbrec;	/* dbrec (big-endian words; [1] = send) */
	uint8_t *bf_reg;	/* bf.reg (NULL: no BlueFlame) */
	uint32_t bf_size;	/* bf.size: bytes per half (0: none) */
	uint32_t bf_offset;	/* half in use: 0 or bf_size */
	uint32_t qpn;
	uint32_t head;		/* producer index in basic blocks */
	uint64_t bf_posts, db_posts;
};

/* Check the geometry; 0 or -EINVAL. */
int tx_mlx5_sq_check(const struct tx_mlx5_sq *sq);

/*
 * Build an Ethernet SEND of packet @pkt (@len bytes, at least
 * TX_MLX5_L2_INLINE) fully inline into @wqe (TX_MLX5_MAX_WQE bytes) for
 * producer index @pi.  Returns the WQE size in bytes (a multiple of 16),
 * or -EINVAL (too short) / -E2BIG (does not fit TX_MLX5_MAX_WQE).
 */
int tx_mlx5_build_eth_send(uint8_t *wqe, uint16_t pi, uint32_t qpn,
			   unsigned flags, const void *pkt, size_t len);

/* Build an RDMA WRITE of @len bytes inline to @raddr/@rkey.  Returns the
 * WQE size in bytes or -EINVAL / -E2BIG. */
int tx_mlx5_build_rdma_write(uint8_t *wqe, uint16_t pi, uint32_t qpn,
			     unsigned flags, uint64_t raddr, uint32_t rkey,
			     const void *data, size_t len);

/*
 * Post the @size-byte WQE: SQ copy with wraparound, doorbell record,
 * BlueFlame copy (or doorbell), halves alternate.  @strong: end with a
 * WC drain.  Returns basic blocks used, or -EINVAL.
 */
int tx_mlx5_post(struct tx_mlx5_sq *sq, const uint8_t *wqe, size_t size,
		 int strong);

/*
 * Post @n WQEs (@wqe[i], @size[i] bytes) behind one doorbell record and
 * one doorbell, as a driver does for a list of work requests: every WQE
 * into the SQ, oms_barrier_to_device(), the record, oms_barrier_wc_start(),
 * then the 8-byte doorbell of the last WQE into the current half (a
 * BlueFlame copy only when @n is 1: then this is tx_mlx5_post).  @n in
 * 1..TX_MLX5_MAX_BATCH.  Returns basic blocks used, or -EINVAL with
 * nothing written (a bad size anywhere, more blocks than the SQ).
 */
#define TX_MLX5_MAX_BATCH	16u
int tx_mlx5_post_batch(struct tx_mlx5_sq *sq, const uint8_t *const *wqe,
		       const size_t *size, unsigned n, int strong);

#endif /* OMS_TX_MLX5_WQE_H */
