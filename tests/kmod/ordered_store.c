// SPDX-License-Identifier: GPL-2.0
/*
 * ordered_store.c - ORDERED_STORE: a vector lands exactly and in program
 * order (overlaps resolve to the later op; checked on the host for the PCI
 * variant), and each vector issues exactly the barriers its classes need.
 */
#include "harness.h"
#include "oms_guest.h"
#include "oms_window_fixture.h"

#define SCRATCH 0x180000	/* not checked on the host */


TEST_F(win, vector_lands_in_order)
{
	static uint8_t bufs[T_STORE_NOPS][1024];
	uint8_t want[LAY_STORE_LEN], back[LAY_STORE_LEN];
	struct oms_store_op ops[T_STORE_NOPS];
	struct oms_ordered_store s = { .flags = OMS_STORE_F_FLUSH,
				       .count = T_STORE_NOPS,
				       .ops = (uintptr_t)ops };
	int k;

	memset(ops, 0, sizeof(ops));
	for (k = 0; k < T_STORE_NOPS; k++) {
		t_store_payload(k, bufs[k]);
		ops[k].offset = LAY_STORE + t_store_spec[k].off;
		ops[k].length = t_store_spec[k].len;
		ops[k].cls = t_store_spec[k].class;
		ops[k].buf = (uintptr_t)bufs[k];
	}
	/* Start from zeros so that every byte of the image is from here. */
	memset(back, 0, sizeof(back));
	ASSERT_EQ(0, t_store1(self->fd, LAY_STORE, back, sizeof(back),
			      OMS_STORE_STRONG, 0));
	ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE, &s));
	EXPECT_EQ(T_STORE_BARRIERS, s.barriers);
	t_store_image(want);
	ASSERT_EQ(0, t_read_window(self->fd, LAY_STORE, back, sizeof(back)));
	EXPECT_EQ(0, memcmp(want, back, sizeof(want)));
}

/* Exactly the barriers each sequence of classes needs. */
TEST_F(win, barrier_counts)
{
	static const struct { const char *seq; uint32_t flags; uint64_t want; }
	cases[] = {
		{ "W", 0, 0 },
		{ "WWWW", 0, 0 },
		{ "S", 0, 1 },
		{ "WS", 0, 1 },
		{ "SS", 0, 2 },
		{ "SSS", 0, 3 },
		{ "US", 0, 1 },
		{ "UUUU", 0, 0 },
		{ "WUS", 0, 1 },
		{ "WSWS", 0, 2 },
		{ "SWWWS", 0, 2 },
		{ "WWSU", 0, 1 },
		{ "WUSUS", 0, 2 },
		{ "USUS", 0, 2 },
		{ "W", OMS_STORE_F_FLUSH, 1 },
		{ "WS", OMS_STORE_F_FLUSH, 2 },
		{ "U", OMS_STORE_F_FLUSH, 1 },
	};
	struct oms_store_op ops[8];
	uint64_t vals[8];
	size_t c, k;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct oms_ordered_store s = { .flags = cases[c].flags,
					       .ops = (uintptr_t)ops };

		memset(ops, 0, sizeof(ops));
		for (k = 0; cases[c].seq[k]; k++) {
			char cl = cases[c].seq[k];

			vals[k] = 0x1000 * (c + 1) + k;
			ops[k].offset = SCRATCH + 8 * k;
			ops[k].length = 8;
			ops[k].buf = (uintptr_t)&vals[k];
			ops[k].cls = cl == 'S' ? OMS_STORE_STRONG :
				       cl == 'W' ? OMS_STORE_WEAK :
						   OMS_STORE_UNORDERED;
		}
		s.count = k;
		ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE, &s));
		EXPECT_EQ(cases[c].want, s.barriers)
			TH_LOG("sequence %s flags %u", cases[c].seq,
			       cases[c].flags);
		for (k = 0; cases[c].seq[k]; k++) {
			uint64_t got = 0;

			ASSERT_EQ(0, t_read_window(self->fd, SCRATCH + 8 * k,
						   &got, 8));
			EXPECT_EQ(vals[k], got);
		}
	}
}

/*
 * L01/L03 across calls: a strong store follows the ordered stores of an
 * earlier call left unflushed (no OMS_STORE_F_FLUSH), weak or strong, so
 * a call that starts with one fences before it.  The window's bytes cannot
 * show WC reordering here; the barrier count is what the module did.
 */
TEST_F(win, L01_L03_strong_after_earlier_call)
{
	static const uint32_t first[] = { OMS_STORE_WEAK, OMS_STORE_STRONG };
	uint64_t val = 0x5151;
	struct oms_store_op op = { .offset = SCRATCH + 0x2000, .length = 8,
				   .buf = (uintptr_t)&val };
	struct oms_ordered_store s = { .count = 1, .ops = (uintptr_t)&op };
	size_t k;

	for (k = 0; k < sizeof(first) / sizeof(first[0]); k++) {
		op.cls = first[k];
		s.barriers = 99;
		ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE, &s));
		EXPECT_EQ(first[k] == OMS_STORE_STRONG ? 1 : 0, s.barriers);
		op.cls = OMS_STORE_STRONG;
		val++;
		s.barriers = 99;
		ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE, &s));
		EXPECT_EQ(1, s.barriers)
			TH_LOG("a strong store after a %s store of an earlier call",
			       first[k] == OMS_STORE_WEAK ? "weak" : "strong");
		val++;
	}
}

/* 256 weak stores to one address: the last one in program order wins. */
TEST_F(win, same_address_last_wins)
{
	struct oms_store_op ops[OMS_STORE_MAX_OPS];
	struct oms_ordered_store s = { .count = OMS_STORE_MAX_OPS,
				       .ops = (uintptr_t)ops };
	uint64_t vals[OMS_STORE_MAX_OPS], got = 0;
	uint32_t v = 0;
	int k;

	memset(ops, 0, sizeof(ops));
	for (k = 0; k < OMS_STORE_MAX_OPS; k++) {
		vals[k] = 0xabcd000000000000ull + k;
		ops[k] = (struct oms_store_op){ .offset = SCRATCH + 0x1000,
			.length = 8, .cls = OMS_STORE_WEAK,
			.buf = (uintptr_t)&vals[k] };
	}
	ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE, &s));
	EXPECT_EQ(0, s.barriers);
	ASSERT_EQ(0, t_flush(self->fd, SCRATCH + 0x1000, &v));
	EXPECT_EQ((uint32_t)vals[OMS_STORE_MAX_OPS - 1], v);
	ASSERT_EQ(0, t_read_window(self->fd, SCRATCH + 0x1000, &got, 8));
	EXPECT_EQ(vals[OMS_STORE_MAX_OPS - 1], got);
}

/* The largest vector: OMS_STORE_MAX_BYTES in four ops. */
TEST_F(win, max_bytes)
{
	const uint32_t q = OMS_STORE_MAX_BYTES / 4;
	struct oms_store_op ops[4];
	struct oms_ordered_store s = { .count = 4, .ops = (uintptr_t)ops,
				       .flags = OMS_STORE_F_FLUSH };
	uint8_t *buf = malloc(OMS_STORE_MAX_BYTES);
	uint8_t *back = malloc(OMS_STORE_MAX_BYTES);
	int k;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, back);
	t_fill(buf, OMS_STORE_MAX_BYTES, 9);
	memset(ops, 0, sizeof(ops));
	for (k = 0; k < 4; k++)
		ops[k] = (struct oms_store_op){ .offset = 0x200000 + 0x10000 +
			(uint64_t)k * q, .length = q, .cls = OMS_STORE_WEAK,
			.buf = (uintptr_t)(buf + (size_t)k * q) };
	ASSERT_EQ(0, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE, &s));
	EXPECT_EQ(1, s.barriers);
	ASSERT_EQ(0, t_read_window(self->fd, 0x210000, back,
				   OMS_STORE_MAX_BYTES));
	EXPECT_EQ(0, memcmp(buf, back, OMS_STORE_MAX_BYTES));
	free(buf);
	free(back);
}

TEST_HARNESS_MAIN
