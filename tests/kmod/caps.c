// SPDX-License-Identifier: GPL-2.0
/*
 * caps.c - a caller without CAP_SYS_ADMIN cannot attach or detach (EPERM,
 * nothing changes) but may use an open descriptor; a caller without
 * CAP_SYS_RAWIO cannot attach a PCI BAR (as /proc/bus/pci refuses it a
 * BAR mapping) but may attach an emulated window; a caller without root
 * cannot open /dev/oms (mode 0600).
 */
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"
#include "oms_guest.h"

static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	d[cap / 32].permitted &= ~(1u << (cap % 32));
	d[cap / 32].inheritable &= ~(1u << (cap % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/* Runs in a child: the kselftest harness forks every test. */
TEST(no_cap_sys_admin)
{
	struct oms_info before, after;
	struct t_pci p = { 0 };
	uint64_t v = 0x5a5a5a5a5a5a5a5aull, back = 0;
	int fd = open(T_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	ASSERT_EQ(0, t_info(fd, &before));
	ASSERT_EQ(0, drop_cap(CAP_SYS_ADMIN));

	EXPECT_EQ(-EPERM, t_detach(fd));
	EXPECT_EQ(-EPERM, t_attach_emulated(fd, 0, 0));
	t_find_ivshmem(&p);
	EXPECT_EQ(-EPERM, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	/* EPERM comes before the argument is read. */
	EXPECT_EQ(-EPERM, t_ioctl(fd, OMS_IOC_ATTACH, NULL));
	ASSERT_EQ(0, t_info(fd, &after));
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(after)));

	/* The open descriptor still works for the data path. */
	EXPECT_EQ(0, t_store1(fd, T_SCRATCH_LIVE, &v, 8, OMS_STORE_STRONG, 0));
	EXPECT_EQ(0, t_read_window(fd, T_SCRATCH_LIVE, &back, 8));
	EXPECT_EQ(v, back);
	close(fd);
}

TEST(no_cap_sys_rawio)
{
	struct oms_info before, after;
	struct t_pci p;
	int fd = open(T_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	if (t_find_ivshmem(&p))
		SKIP(return, "no ivshmem device");
	t_detach(fd);
	ASSERT_EQ(0, t_info(fd, &before));
	ASSERT_EQ(0, drop_cap(CAP_SYS_RAWIO));

	EXPECT_EQ(-EPERM, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	EXPECT_EQ(-EPERM, t_attach_pci(fd, &p, T_IVSHMEM_BAR, OMS_ATTACH_UC));
	ASSERT_EQ(0, t_info(fd, &after));
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(after)));
	EXPECT_EQ(OMS_WINDOW_NONE, after.kind);

	/* kernel pages hand out no device: CAP_SYS_ADMIN is enough */
	EXPECT_EQ(0, t_attach_emulated(fd, 0, 0));
	EXPECT_EQ(0, t_detach(fd));
	close(fd);
}

TEST(nobody_cannot_open)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = open(T_DEV, O_RDWR);
		_exit(fd < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
