// SPDX-License-Identifier: GPL-2.0
/*
 * oms_mmap.c - map the window into user space.
 *
 * Pages are inserted at fault time under oms.lock, never at mmap() time:
 * a fault checks that the window the VMA was created for (its generation)
 * is still attached, so after a detach, unbind or rmmod has zapped the
 * mappings a later access gets SIGBUS instead of reaching a released BAR or
 * freed pages, even for a VMA that was being set up while the detach ran.
 */
#include <linux/mm.h>

#include "oms.h"

static vm_fault_t oms_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	u32 generation = (unsigned long)vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	unsigned long pfn;

	mutex_lock(&oms.lock);
	if (oms.win.kind == OMS_WINDOW_NONE ||
	    oms.win.generation != generation)
		goto out;
	if (vmf->pgoff >= (oms.win.len >> PAGE_SHIFT))
		goto out;
	pfn = PHYS_PFN(oms.win.phys) + vmf->pgoff;
	ret = vmf_insert_pfn_prot(vma, vmf->address, pfn, vma->vm_page_prot);
out:
	mutex_unlock(&oms.lock);
	return ret;
}

static const struct vm_operations_struct oms_vm_ops = {
	.fault = oms_vm_fault,
};

int oms_mmap(struct file *filp, struct vm_area_struct *vma)
{
	unsigned long pages = vma_pages(vma);
	u64 win_pages;
	int ret = 0;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	mutex_lock(&oms.lock);
	if (oms.win.kind == OMS_WINDOW_NONE) {
		ret = -ENODEV;
		goto out;
	}
	win_pages = oms.win.len >> PAGE_SHIFT;
	if (vma->vm_pgoff >= win_pages || pages > win_pages - vma->vm_pgoff) {
		ret = -EINVAL;
		goto out;
	}
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_page_prot = oms.win.wc ?
		pgprot_writecombine(vma->vm_page_prot) :
		pgprot_noncached(vma->vm_page_prot);
	vma->vm_private_data = (void *)(unsigned long)oms.win.generation;
	vma->vm_ops = &oms_vm_ops;
out:
	mutex_unlock(&oms.lock);
	return ret;
}

/* Zap every user mapping of every open file.  Called with oms.lock held. */
void oms_zap_mappings(void)
{
	struct oms_file *of;

	list_for_each_entry(of, &oms.files, node)
		unmap_mapping_range(of->filp->f_mapping, 0, 0, 1);
}
