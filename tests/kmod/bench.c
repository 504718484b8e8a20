// SPDX-License-Identifier: GPL-2.0
/*
 * bench.c - MMIO_BENCH returns sane figures: all bytes written, one fence
 * per message with OMS_BENCH_FENCE and one in all without, a positive time
 * and TSC count, and the documented pattern left in the window (checked on
 * the host for the PCI variant).
 */
#include "harness.h"
#include "oms_guest.h"
#include "oms_window_fixture.h"

TEST_F(win, figures_are_sane)
{
	static const uint32_t sizes[] = { 64, 512, 4096, 8192 };
	size_t i;
	int fence;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (fence = 0; fence < 2; fence++) {
			struct oms_bench b = {
				.flags = fence ? OMS_BENCH_FENCE : 0,
				.msg_size = sizes[i], .width = 8,
				.total_bytes = 1 << 20,
				.offset = T_SCRATCH_BENCH, .span = 0x10000,
			};
			double gbps;

			ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
			EXPECT_EQ(1 << 20, b.bytes);
			EXPECT_EQ(fence ? (1 << 20) / sizes[i] : 1, b.fences);
			EXPECT_LT(0, b.ns);
			EXPECT_LT(0, b.cycles);
			EXPECT_LT(0, b.tsc_khz);
			EXPECT_EQ(0x10000, b.span);
			gbps = b.bytes * 8.0 / b.ns;
			EXPECT_LT(0.001, gbps);
			EXPECT_GT(10000.0, gbps);
			TH_LOG("msg %u fence %d: %.3f Gb/s", sizes[i], fence, gbps);
		}
	}
}

/* Width 8 over LAY_BENCH: every qword holds its own offset. */
TEST_F(win, pattern_width8)
{
	struct oms_bench b = { .msg_size = 256, .width = 8,
			       .total_bytes = 4 * LAY_BENCH_LEN,
			       .offset = LAY_BENCH, .span = LAY_BENCH_LEN };
	static uint64_t back[LAY_BENCH_LEN / 8];
	size_t i;

	ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	ASSERT_EQ(0, t_read_window(self->fd, LAY_BENCH, back, sizeof(back)));
	for (i = 0; i < LAY_BENCH_LEN / 8; i++)
		ASSERT_EQ(LAY_BENCH + i * 8, back[i]) TH_LOG("qword %zu", i);
}

/* Width 4, default span: 32-bit stores of the truncated offset. */
TEST_F(win, pattern_width4_default_span)
{
	struct oms_bench b = { .msg_size = 64, .width = 4,
			       .total_bytes = 256 * 1024, .offset = 0x140000 };
	static uint32_t back[256 * 1024 / 4];
	size_t i;

	ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	EXPECT_EQ(256 * 1024, b.span);
	ASSERT_EQ(0, t_read_window(self->fd, 0x140000, back, sizeof(back)));
	for (i = 0; i < sizeof(back) / 4; i++)
		ASSERT_EQ((uint32_t)(0x140000 + i * 4), back[i]);
}

TEST_HARNESS_MAIN
