// SPDX-License-Identifier: GPL-2.0
/*
 * lockdown.c - under lockdown (integrity) no PCI BAR reaches user space:
 * ATTACH of a BAR, mmap of and stores to a BAR attached before the lockdown
 * all give EPERM, like the BAR's sysfs resource mmap; DETACH and emulated
 * windows still work.  Raises the lockdown of the running guest kernel
 * (one way), so the guest script runs it last, with oms.ko loaded on the
 * ivshmem BAR.
 */
#include "harness.h"
#include "oms_guest.h"

#define T_LOCKDOWN "/sys/kernel/security/lockdown"

TEST(pci_refused_under_lockdown)
{
	uint64_t v = 0x10cdd0e10cdd0e1ull;
	struct oms_info info;
	struct t_pci p;
	char bdf[32];
	void *m;
	int fd, lfd;

	if (access(T_LOCKDOWN, F_OK))
		system("mount -t securityfs securityfs /sys/kernel/security 2>/dev/null");
	if (access(T_LOCKDOWN, W_OK))
		SKIP(return, "no lockdown LSM");
	if (t_find_ivshmem(&p))
		SKIP(return, "no ivshmem device");
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 1));
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m);
	munmap(m, 4096);

	lfd = open(T_LOCKDOWN, O_WRONLY);
	ASSERT_LE(0, lfd);
	ASSERT_EQ(9, write(lfd, "integrity", 9));
	close(lfd);
	/* The kernel's own rule: the sysfs BAR mmap is refused now. */
	snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%x", p.domain, p.bus,
		 p.slot, p.func);
	EXPECT_EQ(-EPERM, t_sysfs_mmap(bdf, T_IVSHMEM_BAR));

	/* The window attached before: no mapping, no stores. */
	errno = 0;
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
				   T_SCRATCH_LIVE));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(-EPERM, t_store1(fd, T_SCRATCH_LIVE, &v, 8,
				   OMS_STORE_STRONG, 0));
	EXPECT_EQ(0, t_detach(fd));

	/* No new PCI window, not even with allow_claimed. */
	EXPECT_EQ(-EPERM, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	system("echo 1 > /sys/module/oms/parameters/allow_claimed");
	EXPECT_EQ(-EPERM, t_attach_pci(fd, &p, T_IVSHMEM_BAR, OMS_ATTACH_UC));
	system("echo 0 > /sys/module/oms/parameters/allow_claimed");
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);

	/* Kernel pages are not a PCI BAR: the emulated window works. */
	ASSERT_EQ(0, t_attach_emulated(fd, 65536, 0));
	EXPECT_EQ(0, t_store1(fd, 0, &v, 8, OMS_STORE_STRONG, 0));
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(v, *(volatile uint64_t *)m);
	munmap(m, 4096);
	close(fd);
}

TEST_HARNESS_MAIN
