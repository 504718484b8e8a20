// SPDX-License-Identifier: GPL-2.0
/*
 * msix.c - the window never hands out a device's MSI-X table or pending-bit
 * array, whoever asks and whatever allow_claimed says.  An MSI-X entry is an
 * address and a value the device writes for an interrupt: writing one turns
 * the device's next interrupt into a DMA write of the writer's choosing.
 *
 * The guest has two devices with MSI-X in a BAR of their own (QEMU puts the
 * table and the PBA of a virtio device in BAR 1): the virtio-9p device that
 * serves the guest's root, bound and with MSI-X enabled, whose 4 KiB BAR is
 * nothing but table and PBA (refused outright), and a virtio-rng device with
 * 512 vectors, whose 16 KiB BAR has 8 KiB of table, the PBA on the third
 * page and a fourth page that is neither (attached with a hole).  The
 * attempts come from root and from a process that is only "nobody" plus the
 * device file's group; before and after, the table and PBA are read through
 * the kernel's own sysfs mapping and must not have changed.
 */
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"
#include "oms_guest.h"

#define T_ALLOW	"/sys/module/oms/parameters/allow_claimed"
#define T_GID	4242		/* the device file's group in the test */
#define PG	4096u

/*
 * The first device with an MSI-X table in a memory BAR of @pages pages or
 * fewer (@min_pages or more): 0, or -1 if the guest has none.
 */
static int find_msix_dev(uint64_t min_pages, uint64_t max_pages,
			 struct t_pci *p, char *bdf, size_t n, struct t_msix *x)
{
	struct dirent *de;
	DIR *d = opendir("/sys/bus/pci/devices");
	uint64_t len;
	int ret = -1;

	if (!d)
		return -1;
	while (ret && (de = readdir(d))) {
		if (de->d_name[0] == '.' || t_parse_bdf(de->d_name, p) ||
		    t_msix_find(de->d_name, x))
			continue;
		len = t_bar_len(de->d_name, x->table_bar);
		if (len >= min_pages * PG && len <= max_pages * PG) {
			snprintf(bdf, n, "%.*s", (int)n - 1, de->d_name);
			ret = 0;
		}
	}
	closedir(d);
	return ret;
}

/* @len bytes at @off of BAR @bar of @bdf, read through sysfs. */
static int bar_read(const char *bdf, int bar, uint64_t off, void *buf,
		    size_t len)
{
	char path[256];
	volatile uint32_t *m;
	uint32_t *out = buf;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.64s/resource%d",
		 bdf, bar);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	m = mmap(NULL, off + len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	for (i = 0; i < len / 4; i++)
		out[i] = m[(off / 4) + i];
	munmap((void *)m, off + len);
	return 0;
}

static int doorbell(int fd, uint64_t wqe_off, uint64_t dbrec_off,
		    uint64_t db_off)
{
	uint8_t wqe[64] = { 1 };
	struct oms_doorbell db = { .wqe_len = 64, .wqe = (uintptr_t)wqe,
				   .wqe_offset = wqe_off,
				   .dbrec_offset = dbrec_off,
				   .db_offset = db_off };

	return t_ioctl(fd, OMS_IOC_DOORBELL, &db);
}

static int store2(int fd, uint64_t off0, uint64_t off1)
{
	uint64_t v = 0xfee00000deadbeefull;
	struct oms_store_op op[2] = {
		{ .offset = off0, .length = 8, .cls = OMS_STORE_WEAK,
		  .buf = (uintptr_t)&v },
		{ .offset = off1, .length = 8, .cls = OMS_STORE_WEAK,
		  .buf = (uintptr_t)&v },
	};
	struct oms_ordered_store s = { .count = 2, .ops = (uintptr_t)op };

	return t_ioctl(fd, OMS_IOC_ORDERED_STORE, &s);
}

static int bench(int fd, uint64_t off, uint64_t span)
{
	struct oms_bench b = { .msg_size = 64, .total_bytes = 4096,
			       .width = 8, .offset = off, .span = span };

	return t_ioctl(fd, OMS_IOC_MMIO_BENCH, &b);
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jmp, 1);
}

/*
 * Every path of the module into the holes of a 4-page window whose pages
 * 0-2 are table and PBA, on @fd: each refused, and page 3 works.  Returns
 * the number of paths that were not refused (0 is a pass), or -1 if page
 * 3 did not work.
 */
static int attack(int fd)
{
	static const uint64_t offs[] = { 0, 8, PG, 2 * PG, 3 * PG - 8 };
	struct sigaction sa = { .sa_handler = on_sigbus };
	uint64_t v = 0xfee00000deadbeefull;
	volatile uint64_t *m;
	volatile int got = 0;
	volatile size_t i;

	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		got += t_store1(fd, offs[i], &v, 8, OMS_STORE_STRONG,
				OMS_STORE_F_FLUSH) != -EACCES;
		got += t_flush(fd, offs[i], NULL) != -EACCES;
	}
	/* a vector whose first op is allowed and second is not */
	got += store2(fd, 3 * PG, 2 * PG + 8) != -EACCES;
	/* each of the doorbell's three stores */
	got += doorbell(fd, 0, 3 * PG, 3 * PG + 64) != -EACCES;
	got += doorbell(fd, 3 * PG, 2 * PG, 3 * PG + 64) != -EACCES;
	got += doorbell(fd, 3 * PG, 3 * PG + 8, PG) != -EACCES;
	got += bench(fd, 0, 0) != -EACCES;
	got += bench(fd, 2 * PG, 2 * PG) != -EACCES;

	/* the mapping: page 3 is there, pages 0-2 raise SIGBUS */
	m = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	sigaction(SIGBUS, &sa, NULL);
	for (i = 0; i < 3; i++) {
		if (!sigsetjmp(bus_jmp, 1)) {
			m[i * PG / 8 + 1] = v;
			got++;
		}
		if (!sigsetjmp(bus_jmp, 1)) {
			(void)m[i * PG / 8];
			got++;
		}
	}
	signal(SIGBUS, SIG_DFL);

	/*
	 * The control: the same paths reach page 3, so each refusal above
	 * is the hole's.  (Page 3 of QEMU's MSI-X BAR is no memory: what is
	 * written there is dropped.)
	 */
	m[3 * PG / 8 + 2] = 0x5151515151515151ull;
	if (t_store1(fd, 3 * PG + 8, &v, 8, OMS_STORE_STRONG, OMS_STORE_F_FLUSH) ||
	    t_flush(fd, 3 * PG, NULL) || doorbell(fd, 3 * PG + 64, 3 * PG,
						   3 * PG + 128) ||
	    bench(fd, 3 * PG, PG))
		got = -1;
	munmap((void *)m, 4 * PG);
	return got;
}

/* The virtio-rng device with 512 vectors, or SKIP. */
#define NEED_HOLE_DEV(p, bdf, x)					\
	do {								\
		if (find_msix_dev(4, 4, &p, bdf, sizeof(bdf), &x))	\
			SKIP(return, "no device with a 4-page MSI-X BAR"); \
		ASSERT_EQ(x.table_bar, x.pba_bar);			\
		ASSERT_EQ(0, x.table_off);				\
		ASSERT_EQ(512, x.entries);				\
		ASSERT_EQ(2 * PG, x.pba_off);				\
	} while (0)

/*
 * The table and PBA as sysfs reads them into @before (3 pages), then the
 * BAR attached uncached on a fresh descriptor: the descriptor, or -errno.
 */
static int attach_hole_bar(const struct t_pci *p, const char *bdf,
			   const struct t_msix *x, uint8_t *before)
{
	int fd, ret;

	if (bar_read(bdf, x->table_bar, 0, before, 3 * PG))
		return -EIO;
	fd = open(T_DEV, O_RDWR);
	if (fd < 0)
		return -errno;
	t_detach(fd);
	ret = t_attach_pci(fd, p, x->table_bar, OMS_ATTACH_UC);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* A bound device with MSI-X on: its BAR is all table and PBA. */
TEST(all_holes_refused)
{
	uint8_t before[PG], after[PG];
	struct oms_info info;
	struct t_msix x;
	struct t_pci p;
	char bdf[64];
	int fd;

	if (find_msix_dev(1, 1, &p, bdf, sizeof(bdf), &x))
		SKIP(return, "no device with a one-page MSI-X BAR");
	TH_LOG("%s: MSI-X %s, %u vectors, table in BAR %d at 0x%x, PBA in BAR %d at 0x%x",
	       bdf, x.enabled ? "on" : "off", x.entries, x.table_bar,
	       x.table_off, x.pba_bar, x.pba_off);
	ASSERT_EQ(0, bar_read(bdf, x.table_bar, 0, before, PG));
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	t_detach(fd);
	EXPECT_EQ(-EACCES, t_attach_pci(fd, &p, x.table_bar, OMS_ATTACH_UC));
	ASSERT_EQ(0, t_write_file(T_ALLOW, "1"));
	EXPECT_EQ(-EACCES, t_attach_pci(fd, &p, x.table_bar, OMS_ATTACH_UC));
	ASSERT_EQ(0, t_write_file(T_ALLOW, "0"));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	ASSERT_EQ(0, bar_read(bdf, x.table_bar, 0, after, PG));
	EXPECT_EQ(0, memcmp(before, after, PG));
	close(fd);
}

/* A BAR with a table, a PBA and a free page: the window has a hole. */
TEST(holes_refused_to_root)
{
	uint8_t before[3 * PG], after[3 * PG];
	struct oms_info info;
	struct t_msix x;
	struct t_pci p;
	char bdf[64];
	int fd;

	NEED_HOLE_DEV(p, bdf, x);
	ASSERT_EQ(0, t_write_file(T_ALLOW, "1"));
	fd = attach_hole_bar(&p, bdf, &x, before);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_PCI, info.kind);
	EXPECT_EQ(4 * PG, info.length);
	/* table pages 0-1 and the PBA's page 2 make one hole */
	EXPECT_EQ(1, info.holes);
	EXPECT_EQ(0, info.hole[0].pgoff);
	EXPECT_EQ(3, info.hole[0].pages);
	EXPECT_EQ(0, attack(fd));
	EXPECT_EQ(0, t_detach(fd));
	ASSERT_EQ(0, t_write_file(T_ALLOW, "0"));
	/* oms held the region: sysfs maps it again once it is detached */
	ASSERT_EQ(0, bar_read(bdf, x.table_bar, 0, after, 3 * PG));
	EXPECT_EQ(0, memcmp(before, after, 3 * PG));
	close(fd);
}

/*
 * The attack of a group member: a process that is "nobody" plus the
 * group the administrator gave /dev/oms (udev's rule: 0660 root:oms).
 */
TEST(holes_refused_to_the_group)
{
	uint8_t before[3 * PG], after[3 * PG];
	struct stat st0;
	struct t_msix x;
	struct t_pci p;
	char bdf[64];
	int fd, status;
	pid_t pid;

	NEED_HOLE_DEV(p, bdf, x);
	fd = attach_hole_bar(&p, bdf, &x, before);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, stat(T_DEV, &st0));
	ASSERT_EQ(0, chown(T_DEV, 0, T_GID));
	ASSERT_EQ(0, chmod(T_DEV, 0660));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		gid_t g = T_GID;
		int ufd, got;

		if (setgroups(1, &g) || setgid(65534) || setuid(65534))
			_exit(100);
		ufd = open(T_DEV, O_RDWR);
		if (ufd < 0)
			_exit(101);
		/* and the group cannot move the window elsewhere */
		if (t_detach(ufd) != -EPERM ||
		    t_attach_pci(ufd, &p, x.table_bar, OMS_ATTACH_UC) != -EPERM)
			_exit(102);
		got = attack(ufd);
		_exit(got < 0 ? 103 : got > 99 ? 99 : got);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	chmod(T_DEV, st0.st_mode & 07777);
	chown(T_DEV, st0.st_uid, st0.st_gid);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("paths not refused (or 100+: set-up step)");
	EXPECT_EQ(0, t_detach(fd));
	ASSERT_EQ(0, bar_read(bdf, x.table_bar, 0, after, 3 * PG));
	EXPECT_EQ(0, memcmp(before, after, 3 * PG));
	close(fd);
}

TEST_HARNESS_MAIN
