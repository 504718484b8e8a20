/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oms.h - internal interfaces of oms.ko.
 *
 * One global window, protected by oms.lock.  Every ioctl copies its user
 * data in before taking the lock and out after dropping it, so no user
 * memory is touched (and no page fault can recurse into oms_vm_fault())
 * while the lock is held.
 */
#ifndef OMS_H
#define OMS_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/types.h>

#include "../include/oms_uapi.h"

struct oms_window {
	u32 kind;			/* OMS_WINDOW_* */
	bool wc;			/* write-combining, else uncached */
	u64 len;			/* bytes */
	phys_addr_t phys;		/* physical start, for mmap */
	void __iomem *base;		/* kernel view, same memory type */
	u32 generation;			/* oms.generation at attach */
	/* PCI windows */
	struct pci_dev *pdev;		/* referenced with pci_dev_get() */
	int bar;
	/* emulated windows */
	void *pages;
};

struct oms_device {
	struct mutex lock;		/* protects everything below */
	struct oms_window win;
	struct list_head files;		/* struct oms_file, for zapping */
	u32 generation;
};

struct oms_file {
	struct list_head node;
	struct file *filp;
};

extern struct oms_device oms;

/* oms_window.c: attach/detach, called with oms.lock held. */
int oms_attach_pci(const struct oms_attach *a);
int oms_attach_emulated(const struct oms_attach *a);
void oms_detach(void);
void oms_fill_info(struct oms_info *info);
int oms_notifier_register(void);
void oms_notifier_unregister(void);

/* oms_mmap.c */
int oms_mmap(struct file *filp, struct vm_area_struct *vma);
void oms_zap_mappings(void);

/* oms_ioctl.c */
long oms_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

/* oms_store.c: *_prepare() without the lock, *_exec() with it. */
struct oms_store_req {
	struct oms_store_op *ops;
	u8 *data;			/* all op payloads, in op order */
	u32 count;
};

int oms_store_prepare(const struct oms_ordered_store *a,
		      struct oms_store_req *req);
int oms_store_exec(struct oms_ordered_store *a, struct oms_store_req *req);
void oms_store_release(struct oms_store_req *req);
int oms_doorbell_prepare(const struct oms_doorbell *a, u8 **wqe);
int oms_doorbell_exec(struct oms_doorbell *a, const u8 *wqe);
int oms_flush_check(const struct oms_flush *a);
int oms_flush_exec(struct oms_flush *a);
bool oms_range_ok(u64 offset, u64 len);

/* oms_bench.c */
int oms_bench_check(const struct oms_bench *a);
int oms_bench_exec(struct oms_bench *a);

#endif /* OMS_H */
