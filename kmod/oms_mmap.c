// SPDX-License-Identifier: GPL-2.0
/*
 * oms_mmap.c - map the window into user space.
 *
 * A VMA holds a reference to the window it was created for
 * (vm_private_data), taken at mmap() and by ->open() on a split or fork,
 * dropped by ->close().  Pages are inserted at fault time, never at mmap()
 * time, under the window's map_lock: a fault on a window that detach has
 * marked gone gets SIGBUS, so after a detach, unbind or rmmod has zapped
 * the mappings no access reaches a released BAR or freed pages, even from
 * a VMA that was being set up while the detach ran.  A page of a hole (the
 * device's MSI-X table or PBA) is never inserted: touching it raises
 * SIGBUS.  A fault never waits for another window's users or for a
 * running benchmark.
 */
#include <linux/mm.h>

#include "oms_drv.h"
#include "oms_compat.h"

static vm_fault_t oms_vm_fault(struct vm_fault *vmf)
{
	struct oms_window *w = vmf->vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	unsigned long pfn;

	mutex_lock(&w->map_lock);
	if (w->gone || vmf->pgoff >= (w->len >> PAGE_SHIFT) ||
	    oms_window_in_hole(w, (u64)vmf->pgoff << PAGE_SHIFT, PAGE_SIZE))
		goto out;
	pfn = PHYS_PFN(w->phys) + vmf->pgoff;
	ret = vmf_insert_pfn_prot(vmf->vma, vmf->address, pfn,
				  vmf->vma->vm_page_prot);
out:
	mutex_unlock(&w->map_lock);
	return ret;
}

static void oms_vm_open(struct vm_area_struct *vma)
{
	struct oms_window *w = vma->vm_private_data;

	kref_get(&w->ref);
}

static void oms_vm_close(struct vm_area_struct *vma)
{
	oms_window_put(vma->vm_private_data);
}

static const struct vm_operations_struct oms_vm_ops = {
	.open = oms_vm_open,
	.close = oms_vm_close,
	.fault = oms_vm_fault,
};

int oms_mmap(struct file *filp, struct vm_area_struct *vma)
{
	unsigned long pages = vma_pages(vma);
	struct oms_window *w;
	u64 win_pages;
	int ret;

	/*
	 * MAP_SHARED only; a read-only file's shared mapping carries
	 * VM_MAYSHARE without VM_SHARED.  Writable needs a writable file (the
	 * VFS refuses it first, EACCES; this is the module's own check).  The
	 * window is never executable: no PROT_EXEC now, no mprotect() later.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if ((vma->vm_flags & VM_WRITE) && !(filp->f_mode & FMODE_WRITE))
		return -EACCES;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	w = oms_window_get_bound(filp);
	if (IS_ERR(w))
		return PTR_ERR(w);
	ret = oms_window_lockdown(w);
	if (ret)
		goto err_put;
	win_pages = w->len >> PAGE_SHIFT;
	/* a BAR smaller than a page may start inside one: not mappable */
	if (!PAGE_ALIGNED(w->phys) || vma->vm_pgoff >= win_pages ||
	    pages > win_pages - vma->vm_pgoff) {
		ret = -EINVAL;
		goto err_put;
	}
	/* ->mmap() runs with the mmap lock held for writing. */
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vm_flags_clear(vma, VM_MAYEXEC);
	if (!(filp->f_mode & FMODE_WRITE))
		vm_flags_clear(vma, VM_MAYWRITE);
	vma->vm_page_prot = w->wc ? pgprot_writecombine(vma->vm_page_prot) :
				    pgprot_noncached(vma->vm_page_prot);
	vma->vm_private_data = w;	/* the reference goes with the VMA */
	vma->vm_ops = &oms_vm_ops;
	return 0;

err_put:
	oms_window_put(w);
	return ret;
}
