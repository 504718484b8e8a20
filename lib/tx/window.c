// SPDX-License-Identifier: MIT
/*
 * Transmit windows in memory: anonymous process memory and shared file
 * mappings (a /dev/shm file, or an ivshmem BAR's backing file seen from
 * the host).  The oms.ko and ConnectX windows live in their own files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tx/tx_priv.h"

#define TX_PAGE 4096u

void tx_window_unmap(struct oms_tx_window *w)
{
	if (w->map_len)
		munmap(w->base, w->map_len);
	if (w->fd >= 0)
		close(w->fd);
}

int tx_window_mapped(struct oms_tx_window *w, void *base, size_t len,
		     int kind, int fd, struct oms_tx_window **out)
{
	w->base = base;
	w->len = len;
	w->map_len = len;
	w->kind = kind;
	w->fd = fd;
	w->fini = tx_window_unmap;
	*out = w;
	return 0;
}

OMS_EXPORT int oms_tx_window_mem(size_t len, struct oms_tx_window **out)
{
	struct oms_tx_window *w;
	void *p;

	if (!out || !len || len % TX_PAGE)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED) {
		free(w);
		return -ENOMEM;
	}
	return tx_window_mapped(w, p, len, OMS_TX_WIN_MEM, -1, out);
}

OMS_EXPORT int oms_tx_window_file(const char *path, size_t len,
				  unsigned flags,
				  struct oms_tx_window **out)
{
	int oflags, prot, fd, err;
	struct stat stt;

	if (!path || !out || (flags & ~(OMS_TX_FILE_CREATE | OMS_TX_FILE_RDONLY)) ||
	    len % TX_PAGE ||
	    ((flags & OMS_TX_FILE_CREATE) &&
	     ((flags & OMS_TX_FILE_RDONLY) || !len)))
		return -EINVAL;
	oflags = (flags & OMS_TX_FILE_RDONLY) ? O_RDONLY : O_RDWR;
	if (flags & OMS_TX_FILE_CREATE)
		oflags |= O_CREAT | O_TRUNC;
	fd = open(path, oflags | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if ((flags & OMS_TX_FILE_CREATE) && ftruncate(fd, (off_t)len)) {
		err = -errno;
		goto err_fd;
	}
	if (fstat(fd, &stt)) {
		err = -errno;
		goto err_fd;
	}
	if (!len)
		len = (size_t)stt.st_size & ~(size_t)(TX_PAGE - 1);
	if (!len || (uint64_t)stt.st_size < len) {
		err = -EINVAL;
		goto err_fd;
	}
	prot = PROT_READ | ((flags & OMS_TX_FILE_RDONLY) ? 0 : PROT_WRITE);
	err = tx_window_map_fd(fd, len, prot, OMS_TX_WIN_FILE, out);
	if (!err)
		(*out)->rdonly = !!(flags & OMS_TX_FILE_RDONLY);
	return err;

err_fd:
	close(fd);
	return err;
}

/* Map @len bytes of @fd shared as a window of @kind; @fd is the window's
 * now (closed with it, or at once on failure). */
int tx_window_map_fd(int fd, size_t len, int prot, int kind,
		     struct oms_tx_window **out)
{
	struct oms_tx_window *w = calloc(1, sizeof(*w));
	void *p;
	int err;

	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		free(w);
		close(fd);
		return err;
	}
	return tx_window_mapped(w, p, len, kind, fd, out);
}

OMS_EXPORT void oms_tx_window_close(struct oms_tx_window *w)
{
	if (!w)
		return;
	if (w->fini)
		w->fini(w);
	free(w);
}

OMS_EXPORT void *oms_tx_window_base(const struct oms_tx_window *w)
{
	return w ? w->base : NULL;
}

OMS_EXPORT size_t oms_tx_window_len(const struct oms_tx_window *w)
{
	return w ? w->len : 0;
}

OMS_EXPORT int oms_tx_window_kind(const struct oms_tx_window *w)
{
	return w ? w->kind : -EINVAL;
}
