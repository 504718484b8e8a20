/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oms_window_fixture.h - the fixture most guest tests share: /dev/oms open
 * with a window attached, once emulated and once on the ivshmem BAR (skipped
 * when the guest has no ivshmem device).  Include after oms_guest.h.
 */
#ifndef OMS_WINDOW_FIXTURE_H
#define OMS_WINDOW_FIXTURE_H

FIXTURE(win) {
	int fd;
};

FIXTURE_VARIANT(win) {
	int pci;
};

FIXTURE_VARIANT_ADD(win, emulated) { .pci = 0 };
FIXTURE_VARIANT_ADD(win, pci) { .pci = 1 };

FIXTURE_SETUP(win)
{
	int ret;

	self->fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, self->fd);
	ret = t_setup_window(self->fd, variant->pci);
	if (ret == -ENODEV)
		SKIP(return, "no ivshmem device");
	ASSERT_EQ(0, ret);
}

FIXTURE_TEARDOWN(win)
{
	close(self->fd);
}

#endif
