/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oms_drv.h - internal interfaces of oms.ko (the public header of liboms
 * is include/oms.h; this one is the driver's own).
 *
 * The module has one or more devices (struct oms_device, module parameter
 * devices=): /dev/oms, /dev/oms1, ...  Each has its own window, locks,
 * misc device, PCI notifier and address space; a file reaches its device
 * through the misc device it was opened on (container_of, at open) and no
 * code names a device by anything but the pointer it was handed.  The
 * functions below take a device as @od.
 *
 * The window is an object with its own lifetime (struct oms_window): one
 * per attach, reference counted, found from its device (od->win, under
 * od->win_lock), from a VMA (vm_private_data) or held by a running call.
 * Detach takes the device's pointer away, marks the window gone, zaps the
 * user mappings and waits for the calls that use it, then releases the BAR
 * or the pages; the struct itself goes with its last reference.
 *
 * Every open file of a device, whichever device node it was opened
 * through, shares one address space: that of an inode of the device's own
 * (oms_mapping.c), as vfio does, so one unmap_mapping_range() zaps every
 * user mapping of that device and of no other.
 *
 * Locks of one device, outermost first (a PCI device's own lock comes
 * before them all, oms_lock.c; no call holds the locks of two oms
 * devices); none of them is held while user memory is touched, so a page
 * fault on the window never recurses into one:
 *   od->lock        attach and detach (and the PCI notifier), killable
 *   w->use          read: a store, doorbell, flush or bench on the window;
 *                   write: detach releasing what the window maps
 *   w->map_lock     a fault inserting a page against detach marking the
 *                   window gone, held briefly
 *   od->win_lock    spinlock: od->win and od->generation
 * A benchmark holds only w->use for reading, so open, release, INFO and
 * page faults never wait behind it; detach makes it stop at its next chunk.
 */
#ifndef OMS_DRV_H
#define OMS_DRV_H

#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "../include/oms_uapi.h"

/* A page-aligned byte range of a window that is never handed out. */
struct oms_hole {
	u64 start;
	u64 end;			/* exclusive */
};

struct oms_window {
	struct kref ref;		/* the device, each VMA, each call */
	struct rw_semaphore use;	/* see above */
	struct mutex map_lock;		/* faults against ->gone */
	bool gone;			/* detached: no new fault or call */
	u32 kind;			/* OMS_WINDOW_* */
	bool wc;			/* write-combining, else uncached */
	u64 len;			/* bytes */
	phys_addr_t phys;		/* physical start, for mmap */
	void __iomem *base;		/* kernel view, same memory type */
	u32 generation;			/* its device's generation at attach */
	/* PCI windows */
	struct pci_dev *pdev;		/* referenced with pci_dev_get() */
	int bar;
	bool claimed;			/* we hold pci_request_region() */
	/*
	 * The pages of the BAR that hold the device's MSI-X table and PBA:
	 * never mapped, never written or read by an ioctl (oms_window.c).
	 */
	struct oms_hole hole[OMS_INFO_MAX_HOLES];
	u32 holes;
};

/*
 * The emulated window's pages: allocated once, kept until unload.
 * UNKNOWN: a type change failed part way; write-back must be set again.
 */
enum oms_emu_type { OMS_EMU_WB, OMS_EMU_WC, OMS_EMU_UC, OMS_EMU_UNKNOWN };

struct oms_device {
	struct mutex lock;		/* attach and detach */
	spinlock_t win_lock;		/* protects win and generation */
	struct oms_window *win;		/* the attached window, or NULL */
	u32 generation;
	struct inode *inode;		/* its i_mapping: every open file's */
	void *emu_pages;		/* OMS_EMU_MAX_LEN bytes, under lock */
	enum oms_emu_type emu_type;
	struct miscdevice misc;		/* /dev/oms, /dev/oms1, ... */
	struct notifier_block pci_nb;	/* detach when the device goes */
	char name[16];			/* misc.name */
};

/*
 * An open file: its device, and the window it is bound to (the generation
 * it was attached with; 0 until the file first meets a window).  A file
 * bound to one window never reaches another (ESTALE): see
 * oms_window_get_bound().
 */
struct oms_file {
	struct oms_device *od;		/* set at open, never changed */
	u32 generation;			/* cmpxchg()ed from 0 once */
};

static inline struct oms_device *oms_file_device(struct file *filp)
{
	struct oms_file *f = filp->private_data;

	return f->od;
}

/* oms_window.c: the module's devices, so that one BAR is one window */
void oms_window_devices(struct oms_device *devs, uint n);

/* oms_lock.c: a PCI device's lock, then od->lock */
int oms_lock(struct oms_device *od, struct pci_dev *pdev, bool wait);
void oms_unlock(struct oms_device *od, struct pci_dev *pdev);
int oms_lock_window(struct oms_device *od, struct pci_dev **pdev, bool wait);

/* oms_window.c: attach/detach under oms_lock() */
struct pci_dev *oms_attach_pci_find(const struct oms_attach *a);
int oms_attach_pci(struct oms_device *od, const struct oms_attach *a,
		   struct pci_dev *pdev);
int oms_attach_emulated(struct oms_device *od, const struct oms_attach *a);
int oms_detach(struct oms_device *od);
void oms_emu_free(struct oms_device *od);
void oms_fill_info(struct file *filp, struct oms_info *info);
struct oms_window *oms_window_get(struct oms_device *od);
struct oms_window *oms_window_get_bound(struct file *filp);
void oms_file_bind(struct file *filp, u32 generation);
bool oms_file_stale(struct file *filp, u32 generation);
bool oms_window_in_hole(const struct oms_window *w, u64 offset, u64 len);
int oms_window_lockdown(const struct oms_window *w);
void oms_window_put(struct oms_window *w);
int oms_window_use(struct oms_window *w);
void oms_window_unuse(struct oms_window *w);
int oms_notifier_register(struct oms_device *od);
void oms_notifier_unregister(struct oms_device *od);

/* oms_mmap.c */
int oms_mmap(struct file *filp, struct vm_area_struct *vma);

/* oms_mapping.c: the address space of every open file of a device */
int oms_mapping_init(struct oms_device *od);
void oms_mapping_exit(struct oms_device *od);
void oms_mapping_attach(struct oms_device *od, struct file *filp);
void oms_zap_mappings(struct oms_device *od);

/* oms_ioctl.c */
long oms_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

/* oms_store.c: *_prepare() without a window, *_exec() while using one. */
struct oms_store_req {
	struct oms_store_op *ops;
	u8 *data;			/* all op payloads, in op order */
	u32 count;
};

int oms_store_prepare(const struct oms_ordered_store *a,
		      struct oms_store_req *req);
int oms_store_exec(struct oms_window *w, struct oms_ordered_store *a,
		   struct oms_store_req *req);
void oms_store_release(struct oms_store_req *req);
int oms_doorbell_prepare(const struct oms_doorbell *a, u8 **wqe);
int oms_doorbell_exec(struct oms_window *w, struct oms_doorbell *a,
		      const u8 *wqe);
int oms_flush_check(const struct oms_flush *a);
int oms_flush_exec(struct oms_window *w, struct oms_flush *a);
int oms_range_check(const struct oms_window *w, u64 offset, u64 len);

/* oms_bench.c */
int oms_bench_check(const struct oms_bench *a);
int oms_bench_exec(struct oms_window *w, struct oms_bench *a);

#endif /* OMS_DRV_H */
