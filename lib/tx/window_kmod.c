// SPDX-License-Identifier: MIT
/*
 * The oms.ko window as a transmit window: the module maps a PCI BAR (or
 * its emulated kernel pages) write-combining into user space; chunks are
 * stored straight into it.  In the QEMU guest the BAR is ivshmem's, whose
 * backing file on the host is what the transmit receiver reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "oms_uapi.h"
#include "tx/tx_priv.h"

int tx_window_kmod_open(const char *dev, uint64_t align, int *fd_out,
			size_t *len_out)
{
	struct oms_info info;
	int fd, err;

	fd = open(dev ? dev : "/dev/" OMS_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (ioctl(fd, OMS_IOC_INFO, &info)) {
		err = -errno;
		goto err_fd;
	}
	if (info.kind == OMS_WINDOW_NONE || !info.length) {
		err = -ENODEV;
		goto err_fd;
	}
	/*
	 * A transmit ring covers the whole window: one with holes (a BAR that
	 * also holds the device's MSI-X table) would fault in them.
	 */
	if (info.holes) {
		err = -EACCES;
		goto err_fd;
	}
	if (info.length > SIZE_MAX || info.length % align) {
		err = -EINVAL;
		goto err_fd;
	}
	*fd_out = fd;
	*len_out = (size_t)info.length;
	return 0;

err_fd:
	close(fd);
	return err;
}

OMS_EXPORT int oms_tx_window_kmod(const char *dev,
				  struct oms_tx_window **out)
{
	size_t len;
	int fd, err;

	if (!out)
		return -EINVAL;
	err = tx_window_kmod_open(dev, 1, &fd, &len);
	if (err)
		return err;
	return tx_window_map_fd(fd, len, PROT_READ | PROT_WRITE,
				OMS_TX_WIN_KMOD, out);
}
