// SPDX-License-Identifier: GPL-2.0
/*
 * oms_window.c - attach and detach the window: a PCI memory BAR or
 * emulated kernel pages, both mapped write-combining (or uncached) in the
 * kernel, and a PCI bus notifier that detaches when the device goes away.
 *
 * A PCI window gives user space the BAR, so it follows the rules of the
 * kernel's own sysfs resource mmap (pci_mmap_resource()): nothing while
 * the kernel is locked down for PCI access, nothing that a driver marked
 * exclusive, and under strict devmem (CONFIG_IO_STRICT_DEVMEM) nothing
 * that a driver claimed busy -- unless the administrator set allow_claimed.
 * Write-combining only for a prefetchable BAR, as sysfs offers resourceN_wc
 * only for those: a register BAR may have read side effects and must see
 * its stores as issued.  An unclaimed BAR is claimed with
 * pci_request_region() while attached, so no driver takes it meanwhile.
 * The device gets a reference, an enable count and a runtime PM reference
 * (so neither it nor the bridge above it powers down under the window),
 * and the BAR is mapped with ioremap_wc().  The pages holding the
 * device's MSI-X table and PBA are holes of the window: a user who could
 * write them could make the device DMA anywhere (oms_msix_holes()).  On x86, PAT gives a range one
 * memory type: if another mapping of the BAR holds uncached-minus,
 * ioremap_wc() takes that type silently, so INFO's OMS_INFO_WC says what
 * was asked (docs/kmod.md).  Attach and detach run with the oms device's
 * lock held, and for a PCI window first the PCI device's lock (oms_lock.c
 * says why).  A BAR is the window of one oms device at a time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/ioport.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <asm/set_memory.h>

#include "oms_drv.h"

static bool allow_claimed;
module_param(allow_claimed, bool, 0644);
MODULE_PARM_DESC(allow_claimed,
		 "attach a BAR that its driver claimed (busy), under strict devmem (default off; never overrides lockdown or an exclusive claim)");

/* Under lockdown no user-directed access to a PCI BAR (0 or -EPERM). */
int oms_window_lockdown(const struct oms_window *w)
{
	if (w->kind != OMS_WINDOW_PCI)
		return 0;
	return security_locked_down(LOCKDOWN_PCI_ACCESS);
}

static void oms_window_free(struct kref *ref)
{
	kfree(container_of(ref, struct oms_window, ref));
}

/* The window attached to @od, with a reference, or NULL. */
struct oms_window *oms_window_get(struct oms_device *od)
{
	struct oms_window *w;

	spin_lock(&od->win_lock);
	w = od->win;
	if (w)
		kref_get(&w->ref);
	spin_unlock(&od->win_lock);
	return w;
}

void oms_window_put(struct oms_window *w)
{
	kref_put(&w->ref, oms_window_free);
}

/* Bind @filp to window @generation if it is bound to none yet. */
void oms_file_bind(struct file *filp, u32 generation)
{
	struct oms_file *f = filp->private_data;

	cmpxchg(&f->generation, 0, generation);
}

/* Is @filp bound to a window other than @generation? */
bool oms_file_stale(struct file *filp, u32 generation)
{
	struct oms_file *f = filp->private_data;
	u32 bound = READ_ONCE(f->generation);

	return bound && bound != generation;
}

/*
 * oms_window_get_bound() - the window attached to @filp's device, with a
 * reference, if it is the one @filp is bound to (binding a file that is
 * bound to none): ERR_PTR(-ENODEV) without a window, ERR_PTR(-ESTALE) for
 * another one.
 */
struct oms_window *oms_window_get_bound(struct file *filp)
{
	struct oms_window *w = oms_window_get(oms_file_device(filp));

	if (!w)
		return ERR_PTR(-ENODEV);
	oms_file_bind(filp, w->generation);
	if (oms_file_stale(filp, w->generation)) {
		oms_window_put(w);
		return ERR_PTR(-ESTALE);
	}
	return w;
}

/* Does [@offset, @offset + @len) touch a hole of @w?  @len > 0. */
bool oms_window_in_hole(const struct oms_window *w, u64 offset, u64 len)
{
	u32 i;

	for (i = 0; i < w->holes; i++)
		if (offset < w->hole[i].end && offset + len > w->hole[i].start)
			return true;
	return false;
}

/*
 * oms_window_use() - start a call that touches the window's memory: -EINTR
 * on a fatal signal while a detach is waiting, -ENODEV once it is detached.
 * Ended by oms_window_unuse().
 */
int oms_window_use(struct oms_window *w)
{
	if (down_read_killable(&w->use))
		return -EINTR;
	if (READ_ONCE(w->gone)) {
		up_read(&w->use);
		return -ENODEV;
	}
	return 0;
}

void oms_window_unuse(struct oms_window *w)
{
	up_read(&w->use);
}

/*
 * The module's devices, made by oms_main.c and handed over here before
 * any of them can attach: an attach looks at the others' windows.
 */
static struct oms_device *oms_all_devs;
static uint oms_all_n;

void oms_window_devices(struct oms_device *devs, uint n)
{
	oms_all_devs = devs;
	oms_all_n = n;
}

/*
 * Is BAR @bar of @pdev the window of a device?  Called by an attach of
 * that BAR, which holds @pdev's device lock, as every attach of it does:
 * no other device can attach it before the caller publishes its window.
 */
static bool oms_bar_attached(struct pci_dev *pdev, int bar)
{
	struct oms_window *w;
	bool found = false;
	uint i;

	device_lock_assert(&pdev->dev);
	for (i = 0; i < oms_all_n && !found; i++) {
		spin_lock(&oms_all_devs[i].win_lock);
		w = oms_all_devs[i].win;
		found = w && w->kind == OMS_WINDOW_PCI && w->pdev == pdev &&
			w->bar == bar;
		spin_unlock(&oms_all_devs[i].win_lock);
	}
	return found;
}

static struct oms_window *oms_window_alloc(void)
{
	struct oms_window *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w)
		return NULL;
	kref_init(&w->ref);
	init_rwsem(&w->use);
	mutex_init(&w->map_lock);
	return w;
}

/* Publish @w as @od's window; the device owns its first reference. */
static void oms_window_publish(struct oms_device *od, struct oms_window *w,
			       void __iomem *base, phys_addr_t phys, u64 len,
			       bool wc, u32 kind)
{
	w->base = base;
	w->phys = phys;
	w->len = len;
	w->wc = wc;
	w->kind = kind;
	spin_lock(&od->win_lock);
	/* 0 means "no window" to a file's binding: skipped when it wraps */
	if (!++od->generation)
		++od->generation;
	w->generation = od->generation;
	od->win = w;
	spin_unlock(&od->win_lock);
}

static int oms_note_busy(struct resource *res, void *arg)
{
	unsigned long *flags = arg;

	*flags |= res->flags;
	return 0;
}

/*
 * oms_bar_claim() - claim BAR @bar of @pdev for the window, or decide that
 * it may be attached while another user holds it.  Returns 1 if claimed
 * (release with pci_release_region()), 0 if attached beside its claimer,
 * or -EBUSY.
 */
static int oms_bar_claim(struct pci_dev *pdev, int bar)
{
	resource_size_t start = pci_resource_start(pdev, bar);
	unsigned long busy = 0;

	if (!pci_request_region(pdev, bar, KBUILD_MODNAME))
		return 1;

	/* Someone holds a part of it: what iomem_is_exclusive() would say. */
	walk_iomem_res_desc(IORES_DESC_NONE, IORESOURCE_MEM | IORESOURCE_BUSY,
			    start, pci_resource_end(pdev, bar), &busy,
			    oms_note_busy);
	if (!(busy & IORESOURCE_BUSY)) {
		/* not a driver's claim: nothing says it may be shared */
		pci_info(pdev, "BAR %d cannot be claimed: refused\n", bar);
		return -EBUSY;
	}
	if (busy & IORESOURCE_EXCLUSIVE) {
		pci_info(pdev, "BAR %d is claimed exclusively by %s: refused\n",
			 bar, dev_driver_string(&pdev->dev));
		return -EBUSY;
	}
	if (!IS_ENABLED(CONFIG_IO_STRICT_DEVMEM))
		return 0;
	if (!allow_claimed) {
		pci_info(pdev, "BAR %d is claimed by %s: refused (unbind it, or see allow_claimed)\n",
			 bar, dev_driver_string(&pdev->dev));
		return -EBUSY;
	}
	pci_notice(pdev, "BAR %d is claimed by %s: attached anyway (allow_claimed=1)\n",
		   bar, dev_driver_string(&pdev->dev));
	return 0;
}

/* Add the pages of [@off, @off + @len) of the BAR to @w's holes. */
static void oms_hole_add(struct oms_window *w, u64 off, u64 len, u64 bar_len)
{
	u64 start = round_down(off, PAGE_SIZE);
	u64 end = min_t(u64, round_up(off + len, PAGE_SIZE),
			round_up(bar_len, PAGE_SIZE));
	u32 i;

	if (start >= end)
		return;
	for (i = 0; i < w->holes; i++) {
		/* the table and the PBA often share a page */
		if (start <= w->hole[i].end && end >= w->hole[i].start) {
			w->hole[i].start = min(w->hole[i].start, start);
			w->hole[i].end = max(w->hole[i].end, end);
			return;
		}
	}
	w->hole[w->holes].start = start;
	w->hole[w->holes].end = end;
	w->holes++;
}

/*
 * oms_msix_holes() - make holes of the pages of BAR @bar that hold the
 * device's MSI-X table or pending-bit array.  An MSI-X table entry is an
 * address and a value the device writes to raise an interrupt: whoever
 * can write the table can make the device write anywhere in memory, so
 * vfio-pci keeps these pages out of user mappings, and so does the
 * window, whether or not a driver has enabled MSI-X and whatever
 * allow_claimed says.  Returns -EACCES if the whole BAR is holes.
 */
static int oms_msix_holes(struct oms_window *w, struct pci_dev *pdev, int bar,
			  u64 bar_len)
{
	/* pdev->msix_cap is set only where the kernel has CONFIG_PCI_MSI */
	u8 cap = pci_find_capability(pdev, PCI_CAP_ID_MSIX);
	u32 table, pba, n;
	u16 ctrl;

	if (!cap)
		return 0;
	pci_read_config_word(pdev, cap + PCI_MSIX_FLAGS, &ctrl);
	pci_read_config_dword(pdev, cap + PCI_MSIX_TABLE, &table);
	pci_read_config_dword(pdev, cap + PCI_MSIX_PBA, &pba);
	n = (ctrl & PCI_MSIX_FLAGS_QSIZE) + 1;
	if ((table & PCI_MSIX_TABLE_BIR) == bar)
		oms_hole_add(w, table & PCI_MSIX_TABLE_OFFSET,
			     (u64)n * PCI_MSIX_ENTRY_SIZE, bar_len);
	if ((pba & PCI_MSIX_PBA_BIR) == bar)
		oms_hole_add(w, pba & PCI_MSIX_PBA_OFFSET,
			     DIV_ROUND_UP(n, 64) * 8, bar_len);
	if (w->holes == 1 && !w->hole[0].start &&
	    w->hole[0].end >= bar_len) {
		pci_info(pdev, "BAR %d holds only the MSI-X table and PBA: refused\n",
			 bar);
		return -EACCES;
	}
	return 0;
}

/*
 * Undo the enable count of attach, unless it is already gone: a write of 0
 * to the device's sysfs "enable" (allowed while no driver is bound, and
 * the module is not the device's driver) takes the count the module held,
 * and disabling again would underflow it.  enable_store() checks and
 * disables under the device lock: so does this (oms_lock.c).
 */
static void oms_pci_disable(struct pci_dev *pdev)
{
	device_lock_assert(&pdev->dev);
	if (pci_is_enabled(pdev))
		pci_disable_device(pdev);
	else
		pci_notice_ratelimited(pdev, "was disabled through sysfs under the window: not disabled again\n");
}

/*
 * oms_attach_pci_find() - the device an attach names, with a reference:
 * ERR_PTR(-EINVAL) for a field out of range, ERR_PTR(-ENODEV) for none.
 */
struct pci_dev *oms_attach_pci_find(const struct oms_attach *a)
{
	struct pci_dev *pdev;

	if (a->bar >= PCI_STD_NUM_BARS || a->slot > 0x1f || a->func > 7 ||
	    a->length)
		return ERR_PTR(-EINVAL);
	pdev = pci_get_domain_bus_and_slot(a->domain, a->bus,
					   PCI_DEVFN(a->slot, a->func));
	return pdev ? pdev : ERR_PTR(-ENODEV);
}

/*
 * oms_attach_pci() - attach BAR a->bar of @pdev (from
 * oms_attach_pci_find()) to @od, with the PCI device's lock and od->lock
 * held.  The window takes a reference of its own.  The PCI device's lock
 * also keeps another oms device from attaching the same BAR meanwhile.
 */
int oms_attach_pci(struct oms_device *od, const struct oms_attach *a,
		   struct pci_dev *pdev)
{
	bool wc = !(a->flags & OMS_ATTACH_UC);
	struct oms_window *w;
	void __iomem *base;
	unsigned long flags;
	resource_size_t start, len;
	int ret;

	lockdep_assert_held(&od->lock);
	device_lock_assert(&pdev->dev);
	if (od->win)
		return -EBUSY;
	ret = security_locked_down(LOCKDOWN_PCI_ACCESS);
	if (ret)
		return ret;

	flags = pci_resource_flags(pdev, a->bar);
	start = pci_resource_start(pdev, a->bar);
	len = pci_resource_len(pdev, a->bar);
	if (flags & IORESOURCE_IO)
		return -EOPNOTSUPP;
	if (!len || !(flags & IORESOURCE_MEM) || (flags & IORESOURCE_UNSET))
		return -ENODATA;
	if (wc && !(flags & IORESOURCE_PREFETCH))
		return -EINVAL;
	if (oms_bar_attached(pdev, a->bar))
		return -EBUSY;

	w = oms_window_alloc();
	if (!w)
		return -ENOMEM;

	ret = oms_msix_holes(w, pdev, a->bar, len);
	if (ret)
		goto err_free;

	/* powered up for as long as the window is attached */
	ret = pm_runtime_resume_and_get(&pdev->dev);
	if (ret)
		goto err_free;

	ret = pci_enable_device_mem(pdev);
	if (ret)
		goto err_pm;

	ret = oms_bar_claim(pdev, a->bar);
	if (ret < 0)
		goto err_disable;
	w->claimed = ret;

	base = wc ? ioremap_wc(start, len) : ioremap(start, len);
	if (!base) {
		ret = -EIO;
		goto err_release;
	}

	w->pdev = pci_dev_get(pdev);
	w->bar = a->bar;
	oms_window_publish(od, w, base, start, len, wc, OMS_WINDOW_PCI);
	pci_info_ratelimited(pdev, "attached BAR %d (%pR) %s\n", a->bar,
			     &pdev->resource[a->bar],
			     wc ? "write-combining" : "uncached");
	return 0;

err_release:
	if (w->claimed)
		pci_release_region(pdev, a->bar);
err_disable:
	oms_pci_disable(pdev);
err_pm:
	pm_runtime_put(&pdev->dev);
err_free:
	kfree(w);
	return ret;
}

static int oms_pages_set_type(void *va, u64 len, enum oms_emu_type type)
{
#ifdef CONFIG_X86
	unsigned long addr = (unsigned long)va;
	int n = len >> PAGE_SHIFT;

	switch (type) {
	case OMS_EMU_WC:
		return set_memory_wc(addr, n);
	case OMS_EMU_UC:
		return set_memory_uc(addr, n);
	case OMS_EMU_WB:
		return set_memory_wb(addr, n);
	case OMS_EMU_UNKNOWN:
		break;
	}
#endif
	return 0;
}

/*
 * oms_emu_backing() - the pages of @od's emulated window, of memory type
 * @type.
 *
 * Changing the memory type of kernel pages splits the large pages of the
 * kernel's direct map that cover them, and nothing merges them again.  So
 * the pages are allocated once (OMS_EMU_MAX_LEN bytes, at the first
 * emulated attach) and kept until the module unloads: attach and detach
 * cycles only switch the type of the same, already split, range.  Called
 * with od->lock held.
 */
static void *oms_emu_backing(struct oms_device *od, enum oms_emu_type type)
{
	if (!od->emu_pages) {
		od->emu_pages = alloc_pages_exact(OMS_EMU_MAX_LEN, GFP_KERNEL);
		if (!od->emu_pages)
			return ERR_PTR(-ENOMEM);
		od->emu_type = OMS_EMU_WB;
	}
	if (od->emu_type != type) {
		/*
		 * PAT takes a new type only on write-back RAM.  A change that
		 * fails may have changed some pages: the type is then not
		 * known, and only write-back set again makes it known.
		 */
		if (od->emu_type != OMS_EMU_WB) {
			od->emu_type = OMS_EMU_UNKNOWN;
			if (oms_pages_set_type(od->emu_pages, OMS_EMU_MAX_LEN,
					       OMS_EMU_WB))
				return ERR_PTR(-EIO);
			od->emu_type = OMS_EMU_WB;
		}
		od->emu_type = OMS_EMU_UNKNOWN;
		if (oms_pages_set_type(od->emu_pages, OMS_EMU_MAX_LEN, type))
			return ERR_PTR(-EIO);
		od->emu_type = type;
	}
	return od->emu_pages;
}

/* At unload, after the device's last detach. */
void oms_emu_free(struct oms_device *od)
{
	if (!od->emu_pages)
		return;
	if (od->emu_type != OMS_EMU_WB &&
	    oms_pages_set_type(od->emu_pages, OMS_EMU_MAX_LEN, OMS_EMU_WB)) {
		/*
		 * Pages that may still be WC or UC must not go back to the
		 * page allocator: keep them.
		 */
		pr_warn("emulated window pages not write-back again: %u KiB leaked\n",
			OMS_EMU_MAX_LEN >> 10);
		od->emu_pages = NULL;
		return;
	}
	free_pages_exact(od->emu_pages, OMS_EMU_MAX_LEN);
	od->emu_pages = NULL;
}

int oms_attach_emulated(struct oms_device *od, const struct oms_attach *a)
{
	bool wc = !(a->flags & OMS_ATTACH_UC);
	u64 len = a->length ? a->length : OMS_EMU_DEFAULT_LEN;
	struct oms_window *w;
	void *va;

	lockdep_assert_held(&od->lock);
	if (od->win)
		return -EBUSY;
	if (a->domain || a->bus || a->slot || a->func || a->bar ||
	    len > OMS_EMU_MAX_LEN || !PAGE_ALIGNED(len))
		return -EINVAL;
	/*
	 * Only x86 changes the pages' kernel mapping to the window's type;
	 * elsewhere a WC or UC user mapping would alias cacheable RAM.
	 */
	if (!IS_ENABLED(CONFIG_X86))
		return -EOPNOTSUPP;

	w = oms_window_alloc();
	if (!w)
		return -ENOMEM;
	va = oms_emu_backing(od, wc ? OMS_EMU_WC : OMS_EMU_UC);
	if (IS_ERR(va)) {
		kfree(w);
		return PTR_ERR(va);
	}
	/* A new window starts zeroed, as it did with fresh pages. */
	memset(va, 0, len);
	wmb();	/* the zeroes leave the WC buffers before the window is used */

	oms_window_publish(od, w, (void __force __iomem *)va, virt_to_phys(va),
			   len, wc, OMS_WINDOW_EMULATED);
	pr_info_ratelimited("attached an emulated window of %llu bytes %s\n",
			    len, wc ? "write-combining" : "uncached");
	return 0;
}

/*
 * oms_window_gone() - the mirror of attach, for a window no longer
 * published.  It is marked gone first, so a racing fault fails and a
 * running benchmark stops at its next chunk, then every user mapping is
 * zapped, then the calls still using it finish, then the kernel view and
 * the device are released.
 */
static void oms_window_gone(struct oms_device *od, struct oms_window *w)
{
	mutex_lock(&w->map_lock);
	WRITE_ONCE(w->gone, true);
	mutex_unlock(&w->map_lock);
	oms_zap_mappings(od);

	down_write(&w->use);
	if (w->kind == OMS_WINDOW_PCI) {
		iounmap(w->base);
		if (w->claimed)
			pci_release_region(w->pdev, w->bar);
		oms_pci_disable(w->pdev);
		pm_runtime_put(&w->pdev->dev);
		pci_info_ratelimited(w->pdev, "detached BAR %d\n", w->bar);
		pci_dev_put(w->pdev);
		w->pdev = NULL;
	} else {
		/* The pages stay with the device for the next attach. */
		pr_info_ratelimited("detached the emulated window\n");
	}
	w->base = NULL;
	up_write(&w->use);
}

/*
 * Detach @od's window: -ENODEV if there is none.  Called under
 * oms_lock_window() (or the notifier's locks).  Another device's window
 * and mappings are not touched.
 */
int oms_detach(struct oms_device *od)
{
	struct oms_window *w;

	lockdep_assert_held(&od->lock);
	spin_lock(&od->win_lock);
	w = od->win;
	od->win = NULL;
	spin_unlock(&od->win_lock);
	if (!w)
		return -ENODEV;

	oms_window_gone(od, w);
	oms_window_put(w);
	return 0;
}

void oms_fill_info(struct file *filp, struct oms_info *info)
{
	struct oms_device *od = oms_file_device(filp);
	const struct oms_window *w;
	u32 i;

	memset(info, 0, sizeof(*info));
	spin_lock(&od->win_lock);
	w = od->win;
	info->generation = od->generation;
	if (w) {
		oms_file_bind(filp, w->generation);
		info->kind = w->kind;
		info->length = w->len;
		info->flags = w->wc ? OMS_INFO_WC : 0;
		if (oms_file_stale(filp, w->generation))
			info->flags |= OMS_INFO_STALE;
		info->holes = w->holes;
		for (i = 0; i < w->holes; i++) {
			info->hole[i].pgoff = w->hole[i].start >> PAGE_SHIFT;
			info->hole[i].pages = (w->hole[i].end -
					       w->hole[i].start) >> PAGE_SHIFT;
		}
	}
	if (w && w->kind == OMS_WINDOW_PCI) {
		info->domain = pci_domain_nr(w->pdev->bus);
		info->bus = w->pdev->bus->number;
		info->slot = PCI_SLOT(w->pdev->devfn);
		info->func = PCI_FUNC(w->pdev->devfn);
		info->bar = w->bar;
	}
	spin_unlock(&od->win_lock);
}

/*
 * The device's driver is being unbound or the device removed: the BAR may
 * be disabled, reassigned or gone, so detach (zapping user mappings and
 * stopping a benchmark) before the driver core proceeds.  Each event is
 * taken twice, before and after: an ATTACH that found the device between
 * DEL_DEVICE and its removal from the bus list (or, beside a driver,
 * between UNBIND_DRIVER and the driver releasing its regions) is caught by
 * REMOVED_DEVICE (UNBOUND_DRIVER), before the BAR's resource is freed.
 */
static int oms_pci_notify(struct notifier_block *nb, unsigned long action,
			  void *data)
{
	struct oms_device *od = container_of(nb, struct oms_device, pci_nb);
	struct pci_dev *pdev = to_pci_dev(data);
	bool removal = action == BUS_NOTIFY_DEL_DEVICE ||
		       action == BUS_NOTIFY_REMOVED_DEVICE;
	bool ours;

	if (!removal && action != BUS_NOTIFY_UNBIND_DRIVER &&
	    action != BUS_NOTIFY_UNBOUND_DRIVER)
		return NOTIFY_DONE;

	/*
	 * The driver core holds the device lock around a driver's unbind, and
	 * an attach of this device waits for it; around a removal it does
	 * not, so the lock is taken here (before od->lock, as everywhere).
	 * A window attached after this look is caught by the second event.
	 */
	spin_lock(&od->win_lock);
	ours = od->win && od->win->kind == OMS_WINDOW_PCI &&
	       od->win->pdev == pdev;
	spin_unlock(&od->win_lock);
	if (!ours)
		return NOTIFY_DONE;

	if (removal)
		device_lock(&pdev->dev);
	mutex_lock(&od->lock);
	if (od->win && od->win->kind == OMS_WINDOW_PCI &&
	    od->win->pdev == pdev) {
		pci_info(pdev, "device going away (%s), detaching\n",
			 removal ? "removal" : "unbind");
		oms_detach(od);
	}
	mutex_unlock(&od->lock);
	if (removal)
		device_unlock(&pdev->dev);
	return NOTIFY_OK;
}

/* Each device has a notifier of its own, for its own window. */
int oms_notifier_register(struct oms_device *od)
{
	od->pci_nb.notifier_call = oms_pci_notify;
	return bus_register_notifier(&pci_bus_type, &od->pci_nb);
}

void oms_notifier_unregister(struct oms_device *od)
{
	bus_unregister_notifier(&pci_bus_type, &od->pci_nb);
}
