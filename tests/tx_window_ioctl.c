// SPDX-License-Identifier: MIT
/*
 * oms_tx_window_kmod_ioctl() on bad input, on a host without oms.ko: every
 * refusal is the errno of the step that failed, *out is left alone and no
 * descriptor stays open.  The window's stores themselves need the module
 * and a BAR: tests/tx-guest runs them in the guest on both paths.
 */
#include <dirent.h>
#include <errno.h>

#include "harness.h"
#include "oms_tx.h"

/* Descriptors this process holds (the directory's own one included). */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void expect_refused(struct __test_metadata *_metadata,
			   const char *dev, int want)
{
	struct oms_tx_window *sentinel = (struct oms_tx_window *)0x1;
	struct oms_tx_window *w = sentinel;
	int before = open_fds();

	ASSERT_LT(0, before);
	EXPECT_EQ(want, oms_tx_window_kmod_ioctl(dev, &w)) {
		TH_LOG("device %s", dev);
	}
	EXPECT_EQ(sentinel, w);
	EXPECT_EQ(before, open_fds());
}

TEST(null_out_is_einval)
{
	EXPECT_EQ(-EINVAL, oms_tx_window_kmod_ioctl(NULL, NULL));
	EXPECT_EQ(-EINVAL, oms_tx_window_kmod_ioctl("/dev/null", NULL));
}

TEST(missing_device_is_enoent)
{
	expect_refused(_metadata, "/nonexistent/oms", -ENOENT);
}

TEST(a_file_that_is_not_oms_is_enotty)
{
	/* the open works; OMS_IOC_INFO is what tells it is not the module */
	expect_refused(_metadata, "/dev/null", -ENOTTY);
	expect_refused(_metadata, "/dev/zero", -ENOTTY);
}

TEST(a_directory_is_refused_at_open)
{
	expect_refused(_metadata, "/", -EISDIR);
}

TEST(close_of_null_is_harmless)
{
	oms_tx_window_close(NULL);
}

TEST_HARNESS_MAIN
