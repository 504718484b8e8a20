// SPDX-License-Identifier: MIT
/*
 * mlx5 WQE bytes without a NIC: what lib/tx/mlx5_wqe.c builds equals what
 * the mlx5dv.h helpers produce for the same inputs and the fields read
 * back by hand (big-endian opcode/index, qpn/ds, fence and signal bits,
 * inline Ethernet header, inline data byte count); posting alternates the
 * BlueFlame halves, falls back to the 8-byte doorbell when the WQE does
 * not fit a half, and wraps around the end of the send queue.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "tx/mlx5_wqe.h"

#include "oms_config.h"

#if OMS_HAVE_MLX5DV
#include <endian.h>
#include <infiniband/mlx5dv.h>
#endif

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void pattern(uint8_t *b, size_t n, unsigned salt)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 29 + salt);
}

#if OMS_HAVE_MLX5DV
/* The reference: segments written with the mlx5dv.h helpers directly. */
static size_t ref_eth_send(uint8_t *w, uint16_t pi, uint32_t qpn, uint8_t fm,
			   const uint8_t *pkt, size_t len)
{
	struct mlx5_wqe_inl_data_seg inl;
	uint8_t hdr[18];
	size_t end = 48, size;

	memset(w, 0, 1024);
	memcpy(hdr, pkt, 18);
	mlx5dv_set_eth_seg((struct mlx5_wqe_eth_seg *)(void *)(w + 16), 0, 0, 18,
			   hdr);
	if (len > 18) {
		inl.byte_count = htobe32((uint32_t)(len - 18) | MLX5_INLINE_SEG);
		memcpy(w + 48, &inl, 4);
		memcpy(w + 52, pkt + 18, len - 18);
		end = 52 + len - 18;
	}
	size = (end + 15) & ~(size_t)15;
	mlx5dv_set_ctrl_seg((struct mlx5_wqe_ctrl_seg *)(void *)w, pi,
			    MLX5_OPCODE_SEND, 0, qpn, fm, (uint8_t)(size / 16), 0, 0);
	return size;
}
#endif

TEST(eth_send_bytes)
{
#if OMS_HAVE_MLX5DV
	static const size_t lens[] = { 18, 19, 60, 64, 77, 200, 256, 900 };
	uint8_t pkt[1024], a[1024], b[1024];

	pattern(pkt, sizeof(pkt), 3);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		for (unsigned fl = 0; fl < 4; fl++) {
			size_t len = lens[k], want;
			uint8_t fm = (fl & TX_MLX5_SIGNAL ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
				     (fl & TX_MLX5_FENCE ? MLX5_WQE_CTRL_FENCE : 0);
			int size;

			memset(a, 0xee, sizeof(a));
			size = tx_mlx5_build_eth_send(a, 0x1234, 0xabcdef, fl,
						      pkt, len);
			want = ref_eth_send(b, 0x1234, 0xabcdef, fm, pkt, len);
			ASSERT_EQ((int)want, size);
			ASSERT_EQ(0, memcmp(a, b, want)) {
				TH_LOG("len %zu flags %u", len, fl);
			}
			/* by hand */
			ASSERT_EQ(0x0012340aU, be32(a));	/* opmod 0, pi, SEND */
			ASSERT_EQ(0xabcdef00U | (uint32_t)(size / 16), be32(a + 4));
			ASSERT_EQ(0, a[8]);			/* signature */
			ASSERT_EQ(fm, a[11]);
			ASSERT_EQ(0, be32(a + 12));		/* imm */
			ASSERT_EQ(fl & TX_MLX5_SIGNAL ? 0x08 : 0, a[11] & 0x0c);
			ASSERT_EQ(fl & TX_MLX5_FENCE ? 0x80 : 0, a[11] & 0xe0);
			ASSERT_EQ(0, be32(a + 16));
			ASSERT_EQ(0, a[20]);			/* cs_flags */
			ASSERT_EQ(18, a[28] << 8 | a[29]);	/* inline_hdr_sz */
			ASSERT_EQ(0, memcmp(a + 30, pkt, 18));
			if (len > 18) {
				ASSERT_EQ(0x80000000U | (uint32_t)(len - 18),
					  be32(a + 48));
				ASSERT_EQ(0, memcmp(a + 52, pkt + 18, len - 18));
			}
			/* zero padding to the end of the basic block */
			for (size_t i = (len > 18 ? 52 + len - 18 : 48);
			     i < (((size_t)size + 63) & ~(size_t)63); i++) {
				ASSERT_EQ(0, a[i]);
			}
		}
	}
#else
	SKIP(return, "infiniband/mlx5dv.h not installed");
#endif
}

TEST(rdma_write_bytes)
{
#if OMS_HAVE_MLX5DV
	uint8_t data[300], a[1024], b[1024];
	struct mlx5_wqe_raddr_seg rs;
	struct mlx5_wqe_inl_data_seg inl;
	int size;

	pattern(data, sizeof(data), 9);
	size = tx_mlx5_build_rdma_write(a, 7, 0x42, TX_MLX5_SIGNAL,
					0x1122334455667788ull, 0xcafe, data, 100);
	ASSERT_EQ(144, size);			/* 16 + 16 + 4 + 100 -> 144 */
	memset(b, 0, sizeof(b));
	mlx5dv_set_ctrl_seg((struct mlx5_wqe_ctrl_seg *)(void *)b, 7,
			    MLX5_OPCODE_RDMA_WRITE, 0, 0x42,
			    MLX5_WQE_CTRL_CQ_UPDATE, 9, 0, 0);
	rs.raddr = htobe64(0x1122334455667788ull);
	rs.rkey = htobe32(0xcafe);
	rs.reserved = 0;
	memcpy(b + 16, &rs, 16);
	inl.byte_count = htobe32(100 | MLX5_INLINE_SEG);
	memcpy(b + 32, &inl, 4);
	memcpy(b + 36, data, 100);
	ASSERT_EQ(0, memcmp(a, b, 192));	/* padded to 3 blocks */
	ASSERT_EQ(0x00000708U, be32(a));
	ASSERT_EQ(0x00004209U, be32(a + 4));
	ASSERT_EQ(0x11223344U, be32(a + 16));
	ASSERT_EQ(0x55667788U, be32(a + 20));
	ASSERT_EQ(0xcafeU, be32(a + 24));
	ASSERT_EQ(0x80000064U, be32(a + 32));
#else
	SKIP(return, "infiniband/mlx5dv.h not installed");
#endif
}

TEST(build_limits)
{
#if OMS_HAVE_MLX5DV
	uint8_t pkt[2048] = { 0 }, w[1024];

	ASSERT_EQ(-EINVAL, tx_mlx5_build_eth_send(w, 0, 1, 0, pkt, 17));
	ASSERT_EQ(-EINVAL, tx_mlx5_build_eth_send(w, 0, 1, 4, pkt, 60));
	ASSERT_EQ(-EINVAL, tx_mlx5_build_eth_send(NULL, 0, 1, 0, pkt, 60));
	/* ds is 6 bits: 63 * 16 = 1008 bytes at most */
	ASSERT_EQ(1008, tx_mlx5_build_eth_send(w, 0, 1, 0, pkt, 1008 - 52 + 18));
	ASSERT_EQ(-E2BIG, tx_mlx5_build_eth_send(w, 0, 1, 0, pkt, 1008 - 52 + 19));
	ASSERT_EQ(-E2BIG, tx_mlx5_build_rdma_write(w, 0, 1, 0, 0, 0, pkt, 1000));
	ASSERT_EQ(-EINVAL, tx_mlx5_build_rdma_write(w, 0, 1, 0, 0, 0, pkt, 0));
#else
	SKIP(return, "infiniband/mlx5dv.h not installed");
#endif
}

struct fake_qp {
	uint8_t sq[8 * 64];
	uint32_t dbrec[2];
	/* a BlueFlame register is 64-byte aligned */
	uint8_t bf[2 * 256] __attribute__((aligned(64)));
	struct tx_mlx5_sq s;
};

static void fake_init(struct fake_qp *f, uint32_t bf_size)
{
	memset(f, 0, sizeof(*f));
	f->s.buf = f->sq;
	f->s.wqe_cnt = 8;
	f->s.stride = 64;
	f->s.dbrec = f->dbrec;
	f->s.bf_reg = f->bf;
	f->s.bf_size = bf_size;
	f->s.qpn = 0x99;
}

TEST(blueflame_halves_alternate)
{
#if OMS_HAVE_MLX5DV
	struct fake_qp f;
	uint8_t pkt[64], w[3][1024];

	fake_init(&f, 256);
	pattern(pkt, sizeof(pkt), 1);
	for (unsigned i = 0; i < 3; i++) {
		int size;

		pkt[20] = (uint8_t)i;
		size = tx_mlx5_build_eth_send(w[i], (uint16_t)f.s.head, f.s.qpn, 0,
					      pkt, 64);
		ASSERT_EQ(112, size);			/* 2 blocks */
		ASSERT_EQ(i & 1 ? 256u : 0u, f.s.bf_offset);
		ASSERT_EQ(2, tx_mlx5_post(&f.s, w[i], (size_t)size, 1));
		ASSERT_EQ(0, memcmp(f.bf + (i & 1) * 256, w[i], 128));
		ASSERT_EQ(f.s.head, be32((const uint8_t *)&f.dbrec[1]));
		ASSERT_EQ(0, f.dbrec[0]);		/* receive record untouched */
	}
	ASSERT_EQ(6, f.s.head);
	ASSERT_EQ(3, f.s.bf_posts);
	ASSERT_EQ(0, f.s.db_posts);
	/* the third went to the first half again, over the first */
	ASSERT_EQ(2, f.bf[52 + 2]);
	ASSERT_EQ(1, f.bf[256 + 52 + 2]);
	/* and each WQE is in the SQ at its index */
	for (unsigned i = 0; i < 3; i++) {
		ASSERT_EQ(0, memcmp(f.sq + i * 128, w[i], 128));
	}
#else
	SKIP(return, "infiniband/mlx5dv.h not installed");
#endif
}

TEST(doorbell_when_blueflame_cannot_be_used)
{
#if OMS_HAVE_MLX5DV
	struct fake_qp f;
	uint8_t pkt[200], w[1024], zero[64] = { 0 };
	int size;

	fake_init(&f, 64);			/* half = 1 block */
	pattern(pkt, sizeof(pkt), 2);
	size = tx_mlx5_build_eth_send(w, 0, f.s.qpn, 0, pkt, 200);
	ASSERT_EQ(240, size);			/* 4 blocks: too big */
	ASSERT_EQ(4, tx_mlx5_post(&f.s, w, (size_t)size, 1));
	ASSERT_EQ(0, memcmp(f.bf, w, 8));	/* ctrl's first 8 bytes */
	ASSERT_EQ(0, memcmp(f.bf + 8, zero, 56));
	ASSERT_EQ(1, f.s.db_posts);
	ASSERT_EQ(64, f.s.bf_offset);		/* halves alternate anyway */
	ASSERT_EQ(4, be32((const uint8_t *)&f.dbrec[1]));
	/* no BF register at all: the doorbell record only */
	fake_init(&f, 0);
	f.s.bf_reg = NULL;
	ASSERT_EQ(4, tx_mlx5_post(&f.s, w, (size_t)size, 0));
	ASSERT_EQ(4, be32((const uint8_t *)&f.dbrec[1]));
	ASSERT_EQ(0, f.s.bf_posts + f.s.db_posts);
#else
	SKIP(return, "infiniband/mlx5dv.h not installed");
#endif
}

TEST(send_queue_wraparound)
{
#if OMS_HAVE_MLX5DV
	struct fake_qp f;
	uint8_t pkt[120], w[1024];
	int size;

	fake_init(&f, 256);
	pattern(pkt, sizeof(pkt), 4);
	for (unsigned i = 0; i < 7; i++) {	/* one block each: 0..6 */
		size = tx_mlx5_build_eth_send(w, (uint16_t)f.s.head, f.s.qpn, 0,
					      pkt, 30);
		ASSERT_EQ(64, size);
		ASSERT_EQ(1, tx_mlx5_post(&f.s, w, (size_t)size, 0));
	}
	/* two blocks from index 7: block 0 at 7, block 1 at 0 */
	size = tx_mlx5_build_eth_send(w, (uint16_t)f.s.head, f.s.qpn,
				      TX_MLX5_SIGNAL, pkt, 90);
	ASSERT_EQ(128, size);
	ASSERT_EQ(2, tx_mlx5_post(&f.s, w, (size_t)size, 1));
	ASSERT_EQ(0, memcmp(f.sq + 7 * 64, w, 64));
	ASSERT_EQ(0, memcmp(f.sq, w + 64, 64));
	ASSERT_EQ(0x0000070aU, be32(f.sq + 7 * 64));	/* pi 7 */
	ASSERT_EQ(9, f.s.head);
	ASSERT_EQ(9, be32((const uint8_t *)&f.dbrec[1]));
	/* the 16-bit index wraps in the ctrl segment and the record */
	f.s.head = 0xffff;
	size = tx_mlx5_build_eth_send(w, (uint16_t)f.s.head, f.s.qpn, 0, pkt, 30);
	ASSERT_EQ(1, tx_mlx5_post(&f.s, w, (size_t)size, 0));
	ASSERT_EQ(0x00ffff0aU, be32(f.sq + 7 * 64));
	ASSERT_EQ(0, be32((const uint8_t *)&f.dbrec[1]));
	/* bad geometry is refused */
	f.s.wqe_cnt = 6;
	ASSERT_EQ(-EINVAL, tx_mlx5_post(&f.s, w, 64, 0));
	f.s.wqe_cnt = 8;
	f.s.stride = 128;
	ASSERT_EQ(-EINVAL, tx_mlx5_post(&f.s, w, 64, 0));
	f.s.stride = 64;
	ASSERT_EQ(-EINVAL, tx_mlx5_post(&f.s, w, 40, 0));
#else
	SKIP(return, "infiniband/mlx5dv.h not installed");
#endif
}

/* Several WQEs behind one record and one doorbell: every WQE at its
 * index (across the end of the SQ), the record once at the new head, the
 * last WQE's first 8 bytes in the register, no BlueFlame copy. */
TEST(batch_one_doorbell_for_several)
{
#if OMS_HAVE_MLX5DV
	struct fake_qp f;
	uint8_t pkt[120], w[3][1024], zero[64] = { 0 };
	const uint8_t *wq[3] = { w[0], w[1], w[2] };
	size_t sz[3];

	fake_init(&f, 256);
	f.s.head = 6;			/* so the batch wraps: 6, 7, 0-1 */
	pattern(pkt, sizeof(pkt), 5);
	for (unsigned i = 0; i < 3; i++) {
		uint32_t pi = f.s.head + i;	/* 1, 1, then 2 blocks */
		int size = tx_mlx5_build_eth_send(w[i], (uint16_t)pi, f.s.qpn,
						  0, pkt, i < 2 ? 30 : 90);

		ASSERT_EQ(i < 2 ? 64 : 128, size);
		sz[i] = (size_t)size;
	}
	ASSERT_EQ(4, tx_mlx5_post_batch(&f.s, wq, sz, 3, 1));
	ASSERT_EQ(10, f.s.head);
	ASSERT_EQ(10, be32((const uint8_t *)&f.dbrec[1]));
	ASSERT_EQ(0, memcmp(f.sq + 6 * 64, w[0], 64));
	ASSERT_EQ(0, memcmp(f.sq + 7 * 64, w[1], 64));
	ASSERT_EQ(0, memcmp(f.sq, w[2], 64));
	ASSERT_EQ(0, memcmp(f.sq + 64, w[2] + 64, 64));
	ASSERT_EQ(0, memcmp(f.bf, w[2], 8));	/* the last one's ctrl */
	ASSERT_EQ(0, memcmp(f.bf + 8, zero, 56));
	ASSERT_EQ(1, f.s.db_posts);
	ASSERT_EQ(0, f.s.bf_posts);
	ASSERT_EQ(256, f.s.bf_offset);		/* one doorbell, one toggle */
	/* one WQE: the BlueFlame copy of tx_mlx5_post */
	ASSERT_EQ(1, tx_mlx5_post_batch(&f.s, wq, sz, 1, 0));
	ASSERT_EQ(1, f.s.bf_posts);
	ASSERT_EQ(0, memcmp(f.bf + 256, w[0], 64));
#else
	SKIP(return, "infiniband/mlx5dv.h not installed");
#endif
}

/* A bad size anywhere in the batch, or more blocks than the SQ holds:
 * -EINVAL, and the SQ, head, record and register unchanged. */
TEST(batch_refused_whole)
{
#if OMS_HAVE_MLX5DV
	struct fake_qp f, before;
	uint8_t w[1024];
	const uint8_t *wq[16];
	size_t sz[16];
	static const struct {
		const char *what;
		unsigned n, bad;
		size_t size;
	} bad[] = {
		{ "a size not a multiple of 16", 3, 2, 72 },
		{ "a zero size", 3, 1, 0 },
		{ "a size above 63 units", 2, 0, 64 * 16 },
		{ "more blocks than the SQ", 9, 9, 64 },
		{ "n = 0", 0, 9, 64 },
		{ "n = 17", 17, 17, 64 },
	};

	fake_init(&f, 256);
	memset(w, 0xab, sizeof(w));
	for (unsigned b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		for (unsigned i = 0; i < 16; i++) {
			wq[i] = w;
			sz[i] = 64;
		}
		if (bad[b].bad < 16)
			sz[bad[b].bad] = bad[b].size;
		before = f;
		EXPECT_EQ(-EINVAL, tx_mlx5_post_batch(&f.s, wq, sz,
						      bad[b].n, 0)) {
			TH_LOG("%s", bad[b].what);
		}
		EXPECT_EQ(0, memcmp(&before, &f, offsetof(struct fake_qp, s))) {
			TH_LOG("%s wrote", bad[b].what);
		}
		EXPECT_EQ(before.s.head, f.s.head);
		EXPECT_EQ(before.s.bf_offset, f.s.bf_offset);
	}
	wq[1] = NULL;
	EXPECT_EQ(-EINVAL, tx_mlx5_post_batch(&f.s, wq, sz, 2, 0));
	EXPECT_EQ(-EINVAL, tx_mlx5_post_batch(&f.s, NULL, sz, 2, 0));
	EXPECT_EQ(0, f.s.head);
#else
	SKIP(return, "infiniband/mlx5dv.h not installed");
#endif
}

TEST_HARNESS_MAIN
