// SPDX-License-Identifier: GPL-2.0
/*
 * security.c - who may do what with /dev/oms:
 * - a read-only descriptor cannot store, ring a doorbell, bench, attach or
 *   detach (EBADF) and cannot map the window writable (EACCES from the
 *   VFS), but may ask INFO, FLUSH and map it read-only;
 * - the window is never executable (PROT_EXEC: EPERM; mprotect: EACCES);
 * - a BAR claimed by its driver (e1000 bound to the guest's NIC) is refused
 *   (EBUSY) under strict devmem, like its sysfs resource0 mmap, unless the
 *   allow_claimed parameter is set; unbound, it is attached and claimed;
 *   as a register BAR (not prefetchable) it is never write-combining.
 */
#include <sys/stat.h>

#include "harness.h"
#include "oms_guest.h"
#include "oms_window_fixture.h"

#define T_E1000_VENDOR	0x8086
#define T_E1000_DEVICE	0x100e
#define T_PARAM		"/sys/module/oms/parameters/allow_claimed"

TEST_F(win, read_only_fd)
{
	uint8_t before[256], after[256], buf[256];
	struct oms_doorbell db = { .wqe_len = 64, .wqe = (uintptr_t)buf,
				   .wqe_offset = T_SCRATCH_LIVE,
				   .dbrec_offset = T_SCRATCH_LIVE + 128,
				   .db_offset = T_SCRATCH_LIVE + 192 };
	struct oms_bench b = { .msg_size = 64, .width = 8, .total_bytes = 4096,
			       .offset = T_SCRATCH_LIVE, .span = 4096 };
	struct oms_info i0, i1;
	void *m;
	int ro;

	memset(buf, 0xee, sizeof(buf));
	ASSERT_EQ(0, t_read_window(self->fd, T_SCRATCH_LIVE, before,
				   sizeof(before)));
	ro = open(T_DEV, O_RDONLY);
	ASSERT_LE(0, ro);
	ASSERT_EQ(0, t_info(ro, &i0));

	EXPECT_EQ(-EBADF, t_store1(ro, T_SCRATCH_LIVE, buf, 64,
				   OMS_STORE_STRONG, 0));
	EXPECT_EQ(-EBADF, t_ioctl(ro, OMS_IOC_DOORBELL, &db));
	EXPECT_EQ(-EBADF, t_ioctl(ro, OMS_IOC_MMIO_BENCH, &b));
	EXPECT_EQ(-EBADF, t_detach(ro));
	EXPECT_EQ(-EBADF, t_attach_emulated(ro, 0, 0));
	/* EBADF comes before the argument is read. */
	EXPECT_EQ(-EBADF, t_ioctl(ro, OMS_IOC_ORDERED_STORE, NULL));
	/* INFO and FLUSH (a fence and a read) stay allowed. */
	EXPECT_EQ(0, t_flush(ro, T_SCRATCH_LIVE, NULL));

	/* Writable shared mapping: refused by the VFS. */
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED, ro, T_SCRATCH_LIVE));
	EXPECT_EQ(EACCES, errno);
	/* Read-only mapping: allowed, and cannot be made writable. */
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, ro, T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, memcmp(m, before, sizeof(before)));
	errno = 0;
	EXPECT_EQ(-1, mprotect(m, 4096, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(m, 4096);

	ASSERT_EQ(0, t_info(ro, &i1));
	EXPECT_EQ(0, memcmp(&i0, &i1, sizeof(i1)));
	ASSERT_EQ(0, t_read_window(self->fd, T_SCRATCH_LIVE, after,
				   sizeof(after)));
	EXPECT_EQ(0, memcmp(before, after, sizeof(after)));
	close(ro);
}

TEST_F(win, no_exec_mapping)
{
	void *m;

	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_EXEC,
				   MAP_SHARED, self->fd, 0));
	EXPECT_EQ(EPERM, errno);
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_EXEC, MAP_SHARED,
				   self->fd, 0));
	EXPECT_EQ(EPERM, errno);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	errno = 0;
	EXPECT_EQ(-1, mprotect(m, 4096, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	munmap(m, 4096);
}

/* The guest's e1000 NIC (run-kmod-tests.sh adds one), or -1. */
static int find_e1000(struct t_pci *p, char *bdf, size_t n)
{
	struct dirent *de;
	DIR *d = opendir("/sys/bus/pci/devices");
	int ret = -1;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] != '.' &&
		    t_sysfs_hex(de->d_name, "vendor") == T_E1000_VENDOR &&
		    t_sysfs_hex(de->d_name, "device") == T_E1000_DEVICE &&
		    !t_parse_bdf(de->d_name, p)) {
			snprintf(bdf, n, "%.63s", de->d_name);
			ret = 0;
			break;
		}
	}
	closedir(d);
	return ret;
}

static int bound_to(const char *bdf, const char *drv)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/%s", drv, bdf);
	return access(path, F_OK) == 0;
}

TEST(claimed_bar)
{
	volatile uint32_t *m;
	struct oms_info info;
	struct t_pci p;
	char bdf[64];
	int fd, i;

	if (find_e1000(&p, bdf, sizeof(bdf)))
		SKIP(return, "no e1000 device in this guest");
	if (!bound_to(bdf, "e1000") && system("modprobe e1000 2>/dev/null"))
		SKIP(return, "no e1000 driver");
	for (i = 0; i < 50 && !bound_to(bdf, "e1000"); i++)
		usleep(100000);
	ASSERT_TRUE(bound_to(bdf, "e1000"));
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	t_detach(fd);
	t_write_file(T_PARAM, "0");	/* the default */

	/* The kernel's own rule for the same BAR: sysfs mmap refused. */
	EXPECT_EQ(-EINVAL, t_sysfs_mmap(bdf, 0));
	/* a register BAR (not prefetchable): never write-combining */
	EXPECT_EQ(-EINVAL, t_attach_pci(fd, &p, 0, 0));
	EXPECT_EQ(-EBUSY, t_attach_pci(fd, &p, 0, OMS_ATTACH_UC));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);

	/* The administrator's override: attached beside the driver. */
	ASSERT_EQ(0, t_write_file(T_PARAM, "1"));
	EXPECT_EQ(0, t_attach_pci(fd, &p, 0, OMS_ATTACH_UC));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_PCI, info.kind);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_NE(MAP_FAILED, m);
	if (m != MAP_FAILED) {
		TH_LOG("e1000 STATUS register: 0x%08x", m[2]);
		munmap((void *)m, 4096);
	}
	EXPECT_EQ(0, t_detach(fd));
	ASSERT_EQ(0, t_write_file(T_PARAM, "0"));

	/* Unbound, the BAR is free: attached and claimed by oms, uncached
	 * only, as sysfs offers resource0 but no resource0_wc for it. */
	ASSERT_EQ(0, t_write_file("/sys/bus/pci/drivers/e1000/unbind", bdf));
	EXPECT_EQ(0, t_sysfs_mmap(bdf, 0));
	EXPECT_EQ(-EINVAL, t_attach_pci(fd, &p, 0, 0));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	EXPECT_EQ(0, t_attach_pci(fd, &p, 0, OMS_ATTACH_UC));
	EXPECT_EQ(-EINVAL, t_sysfs_mmap(bdf, 0)) TH_LOG("oms holds the region");
	EXPECT_EQ(0, t_detach(fd));
	EXPECT_EQ(0, t_write_file("/sys/bus/pci/drivers/e1000/bind", bdf));
	EXPECT_TRUE(bound_to(bdf, "e1000"));
	close(fd);
}

TEST_HARNESS_MAIN
