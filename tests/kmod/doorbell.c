// SPDX-License-Identifier: GPL-2.0
/*
 * doorbell.c - DOORBELL: WQE, doorbell record and 64-bit doorbell land
 * exactly with exactly three barriers; the BlueFlame variant copies the WQE
 * to the BF register in 64-byte chunks.  Checked on the host for the PCI
 * variant.
 */
#include "harness.h"
#include "oms_guest.h"
#include "oms_window_fixture.h"

TEST_F(win, doorbell_sequence)
{
	uint8_t wqe[LAY_DB_WQE_LEN], back[LAY_DB_WQE_LEN];
	struct oms_doorbell d = {
		.wqe_len = LAY_DB_WQE_LEN, .wqe = (uintptr_t)wqe,
		.wqe_offset = LAY_DB_WQE, .dbrec_offset = LAY_DB_REC,
		.db_offset = LAY_DB_DB, .dbrec = LAY_DB_REC_VAL,
		.db = LAY_DB_DB_VAL,
	};
	uint32_t rec = 0, v = 0;
	uint64_t db = 0;

	t_fill(wqe, sizeof(wqe), 5);
	ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	EXPECT_EQ(3, d.barriers);
	ASSERT_EQ(0, t_flush(self->fd, LAY_DB_REC, &v));
	EXPECT_EQ(LAY_DB_REC_VAL, v);
	ASSERT_EQ(0, t_read_window(self->fd, LAY_DB_WQE, back, sizeof(back)));
	EXPECT_EQ(0, memcmp(wqe, back, sizeof(wqe)));
	ASSERT_EQ(0, t_read_window(self->fd, LAY_DB_REC, &rec, 4));
	EXPECT_EQ(LAY_DB_REC_VAL, rec);
	ASSERT_EQ(0, t_read_window(self->fd, LAY_DB_DB, &db, 8));
	EXPECT_EQ(LAY_DB_DB_VAL, db);
}

TEST_F(win, blueflame)
{
	uint8_t wqe[LAY_BF_WQE_LEN], back[LAY_BF_WQE_LEN];
	struct oms_doorbell d = {
		.flags = OMS_DB_BLUEFLAME,
		.wqe_len = LAY_BF_WQE_LEN, .wqe = (uintptr_t)wqe,
		.wqe_offset = LAY_BF_WQE, .dbrec_offset = LAY_BF_REC,
		.db_offset = LAY_BF_REG, .dbrec = LAY_BF_REC_VAL,
	};
	uint32_t rec = 0;

	t_fill(wqe, sizeof(wqe), 6);
	ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	EXPECT_EQ(3, d.barriers);
	ASSERT_EQ(0, t_read_window(self->fd, LAY_BF_WQE, back, sizeof(back)));
	EXPECT_EQ(0, memcmp(wqe, back, sizeof(wqe)));
	ASSERT_EQ(0, t_read_window(self->fd, LAY_BF_REG, back, sizeof(back)));
	EXPECT_EQ(0, memcmp(wqe, back, sizeof(wqe)));
	ASSERT_EQ(0, t_read_window(self->fd, LAY_BF_REC, &rec, 4));
	EXPECT_EQ(LAY_BF_REC_VAL, rec);
}

/* A one-chunk BlueFlame WQE at the end of the window. */
TEST_F(win, blueflame_one_chunk_at_end)
{
	struct oms_info info;
	uint8_t wqe[64], back[64];
	struct oms_doorbell d = {
		.flags = OMS_DB_BLUEFLAME, .wqe_len = 64,
		.wqe = (uintptr_t)wqe, .dbrec_offset = 0x180ffc,
	};

	ASSERT_EQ(0, t_info(self->fd, &info));
	d.wqe_offset = 0x180f00;
	d.db_offset = info.length - 64;
	t_fill(wqe, sizeof(wqe), 7);
	ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	ASSERT_EQ(0, t_read_window(self->fd, info.length - 64, back, 64));
	EXPECT_EQ(0, memcmp(wqe, back, 64));
}

TEST_HARNESS_MAIN
