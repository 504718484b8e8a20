// SPDX-License-Identifier: GPL-2.0
/*
 * two_windows.c - two devices, /dev/oms and /dev/oms1, each with a window
 * of its own at once (two ivshmem BARs, a BAR and emulated pages, or two
 * sets of emulated pages), driven from two processes.  Detaching one
 * window zaps that window's mappings only: the other process's mapping
 * still holds what it wrote and still reads and writes, and its stores,
 * doorbells and flushes still work, also while the first window is
 * detached and attached again and again, or its PCI device is removed.
 * One BAR is the window of one device at a time (EBUSY).  Needs the module
 * loaded with devices=2.
 */
#include "harness.h"
#include "oms_guest.h"

#define T_DEV1		"/dev/" OMS_DEVICE_NAME "1"
#define OFF		T_SCRATCH_LIVE
#define MAPLEN		8192
#define CHURN_ROUNDS	200

enum t_win { T_EMU, T_IVSHMEM0, T_IVSHMEM1 };

/* Attach window @kind to @fd (after detaching what it has): 0 or -errno. */
static int t_setup(int fd, enum t_win kind)
{
	struct t_pci p;
	int ret = t_detach(fd);

	if (ret && ret != -ENODEV)
		return ret;
	if (kind == T_EMU)
		return t_attach_emulated(fd, T_BAR_SIZE, 0);
	if (t_find_ivshmem_n(&p, kind == T_IVSHMEM1))
		return -ENODEV;
	return t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0);
}

/* The words a process writes into its window: distinct per device. */
static uint32_t t_word(int dev, int round, int i)
{
	return 0xd0000000u | dev << 24 | round << 16 | i;
}

FIXTURE(two) {
	int fd[2];
};

FIXTURE_VARIANT(two) {
	enum t_win kind[2];
};

FIXTURE_VARIANT_ADD(two, bar_and_bar) { .kind = { T_IVSHMEM0, T_IVSHMEM1 } };
FIXTURE_VARIANT_ADD(two, bar_and_emulated) { .kind = { T_IVSHMEM0, T_EMU } };
FIXTURE_VARIANT_ADD(two, emulated_and_emulated) { .kind = { T_EMU, T_EMU } };

FIXTURE_SETUP(two)
{
	int k, ret;

	self->fd[0] = open(T_DEV, O_RDWR);
	ASSERT_LE(0, self->fd[0]);
	self->fd[1] = open(T_DEV1, O_RDWR);
	if (self->fd[1] < 0 && errno == ENOENT)
		SKIP(return, "no %s: module loaded without devices=2", T_DEV1);
	ASSERT_LE(0, self->fd[1]);
	for (k = 0; k < 2; k++) {
		ret = t_setup(self->fd[k], variant->kind[k]);
		if (ret == -ENODEV)
			SKIP(return, "not enough ivshmem devices");
		ASSERT_EQ(0, ret);
	}
}

FIXTURE_TEARDOWN(two)
{
	t_detach(self->fd[1]);
	close(self->fd[1]);
	close(self->fd[0]);
}

/* Each INFO describes its own window; the two are different memory. */
TEST_F(two, info_and_contents_independent)
{
	uint64_t v[2] = { 0x0a0a0a0a0a0a0a0aull, 0x1b1b1b1b1b1b1b1bull };
	struct oms_info info[2];
	uint64_t back = 0;
	int k;

	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, t_info(self->fd[k], &info[k]));
		EXPECT_EQ(variant->kind[k] == T_EMU ? OMS_WINDOW_EMULATED :
			  OMS_WINDOW_PCI, info[k].kind);
		EXPECT_EQ(0, info[k].flags & OMS_INFO_STALE);
	}
	if (info[0].kind == OMS_WINDOW_PCI && info[1].kind == OMS_WINDOW_PCI)
		EXPECT_NE(info[0].slot, info[1].slot);

	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, t_store1(self->fd[k], OFF, &v[k], 8,
				      OMS_STORE_STRONG, OMS_STORE_F_FLUSH));
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, t_read_window(self->fd[k], OFF, &back, 8));
		EXPECT_EQ(v[k], back);
	}
}

/*
 * A process that maps window @dev and fills it, says so on @ready, waits
 * for @go, then checks.  The survivor (!victim) checks its mapping kept
 * every word and still reads and writes, and that its stores, doorbell,
 * flush and INFO work; the victim, that its mapping is gone (SIGBUS) and
 * its file has no window.  Exit status: 0, or 1 + the first failed step.
 */
static int t_child(int dev, int victim, int ready, int go)
{
	const char *path = dev ? T_DEV1 : T_DEV;
	uint8_t wqe[64], back[64];
	struct oms_doorbell db = { .wqe_len = 64, .wqe = (uintptr_t)wqe,
				   .wqe_offset = OFF + MAPLEN,
				   .dbrec_offset = OFF + MAPLEN + 64,
				   .db_offset = OFF + MAPLEN + 128,
				   .dbrec = t_word(dev, 9, 1),
				   .db = t_word(dev, 9, 2) };
	uint64_t v = 0x5700000000000000ull | dev;
	volatile uint32_t *m;
	struct oms_info info;
	uint32_t got = 0;
	char c = 0;
	int fd, i;

	fd = open(path, O_RDWR);
	if (fd < 0)
		return 2;
	m = mmap(NULL, MAPLEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, OFF);
	if (m == MAP_FAILED)
		return 3;
	for (i = 0; i < MAPLEN / 4; i++)
		m[i] = t_word(dev, 1, i);
	if (t_flush(fd, OFF, NULL))
		return 4;
	/*
	 * Each child closes its end once it has written, so a child that
	 * failed before gives the test EOF, not a wait for ever.
	 */
	if (write(ready, "r", 1) != 1 || close(ready) || read(go, &c, 1) != 1)
		return 5;

	if (dev == victim) {
		if (t_touch_sigbus(&m[7], 0) != 1)
			return 6;
		if (t_info(fd, &info) || info.kind != OMS_WINDOW_NONE)
			return 7;
		if (t_flush(fd, OFF, NULL) != -ENODEV)
			return 8;
		return 0;
	}

	/* the survivor: what it wrote before the other's detach is there */
	for (i = 0; i < MAPLEN / 4; i++)
		if (m[i] != t_word(dev, 1, i))
			return 10;
	if (t_touch_sigbus(&m[7], 1) != 0)
		return 11;
	for (i = 0; i < MAPLEN / 4; i++)
		m[i] = t_word(dev, 2, i);
	if (t_flush(fd, OFF + MAPLEN - 4, &got) ||
	    got != t_word(dev, 2, MAPLEN / 4 - 1))
		return 12;
	if (t_store1(fd, OFF + 8, &v, 8, OMS_STORE_STRONG, OMS_STORE_F_FLUSH))
		return 13;
	if (m[2] != (uint32_t)v || m[3] != (uint32_t)(v >> 32))
		return 14;
	t_fill(wqe, sizeof(wqe), 40 + dev);
	if (t_ioctl(fd, OMS_IOC_DOORBELL, &db) || db.barriers != 3)
		return 15;
	if (t_flush(fd, OFF + MAPLEN + 64, &got) || got != db.dbrec)
		return 16;
	if (t_read_window(fd, OFF + MAPLEN, back, sizeof(back)) ||
	    memcmp(wqe, back, sizeof(wqe)))
		return 17;
	if (t_info(fd, &info) || info.kind == OMS_WINDOW_NONE ||
	    (info.flags & OMS_INFO_STALE))
		return 18;
	munmap((void *)m, MAPLEN);
	close(fd);
	return 0;
}

/*
 * Two processes map one window each; the test detaches one window, then
 * the other (attaching the first again in between).
 */
TEST_F(two, detach_one_other_mapping_lives)
{
	int ready[2], go[2], status, victim, k;
	pid_t pid[2];
	char c;

	for (victim = 1; victim >= 0; victim--) {
		ASSERT_EQ(0, pipe(ready));
		ASSERT_EQ(0, pipe(go));
		for (k = 0; k < 2; k++) {
			pid[k] = fork();
			ASSERT_LE(0, pid[k]);
			if (pid[k] == 0) {
				close(ready[0]);
				close(go[1]);
				_exit(t_child(k, victim, ready[1], go[0]));
			}
		}
		close(ready[1]);
		close(go[0]);
		for (k = 0; k < 2; k++)
			ASSERT_EQ(1, read(ready[0], &c, 1));

		EXPECT_EQ(0, t_detach(self->fd[victim]));

		ASSERT_EQ(2, write(go[1], "gg", 2));
		for (k = 0; k < 2; k++) {
			ASSERT_EQ(pid[k], waitpid(pid[k], &status, 0));
			EXPECT_TRUE(WIFEXITED(status));
			if (WEXITSTATUS(status))
				TH_LOG("device %d, victim %d: failed step %d",
				       k, victim, WEXITSTATUS(status));
			EXPECT_EQ(0, WEXITSTATUS(status));
		}
		close(ready[0]);
		close(go[1]);
		ASSERT_EQ(0, t_setup(self->fd[victim], variant->kind[victim]));
	}
}

/*
 * One process stores, rings doorbells and flushes on window 0 (checking
 * every value and barrier count) while window 1 is detached and attached
 * again CHURN_ROUNDS times.
 */
TEST_F(two, stores_go_on_while_other_detaches)
{
	volatile int *stop;
	int status, r;
	pid_t pid;

	stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, stop);
	*stop = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct oms_ordered_store s;
		struct oms_store_op op;
		uint64_t v, rounds = 0;
		uint32_t got;
		int fd = open(T_DEV, O_RDWR);

		if (fd < 0)
			_exit(2);
		do {
			v = 0x0123000000000000ull | rounds;
			op = (struct oms_store_op){ .offset = OFF, .length = 8,
						    .cls = OMS_STORE_STRONG,
						    .buf = (uintptr_t)&v };
			s = (struct oms_ordered_store){
				.flags = OMS_STORE_F_FLUSH, .count = 1,
				.ops = (uintptr_t)&op };
			if (t_ioctl(fd, OMS_IOC_ORDERED_STORE, &s) ||
			    s.barriers != 2)
				_exit(3);
			if (t_flush(fd, OFF, &got) || got != (uint32_t)v)
				_exit(4);
			rounds++;
		} while (!*stop || rounds < 10);
		close(fd);
		_exit(0);
	}
	for (r = 0; r < CHURN_ROUNDS; r++) {
		ASSERT_EQ(0, t_detach(self->fd[1]));
		ASSERT_EQ(0, t_setup(self->fd[1], variant->kind[1]));
	}
	*stop = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	munmap((void *)stop, 4096);
}

/* One BAR is the window of one device at a time. */
TEST(same_bar_one_device)
{
	struct oms_info info;
	struct t_pci p;
	int fd0, fd1;

	if (t_find_ivshmem_n(&p, 0))
		SKIP(return, "no ivshmem device");
	fd0 = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd0);
	fd1 = open(T_DEV1, O_RDWR);
	if (fd1 < 0 && errno == ENOENT)
		SKIP(return, "no %s: module loaded without devices=2", T_DEV1);
	ASSERT_LE(0, fd1);
	ASSERT_EQ(0, t_setup(fd0, T_IVSHMEM0));
	t_detach(fd1);

	EXPECT_EQ(-EBUSY, t_attach_pci(fd1, &p, T_IVSHMEM_BAR, 0));
	ASSERT_EQ(0, t_info(fd1, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);

	ASSERT_EQ(0, t_detach(fd0));
	EXPECT_EQ(0, t_attach_pci(fd1, &p, T_IVSHMEM_BAR, 0));
	EXPECT_EQ(-EBUSY, t_attach_pci(fd0, &p, T_IVSHMEM_BAR, 0));
	EXPECT_EQ(0, t_detach(fd1));
	EXPECT_EQ(0, t_attach_pci(fd0, &p, T_IVSHMEM_BAR, 0));
	close(fd1);
	close(fd0);
}

/*
 * Removing the PCI device under one window detaches that window only: the
 * other's mapping and calls go on.  Rescan brings the device back.
 */
TEST(remove_one_pci_device)
{
	uint32_t mark[2] = { 0x0e0e0e0e, 0x1f1f1f1f }, v = 0;
	volatile uint32_t *m[2];
	char bdf[32], path[256];
	struct oms_info info;
	struct t_pci p;
	int fd[2], k, i;

	if (t_find_ivshmem_n(&p, 1))
		SKIP(return, "not two ivshmem devices");
	t_bdf_str(&p, bdf, sizeof(bdf));
	fd[0] = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd[0]);
	fd[1] = open(T_DEV1, O_RDWR);
	if (fd[1] < 0 && errno == ENOENT)
		SKIP(return, "no %s: module loaded without devices=2", T_DEV1);
	ASSERT_LE(0, fd[1]);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, t_setup(fd[k], k ? T_IVSHMEM1 : T_IVSHMEM0));
		m[k] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fd[k], OFF);
		ASSERT_NE(MAP_FAILED, m[k]);
		m[k][5] = mark[k];
		ASSERT_EQ(0, t_flush(fd[k], OFF + 20, &v));
		EXPECT_EQ(mark[k], v);
	}

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", bdf);
	ASSERT_EQ(0, t_write_file(path, "1"));
	ASSERT_EQ(0, t_info(fd[1], &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	EXPECT_EQ(1, t_touch_sigbus(&m[1][5], 0));

	ASSERT_EQ(0, t_info(fd[0], &info));
	EXPECT_EQ(OMS_WINDOW_PCI, info.kind);
	EXPECT_EQ(mark[0], m[0][5]);
	ASSERT_EQ(0, t_flush(fd[0], OFF + 20, &v));
	EXPECT_EQ(mark[0], v);
	m[0][6] = ~mark[0];
	ASSERT_EQ(0, t_flush(fd[0], OFF + 24, &v));
	EXPECT_EQ(~mark[0], v);

	ASSERT_EQ(0, t_write_file("/sys/bus/pci/rescan", "1"));
	for (i = 0; i < 50 && t_find_ivshmem_n(&p, 1); i++)
		usleep(100000);
	ASSERT_EQ(0, t_setup(fd[1], T_IVSHMEM1));
	/* the same memory behind the re-enumerated device */
	ASSERT_EQ(0, t_flush(fd[1], OFF + 20, &v));
	EXPECT_EQ(mark[1], v);
	EXPECT_EQ(1, t_touch_sigbus(&m[1][5], 0));
	for (k = 0; k < 2; k++)
		munmap((void *)m[k], 4096);
	t_detach(fd[1]);
	close(fd[1]);
	close(fd[0]);
}

TEST_HARNESS_MAIN
