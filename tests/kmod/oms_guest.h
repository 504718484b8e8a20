/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oms_guest.h - helpers of the oms.ko kselftests (guest side only).
 * Tests include harness.h (tests/, the kselftest harness) first, then this file.
 */
#ifndef OMS_GUEST_H
#define OMS_GUEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oms_test.h"

#define T_DEV "/dev/" OMS_DEVICE_NAME

struct t_pci {
	unsigned int domain, bus, slot, func;
};

static inline unsigned long t_sysfs_hex(const char *dir, const char *name)
{
	char path[512];
	unsigned long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return ~0ul;
	if (fscanf(f, "%lx", &v) != 1)
		v = ~0ul;
	fclose(f);
	return v;
}

static inline int t_parse_bdf(const char *s, struct t_pci *p)
{
	return sscanf(s, "%x:%x:%x.%x", &p->domain, &p->bus, &p->slot,
		      &p->func) == 4 ? 0 : -1;
}

/* Write @s to the sysfs (or other) file @path: 0 or -errno. */
static inline int t_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -errno;
}

/*
 * A read-only mmap of BAR @bar of PCI device @bdf through sysfs (what the
 * kernel's own rules allow): 0 or -errno.
 */
static inline int t_sysfs_mmap(const char *bdf, int bar)
{
	char path[256];
	void *m;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d",
		 bdf, bar);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		ret = -errno;
	else
		munmap(m, 4096);
	close(fd);
	return ret;
}

static inline int t_pci_cmp(const struct t_pci *a, const struct t_pci *b)
{
	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->bus != b->bus)
		return a->bus < b->bus ? -1 : 1;
	if (a->slot != b->slot)
		return a->slot < b->slot ? -1 : 1;
	return a->func == b->func ? 0 : a->func < b->func ? -1 : 1;
}

/*
 * The ivshmem device of rank @n by address (0: the lowest, the one the
 * guest loads the module on), or -1 when the guest has fewer.
 */
static inline int t_find_ivshmem_n(struct t_pci *p, int n)
{
	struct t_pci found[8], q, tmp;
	struct dirent *de;
	DIR *d = opendir("/sys/bus/pci/devices");
	int k = 0, i, j;

	if (!d)
		return -1;
	while ((de = readdir(d)) && k < 8) {
		if (de->d_name[0] == '.')
			continue;
		if (t_sysfs_hex(de->d_name, "vendor") == T_IVSHMEM_VENDOR &&
		    t_sysfs_hex(de->d_name, "device") == T_IVSHMEM_DEVICE &&
		    !t_parse_bdf(de->d_name, &q))
			found[k++] = q;
	}
	closedir(d);
	/* sysfs lists devices in no particular order */
	for (i = 0; i < k; i++)
		for (j = i + 1; j < k; j++)
			if (t_pci_cmp(&found[j], &found[i]) < 0) {
				tmp = found[i];
				found[i] = found[j];
				found[j] = tmp;
			}
	if (n >= k)
		return -1;
	*p = found[n];
	return 0;
}

/* The ivshmem device (the lowest address), or -1 when the guest has none. */
static inline int t_find_ivshmem(struct t_pci *p)
{
	return t_find_ivshmem_n(p, 0);
}

/* A device with an I/O port BAR (flags bit 0x100 in sysfs "resource"). */
static inline int t_find_io_bar(struct t_pci *p, int *bar)
{
	struct dirent *de;
	DIR *d = opendir("/sys/bus/pci/devices");
	char path[512];
	int ret = -1;

	if (!d)
		return -1;
	while (ret && (de = readdir(d))) {
		unsigned long long s, e, fl;
		FILE *f;
		int i;

		if (de->d_name[0] == '.' || t_parse_bdf(de->d_name, p))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		for (i = 0; i < 6 && fscanf(f, "%llx %llx %llx", &s, &e, &fl) == 3; i++) {
			if ((fl & 0x100) && e > s) {
				*bar = i;
				ret = 0;
				break;
			}
		}
		fclose(f);
	}
	closedir(d);
	return ret;
}

static inline int t_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int t_info(int fd, struct oms_info *info)
{
	memset(info, 0, sizeof(*info));
	return t_ioctl(fd, OMS_IOC_INFO, info);
}

static inline int t_detach(int fd)
{
	return ioctl(fd, OMS_IOC_DETACH) ? -errno : 0;
}

static inline int t_attach_emulated(int fd, uint64_t len, uint32_t flags)
{
	struct oms_attach a = { .flags = OMS_ATTACH_EMULATED | flags,
				.length = len };

	return t_ioctl(fd, OMS_IOC_ATTACH, &a);
}

static inline int t_attach_pci(int fd, const struct t_pci *p, int bar,
			       uint32_t flags)
{
	struct oms_attach a = { .flags = flags, .domain = p->domain,
				.bus = p->bus, .slot = p->slot,
				.func = p->func, .bar = bar };

	return t_ioctl(fd, OMS_IOC_ATTACH, &a);
}

/*
 * Put the window in the state a test wants: the ivshmem BAR (pci != 0) or
 * an emulated window of T_BAR_SIZE bytes.  Returns 0, -ENODEV if there is
 * no ivshmem device, or another -errno.
 */
static inline int t_setup_window(int fd, int pci)
{
	struct t_pci p;
	int ret = t_detach(fd);

	if (ret && ret != -ENODEV)
		return ret;
	if (!pci)
		return t_attach_emulated(fd, T_BAR_SIZE, 0);
	if (t_find_ivshmem(&p))
		return -ENODEV;
	return t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0);
}

static inline int t_store1(int fd, uint64_t off, const void *buf, uint32_t len,
			   uint32_t class, uint32_t flags)
{
	struct oms_store_op op = { .offset = off, .length = len,
				   .cls = class,
				   .buf = (uintptr_t)buf };
	struct oms_ordered_store s = { .flags = flags, .count = 1,
				       .ops = (uintptr_t)&op };

	return t_ioctl(fd, OMS_IOC_ORDERED_STORE, &s);
}

static inline int t_flush(int fd, uint64_t off, uint32_t *value)
{
	struct oms_flush f = { .offset = off };
	int ret = t_ioctl(fd, OMS_IOC_FLUSH, &f);

	if (value)
		*value = f.value;
	return ret;
}

/* Read the window back through an uncached-enough path: a fresh mapping. */
static inline int t_read_window(int fd, uint64_t off, void *buf, size_t len)
{
	uint64_t pg = off & ~4095ull;
	size_t maplen = (off - pg + len + 4095) & ~4095ul;
	void *m = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, pg);

	if (m == MAP_FAILED)
		return -errno;
	memcpy(buf, (char *)m + (off - pg), len);
	munmap(m, maplen);
	return 0;
}

/*
 * Touch *@p (a write if @write) in a child: 1 if the child died of SIGBUS,
 * 0 if the access went through, -1 if the child could not be run.
 */
static inline int t_touch_sigbus(volatile uint32_t *p, int write)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (write)
			*p = 1;
		else
			(void)*p;
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS;
}

/* "dddd:bb:ss.f" of @p into @s. */
static inline void t_bdf_str(const struct t_pci *p, char *s, size_t n)
{
	snprintf(s, n, "%04x:%02x:%02x.%x", p->domain, p->bus, p->slot,
		 p->func);
}

/* Bytes [@off, @off + @len) of the config space of @bdf: 0 or -1. */
static inline int t_config_read(const char *bdf, unsigned int off, void *buf,
				size_t len)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.64s/config", bdf);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ret = pread(fd, buf, len, off) == (ssize_t)len ? 0 : -1;
	close(fd);
	return ret;
}

/* Where a device keeps its MSI-X table and pending-bit array. */
struct t_msix {
	unsigned int entries;
	int enabled;
	int table_bar, pba_bar;
	uint32_t table_off, pba_off;
};

/* The MSI-X capability of @bdf: 0, or -1 if it has none. */
static inline int t_msix_find(const char *bdf, struct t_msix *x)
{
	uint8_t cfg[256];
	unsigned int pos, hops = 0;
	uint32_t table, pba;
	uint16_t ctrl;

	if (t_config_read(bdf, 0, cfg, sizeof(cfg)) || !(cfg[6] & 0x10))
		return -1;	/* no capability list */
	for (pos = cfg[0x34] & ~3u; pos >= 0x40 && hops < 48;
	     pos = cfg[pos + 1] & ~3u, hops++) {
		if (cfg[pos] != 0x11)	/* PCI_CAP_ID_MSIX */
			continue;
		memcpy(&ctrl, &cfg[pos + 2], 2);
		memcpy(&table, &cfg[pos + 4], 4);
		memcpy(&pba, &cfg[pos + 8], 4);
		x->entries = (ctrl & 0x7ff) + 1;
		x->enabled = !!(ctrl & 0x8000);
		x->table_bar = table & 7;
		x->table_off = table & ~7u;
		x->pba_bar = pba & 7;
		x->pba_off = pba & ~7u;
		return 0;
	}
	return -1;
}

/* Length of BAR @bar of @bdf from sysfs "resource", 0 if unimplemented. */
static inline uint64_t t_bar_len(const char *bdf, int bar)
{
	unsigned long long s, e, fl;
	char path[256];
	uint64_t len = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%.64s/resource",
		 bdf);
	f = fopen(path, "r");
	if (!f)
		return 0;
	for (i = 0; i <= bar && fscanf(f, "%llx %llx %llx", &s, &e, &fl) == 3; i++)
		if (i == bar && e > s)
			len = e - s + 1;
	fclose(f);
	return len;
}

#endif /* OMS_GUEST_H */
