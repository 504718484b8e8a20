// SPDX-License-Identifier: GPL-2.0
/*
 * detach_live.c - tearing the window down under live users is safe:
 * detach with a live mapping (later access: SIGBUS, also after a new
 * attach; mappings through any open file and any node of the device),
 * attach beside a bound driver and unbind it, remove the PCI
 * device with a live mapping, and rmmod with an open fd and a mapping
 * (refused until both are gone, then the module unloads and reloads).
 * Runs last in the guest: it reloads oms.ko and removes/rescans the device.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"
#include "oms_guest.h"
#include "oms_window_fixture.h"

TEST_F(win, detach_with_live_mapping)
{
	volatile uint32_t *m, *m2;
	struct oms_info info;
	uint32_t v = 0;

	m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m);
	m[16] = 0xc0ffee01;
	ASSERT_EQ(0, t_flush(self->fd, T_SCRATCH_LIVE + 64, &v));
	EXPECT_EQ(0xc0ffee01, v);
	EXPECT_EQ(0, t_touch_sigbus(&m[16], 0));

	ASSERT_EQ(0, t_detach(self->fd));
	ASSERT_EQ(0, t_info(self->fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	EXPECT_EQ(1, t_touch_sigbus(&m[16], 0));
	EXPECT_EQ(1, t_touch_sigbus(&m[1000], 1));

	/* A new window does not revive the old mapping. */
	ASSERT_EQ(0, t_setup_window(self->fd, variant->pci));
	EXPECT_EQ(1, t_touch_sigbus(&m[16], 0));
	m2 = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m2);
	EXPECT_EQ(0, t_touch_sigbus(&m2[16], 0));
	m2[17] = 0xc0ffee02;
	ASSERT_EQ(0, t_flush(self->fd, T_SCRATCH_LIVE + 68, &v));
	EXPECT_EQ(0xc0ffee02, v);
	munmap((void *)m2, 65536);
	munmap((void *)m, 65536);
}

/* Another fd's mapping is zapped too. */
TEST_F(win, detach_zaps_other_files)
{
	int fd2 = open(T_DEV, O_RDWR);
	volatile uint32_t *m;

	ASSERT_LE(0, fd2);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd2, T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, t_touch_sigbus(m, 0));
	close(fd2);		/* the mapping keeps the file */
	ASSERT_EQ(0, t_detach(self->fd));
	EXPECT_EQ(1, t_touch_sigbus(m, 0));
	munmap((void *)m, 4096);
}

/*
 * Detach zaps each address space that open files use once: the files of
 * one device node share one (files without mappings come and go around
 * the mapped ones, so its count goes up and down), and a second node of
 * the same device (its own inode) has its own.  Every mapping of either
 * is gone after the detach.
 */
TEST_F(win, detach_zaps_every_node)
{
	static const char alias[] = "/run/oms-alias";
	volatile uint32_t *m[8];
	int fds[8];
	struct stat st;

	ASSERT_EQ(0, stat(T_DEV, &st));
	unlink(alias);
	ASSERT_EQ(0, mknod(alias, S_IFCHR | 0600, st.st_rdev));
	for (int i = 0; i < 8; i++) {
		fds[i] = open(i % 2 ? alias : T_DEV, O_RDWR);
		ASSERT_LE(0, fds[i]);
		m[i] = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fds[i],
			    T_SCRATCH_LIVE);
		ASSERT_NE(MAP_FAILED, m[i]);
		(void)m[i][0];	/* faulted in here: only a zap removes it */
		EXPECT_EQ(0, t_touch_sigbus(m[i], 0));
	}
	for (int j = 0; j < 16; j++) {
		int f = open(j % 2 ? alias : T_DEV, O_RDWR);

		ASSERT_LE(0, f);
		close(f);
	}
	for (int i = 0; i < 8; i++)
		close(fds[i]);	/* the mappings keep their files */
	ASSERT_EQ(0, t_detach(self->fd));
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(1, t_touch_sigbus(m[i], 0)) TH_LOG("mapping %d", i);
		munmap((void *)m[i], 4096);
	}
	unlink(alias);
}

/* Attach beside a bound driver (uio_pci_generic), then unbind it. */
TEST(unbind_with_live_mapping)
{
	const char *drv = "/sys/bus/pci/drivers/uio_pci_generic";
	char bdf[32], path[256];
	volatile uint32_t *m;
	struct oms_info info;
	struct t_pci p;
	int fd;

	if (t_find_ivshmem(&p))
		SKIP(return, "no ivshmem device");
	/* Built in (the debug kernel) or a module (Debian's). */
	if (access(drv, F_OK) && system("modprobe uio_pci_generic 2>/dev/null"))
		SKIP(return, "uio_pci_generic not available");
	t_bdf_str(&p, bdf, sizeof(bdf));
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	t_detach(fd);
	snprintf(path, sizeof(path), "%s/new_id", drv);
	ASSERT_EQ(0, t_write_file(path, "1af4 1110"));
	snprintf(path, sizeof(path), "%s/%s", drv, bdf);
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("%s not bound", bdf);

	/* The driver keeps the device; the window does not claim it. */
	ASSERT_EQ(0, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0, t_touch_sigbus(m, 1));

	snprintf(path, sizeof(path), "%s/remove_id", drv);
	t_write_file(path, "1af4 1110");
	snprintf(path, sizeof(path), "%s/unbind", drv);
	ASSERT_EQ(0, t_write_file(path, bdf));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	EXPECT_EQ(1, t_touch_sigbus(m, 0));
	munmap((void *)m, 4096);
	/* The device is still there and can be attached again. */
	EXPECT_EQ(0, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	close(fd);
}

/* PCI removal with a live mapping detaches; rescan brings it back. */
TEST(remove_with_live_mapping)
{
	char bdf[32], path[256];
	volatile uint32_t *m;
	struct oms_info info;
	uint32_t marker = 0x5eed1e55, v = 0;
	struct t_pci p;
	int fd, i;

	if (t_find_ivshmem(&p))
		SKIP(return, "no ivshmem device");
	t_bdf_str(&p, bdf, sizeof(bdf));
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 1));
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m);
	m[1024 + 7] = marker;
	ASSERT_EQ(0, t_flush(fd, T_SCRATCH_LIVE + 4096 + 28, &v));
	EXPECT_EQ(marker, v);

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", bdf);
	ASSERT_EQ(0, t_write_file(path, "1"));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	EXPECT_EQ(1, t_touch_sigbus(&m[1024 + 7], 0));
	EXPECT_EQ(-ENODEV, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));

	ASSERT_EQ(0, t_write_file("/sys/bus/pci/rescan", "1"));
	for (i = 0; i < 50 && t_find_ivshmem(&p); i++)
		usleep(100000);
	ASSERT_EQ(0, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	EXPECT_EQ(1, t_touch_sigbus(&m[1024 + 7], 0));
	/* Same BAR memory behind the re-enumerated device. */
	ASSERT_EQ(0, t_flush(fd, T_SCRATCH_LIVE + 4096 + 28, &v));
	EXPECT_EQ(marker, v);
	munmap((void *)m, 8192);
	close(fd);
}

/* rmmod is refused while an fd or a mapping lives, then succeeds. */
TEST(rmmod_with_open_fd_and_mapping)
{
	const char *ko = getenv("OMS_KO");
	const char *params = getenv("OMS_LOAD_PARAMS");
	struct oms_info info;
	void *m;
	int fd, kfd, i;

	if (!ko)
		SKIP(return, "OMS_KO not set");
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m);

	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "oms", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_EMULATED, info.kind);

	close(fd);	/* the mapping still holds the file */
	errno = 0;
	EXPECT_EQ(-1, syscall(SYS_delete_module, "oms", O_NONBLOCK));
	EXPECT_EQ(EWOULDBLOCK, errno);
	EXPECT_EQ(0, t_touch_sigbus(m, 1));

	munmap(m, 4096);
	ASSERT_EQ(0, syscall(SYS_delete_module, "oms", O_NONBLOCK));
	EXPECT_NE(0, access(T_DEV, F_OK));

	kfd = open(ko, O_RDONLY);
	ASSERT_LE(0, kfd);
	ASSERT_EQ(0, syscall(SYS_finit_module, kfd, params ? params : "", 0));
	close(kfd);
	for (i = 0; i < 50 && access(T_DEV, F_OK); i++)
		usleep(100000);
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(params && *params ? OMS_WINDOW_PCI : OMS_WINDOW_EMULATED,
		  info.kind);
	EXPECT_EQ(1, info.generation);
	close(fd);
}

TEST_HARNESS_MAIN
