// SPDX-License-Identifier: GPL-2.0
/*
 * generation.c - a file names its window.  A file is bound to the window
 * attached when it was opened (else to the first one it meets); once that
 * window is detached, the file's stores, doorbells, flushes, benchmarks and
 * mappings are refused with ESTALE whatever is attached now, and INFO says
 * OMS_INFO_STALE.  The file that attaches a window is bound to it, and a
 * file opened afterwards works.  Nothing of the new window changes.
 */
#include "harness.h"
#include "oms_guest.h"

#define OFF	T_SCRATCH_LIVE

static int all_stale(int fd)
{
	uint8_t wqe[64] = { 0 };
	struct oms_doorbell db = { .wqe_len = 64, .wqe = (uintptr_t)wqe,
				   .wqe_offset = OFF, .dbrec_offset = OFF + 64,
				   .db_offset = OFF + 128 };
	struct oms_bench b = { .msg_size = 64, .total_bytes = 4096,
			       .width = 8, .offset = OFF, .span = 4096 };
	uint64_t v = 0x57a1e57a1e57a1e5ull;
	int bad = 0;
	void *m;

	bad += t_store1(fd, OFF, &v, 8, OMS_STORE_STRONG, 0) != -ESTALE;
	bad += t_ioctl(fd, OMS_IOC_DOORBELL, &db) != -ESTALE;
	bad += t_flush(fd, OFF, NULL) != -ESTALE;
	bad += t_ioctl(fd, OMS_IOC_MMIO_BENCH, &b) != -ESTALE;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, OFF);
	if (m != MAP_FAILED) {
		munmap(m, 4096);
		bad++;
	} else {
		bad += errno != ESTALE;
	}
	return bad;
}

/* The old window's file against the new window, which it must not touch. */
TEST(old_file_meets_new_window)
{
	uint64_t v = 0x1111111111111111ull, zero = 0, back = 1;
	struct oms_info i0, i1;
	int old, admin, fresh;

	admin = open(T_DEV, O_RDWR);
	ASSERT_LE(0, admin);
	ASSERT_EQ(0, t_setup_window(admin, 0));		/* generation g */
	old = open(T_DEV, O_RDWR);			/* bound to g */
	ASSERT_LE(0, old);
	ASSERT_EQ(0, t_setup_window(admin, 0));		/* g + 1 */
	/* @old was opened under the window of generation g: stale now */
	ASSERT_EQ(0, t_info(old, &i0));
	EXPECT_EQ(OMS_INFO_STALE, i0.flags & OMS_INFO_STALE);
	EXPECT_EQ(0, all_stale(old));

	/* the attaching file works, and the new window starts zeroed */
	ASSERT_EQ(0, t_info(admin, &i1));
	EXPECT_EQ(0, i1.flags & OMS_INFO_STALE);
	EXPECT_EQ(OMS_WINDOW_EMULATED, i1.kind);
	ASSERT_EQ(0, t_read_window(admin, OFF, &back, 8));
	EXPECT_EQ(zero, back);

	/* a file opened now is bound to it */
	fresh = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fresh);
	EXPECT_EQ(0, t_store1(fresh, OFF, &v, 8, OMS_STORE_STRONG, 0));
	ASSERT_EQ(0, t_read_window(admin, OFF, &back, 8));
	EXPECT_EQ(v, back);
	close(fresh);

	/* the same file detaching and attaching again is bound again */
	ASSERT_EQ(0, t_setup_window(admin, 0));
	EXPECT_EQ(0, t_store1(admin, OFF, &v, 8, OMS_STORE_WEAK, 0));
	close(old);
	close(admin);
}

/* A file opened with no window is bound to the first one it meets. */
TEST(unbound_file_binds_once)
{
	uint64_t v = 0x2222222222222222ull;
	struct oms_info info;
	int admin, late;

	admin = open(T_DEV, O_RDWR);
	ASSERT_LE(0, admin);
	t_detach(admin);
	late = open(T_DEV, O_RDWR);
	ASSERT_LE(0, late);
	ASSERT_EQ(0, t_info(late, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	EXPECT_EQ(-ENODEV, t_store1(late, OFF, &v, 8, OMS_STORE_WEAK, 0));

	ASSERT_EQ(0, t_attach_emulated(admin, T_BAR_SIZE, 0));
	EXPECT_EQ(0, t_store1(late, OFF, &v, 8, OMS_STORE_WEAK, 0));
	ASSERT_EQ(0, t_info(late, &info));
	EXPECT_EQ(0, info.flags & OMS_INFO_STALE);

	ASSERT_EQ(0, t_setup_window(admin, 0));
	EXPECT_EQ(0, all_stale(late));
	/* its INFO still describes what is attached, and says so */
	ASSERT_EQ(0, t_info(late, &info));
	EXPECT_EQ(OMS_WINDOW_EMULATED, info.kind);
	EXPECT_EQ(OMS_INFO_STALE, info.flags & OMS_INFO_STALE);
	close(late);
	close(admin);
}

/*
 * The case an attack run found: a store meant for the emulated window
 * must not land in the ivshmem BAR attached after it.
 */
TEST(store_for_emulated_never_reaches_bar)
{
	uint64_t v = 0x3333333333333333ull, before = 0, after = 1;
	int admin, user;

	admin = open(T_DEV, O_RDWR);
	ASSERT_LE(0, admin);
	ASSERT_EQ(0, t_setup_window(admin, 0));
	user = open(T_DEV, O_RDWR);
	ASSERT_LE(0, user);
	EXPECT_EQ(0, t_store1(user, OFF, &v, 8, OMS_STORE_WEAK, 0));

	if (t_setup_window(admin, 1) == -ENODEV)
		SKIP(goto out, "no ivshmem device");
	ASSERT_EQ(0, t_read_window(admin, OFF + 8, &before, 8));
	EXPECT_EQ(-ESTALE, t_store1(user, OFF + 8, &v, 8, OMS_STORE_WEAK,
				     OMS_STORE_F_FLUSH));
	ASSERT_EQ(0, t_read_window(admin, OFF + 8, &after, 8));
	EXPECT_EQ(before, after);
out:
	close(user);
	close(admin);
}

TEST_HARNESS_MAIN
