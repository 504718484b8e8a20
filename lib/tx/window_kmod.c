// SPDX-License-Identifier: MIT
/*
 * The oms.ko window as a transmit window: the module maps a PCI BAR (or
 * its emulated kernel pages) write-combining into user space; chunks are
 * stored straight into it.  In the QEMU guest the BAR is ivshmem's, whose
 * backing file on the host is what the emulated NIC reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "oms_uapi.h"
#include "tx/tx_priv.h"

static void tx_kmod_fini(struct oms_tx_window *w)
{
	if (w->map_len)
		munmap(w->base, w->map_len);
	close(w->fd);
}

OMS_TX_EXPORT int oms_tx_window_kmod(const char *dev,
				     struct oms_tx_window **out)
{
	struct oms_tx_window *w;
	struct oms_info info;
	int fd, err;
	void *p;

	if (!out)
		return -EINVAL;
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
	if (info.length > SIZE_MAX) {
		err = -EINVAL;
		goto err_fd;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		err = -ENOMEM;
		goto err_fd;
	}
	p = mmap(NULL, (size_t)info.length, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto err_w;
	}
	w->base = p;
	w->len = (size_t)info.length;
	w->map_len = w->len;
	w->kind = OMS_TX_WIN_KMOD;
	w->fd = fd;
	w->fini = tx_kmod_fini;
	*out = w;
	return 0;

err_w:
	free(w);
err_fd:
	close(fd);
	return err;
}
