/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oms_compat.h - every kernel version difference of oms.ko, in one place.
 *
 * oms.ko builds against the Debian 12 kernels, 6.1 and 6.12.  The rest of
 * the module is written for the newer API; this header supplies it on the
 * older kernel.  Each test names the kernel version that made the change.
 * When 6.1 support goes, delete the branches for the older kernels.
 * KERNEL_VERSION() comes first in the tests: checkpatch wants the
 * constant, LINUX_VERSION_CODE, on the right.
 */
#ifndef OMS_COMPAT_H
#define OMS_COMPAT_H

#include <linux/mm.h>
#include <linux/lockdep.h>
#include <linux/version.h>

/*
 * 6.12: <asm/unaligned.h> moved to <linux/unaligned.h> (the asm/ header
 * is gone).  get_unaligned() and friends are unchanged.
 */
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.3: vma->vm_flags became read-only; it is changed with vm_flags_set()
 * and vm_flags_clear().  From 6.4 these also write-lock the VMA (per-VMA
 * locks), asserting that the mmap lock is held for writing, as it is in
 * ->mmap().  Before 6.3 the mmap lock alone covers the flags: below is
 * what those helpers were in 6.3, the assertion and the plain update.  The
 * assertion is lockdep's: mmap_assert_write_locked() calls dump_mm() under
 * CONFIG_DEBUG_VM, which 6.1 does not export (the debug guest kernel
 * refused to load a module using it).
 */
#if KERNEL_VERSION(6, 3, 0) > LINUX_VERSION_CODE
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	lockdep_assert_held_write(&vma->vm_mm->mmap_lock);
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	lockdep_assert_held_write(&vma->vm_mm->mmap_lock);
	vma->vm_flags &= ~flags;
}
#endif

#endif /* OMS_COMPAT_H */
