/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * oms_uapi.h - user interface of oms.ko, shared by the module and liboms.
 *
 * oms.ko exposes one "window" at a time per device; its devices are the
 * misc devices /dev/oms, /dev/oms1, ... (OMS_DEVICE_NAME, then the name
 * with the device's index: the module parameter devices= says how many,
 * at most OMS_MAX_DEVICES).  A window is
 * either a memory BAR of a PCI device (one that no driver claimed, unless
 * the administrator set the module parameter allow_claimed) or an emulated
 * window made of kernel pages.  Every call below acts on the window of the
 * device the file was opened on; the devices' windows, mappings and
 * bindings are independent: detaching one leaves the others as they are.
 * The window is
 * mmap()ed write-combining (or uncached, OMS_ATTACH_UC) and written through
 * the ioctls below with exactly the barriers each ordering class needs.
 *
 * Every struct has a fixed layout for 32- and 64-bit callers: __u32/__u64
 * fields only, explicit padding, user pointers carried in __u64.  Every
 * "flags" field accepts only the documented bits and every reserved field
 * must be zero, otherwise the call fails with EINVAL and changes nothing.
 *
 * Errors common to every ioctl:
 *   ENOTTY  unknown command number (wrong magic or number).
 *   EINVAL  known command number with the wrong size or direction encoded
 *           (a struct of the wrong size), unknown flag, reserved field != 0.
 *   EFAULT  an argument or user buffer pointer is NULL, unmapped or not
 *           readable/writable.
 *   ENODEV  the call needs a window and none is attached.
 *   EBADF   the file is not open for writing: ATTACH, DETACH,
 *           ORDERED_STORE, DOORBELL and MMIO_BENCH need FMODE_WRITE
 *           (checked before anything else but the command number); INFO
 *           and FLUSH do not.
 *   EPERM   the window is a PCI BAR and the kernel is locked down
 *           (LOCKDOWN_PCI_ACCESS), also for a BAR attached before.
 *   EINTR   a fatal signal arrived while the call waited (for a detach in
 *           progress, or for another attach or detach).
 *   ESTALE  the file is bound to a window that was detached (see
 *           OMS_IOC_INFO): the data ioctls and mmap() of another window.
 *   EACCES  a range of a data ioctl touches a hole of the window: the
 *           device's MSI-X table or pending-bit array (see OMS_IOC_INFO).
 * A failing call never changes the window or its contents: ORDERED_STORE
 * validates the whole vector before it writes anything.  One exception:
 * EFAULT from writing the results back (the argument's memory unmapped or
 * made read-only by another thread during the call) comes after the
 * operation was done.
 *
 * mmap(): the offset must be page aligned, and offset and length (rounded
 * up to pages) lie inside the window; a window that does not start on a
 * page boundary (a BAR smaller than a page) cannot be mapped; a page of
 * a hole (OMS_IOC_INFO) raises SIGBUS when touched
 * (EINVAL otherwise, ENODEV without a window, ESTALE for a file bound to
 * a window that was detached); the mapping must be
 * MAP_SHARED (EINVAL for MAP_PRIVATE).  PROT_WRITE needs a file open for
 * writing (EACCES, from the VFS); PROT_EXEC is refused (EPERM) and cannot
 * be added by mprotect() (EACCES); a PCI BAR under lockdown gives EPERM.  Pages are mapped write-combining,
 * or uncached when the window was attached with OMS_ATTACH_UC.  Detach,
 * unbind or removal of the PCI device and rmmod zap every mapping: a later
 * access raises SIGBUS, it never reaches a released resource.
 */
#ifndef OMS_UAPI_H
#define OMS_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#include "oms_order.h"	/* OMS_STORE_*: the numbering liboms uses too */

#define OMS_DEVICE_NAME		"oms"	/* the first device; then oms1, ... */
#define OMS_MAX_DEVICES		8
#define OMS_IOC_MAGIC		0xB8

/* Limits enforced by the module (part of the ABI). */
#define OMS_STORE_MAX_OPS	256		/* ops in one ORDERED_STORE */
#define OMS_STORE_MAX_BYTES	(1U << 20)	/* bytes in one ORDERED_STORE */
#define OMS_STORE_ALIGN		8		/* offset/length granule */
#define OMS_BF_SIZE		256		/* BlueFlame register bytes */
#define OMS_BF_CHUNK		64		/* BlueFlame copy chunk */
#define OMS_EMU_DEFAULT_LEN	(1U << 20)	/* emulated window default */
#define OMS_EMU_MAX_LEN		(4U << 20)	/* emulated window maximum */
#define OMS_BENCH_MIN_MSG	64
#define OMS_BENCH_MAX_MSG	8192
#define OMS_BENCH_MAX_TOTAL	(1ULL << 32)	/* bytes in one MMIO_BENCH */

/* Window kinds reported by INFO. */
#define OMS_WINDOW_NONE		0
#define OMS_WINDOW_EMULATED	1
#define OMS_WINDOW_PCI		2

/*
 * OMS_IOC_ATTACH - attach a window (needs CAP_SYS_ADMIN and a file open
 * for writing).
 *
 * Without OMS_ATTACH_EMULATED: the memory BAR @bar of the PCI device
 * @domain:@bus:@slot.@func; the window length is the BAR length.  oms.ko
 * binds no driver.  A BAR that no driver claimed is claimed by oms.ko
 * (pci_request_region()) while attached.  A BAR that a driver claimed is
 * refused under strict devmem, as its sysfs resource mmap is, unless the
 * administrator set the module parameter allow_claimed; an exclusive claim
 * is always refused.
 * With OMS_ATTACH_EMULATED: @length bytes of kernel pages (0 means
 * OMS_EMU_DEFAULT_LEN; else a multiple of the page size up to
 * OMS_EMU_MAX_LEN); @domain, @bus, @slot, @func and @bar must be zero.
 * OMS_ATTACH_UC maps the window uncached instead of write-combining, in the
 * kernel and in every mmap().
 *
 * A PCI BAR also needs CAP_SYS_RAWIO, as the kernel's /proc/bus/pci mmap
 * of a BAR does: attaching hands the BAR to every user of the device file.
 *
 * Errors: EBADF (read-only file), EPERM (no CAP_SYS_ADMIN, no
 * CAP_SYS_RAWIO for a PCI BAR, or a PCI BAR while the kernel is locked
 * down), EACCES (every page of the BAR holds the MSI-X table or PBA),
 * EBUSY (a window is attached to this device, the BAR is the window of
 * another device, or the BAR is claimed by a driver), ENODEV
 * (no such PCI device), EINVAL (@bar > 5, @slot > 31, @func > 7, @length
 * set for a PCI window, bad emulated length), ENODATA (the BAR is
 * unimplemented: zero length, e.g. the upper half of a 64-bit BAR),
 * EOPNOTSUPP (an I/O port BAR; an emulated window outside x86), ENOMEM,
 * EIO (the BAR cannot be mapped), or the error of pci_enable_device_mem()
 * or of resuming a device that cannot be enabled or resumed.
 * Write-combining (no OMS_ATTACH_UC) needs a prefetchable BAR, as sysfs
 * resourceN_wc does: a register BAR gives EINVAL.  A BAR whose
 * claim fails while no driver holds it gives EBUSY.  OMS_INFO_WC says what
 * was asked: x86 PAT may give the range the type another mapping holds.
 */
#define OMS_ATTACH_EMULATED	(1U << 0)
#define OMS_ATTACH_UC		(1U << 1)
#define OMS_ATTACH_FLAGS	(OMS_ATTACH_EMULATED | OMS_ATTACH_UC)

struct oms_attach {
	__u32 flags;
	__u32 domain;
	__u8 bus;
	__u8 slot;
	__u8 func;
	__u8 bar;
	__u32 reserved0;	/* must be zero */
	__u64 length;		/* emulated windows only */
	__u64 reserved[2];	/* must be zero */
};

/*
 * OMS_IOC_DETACH - detach the device's window (needs CAP_SYS_ADMIN and a
 * file open for writing): zap every user mapping of it, stop a running
 * MMIO_BENCH on it, wait
 * for the calls using the window, unmap the kernel view, release the BAR
 * and the device reference.
 * Errors: EBADF, EPERM, ENODEV (nothing attached), EINTR.
 */

/*
 * OMS_IOC_INFO - describe the window.  Never fails with a window or
 * without one (then @kind is OMS_WINDOW_NONE and the rest is zero).
 *
 * @generation names the attached window: it counts the device's attaches
 * since load (never 0).  A file is bound to one window: the one attached
 * when it was opened, else the first one it meets (INFO, mmap() or a data
 * ioctl), and the file that attaches a window is bound to it.  A file
 * bound to a window that was detached gets ESTALE from mmap() and the data
 * ioctls, whatever is attached now, and INFO sets OMS_INFO_STALE: open the
 * device again to use the new window.
 *
 * @hole lists, in pages (sysconf(_SC_PAGESIZE)), the parts of a PCI BAR
 * that hold the device's MSI-X table or pending-bit array (@holes entries,
 * at most OMS_INFO_MAX_HOLES).  A device's MSI-X table tells it where to
 * write for an interrupt: whoever writes it can make the device DMA
 * anywhere.  So, as vfio-pci does, the window never hands those pages out:
 * a mapping that covers them raises SIGBUS there, and an ioctl whose range
 * touches them fails with EACCES.  A BAR that is all holes cannot be
 * attached (EACCES).
 */
#define OMS_INFO_WC		(1U << 0)	/* mapped write-combining */
#define OMS_INFO_STALE		(1U << 1)	/* this file's window is gone */
#define OMS_INFO_MAX_HOLES	2

struct oms_info_hole {
	__u32 pgoff;		/* first page */
	__u32 pages;
};

struct oms_info {
	__u32 kind;		/* OMS_WINDOW_* */
	__u32 flags;		/* OMS_INFO_* */
	__u64 length;		/* bytes */
	__u32 domain;		/* PCI windows: the device and BAR */
	__u8 bus;
	__u8 slot;
	__u8 func;
	__u8 bar;
	__u32 generation;
	__u32 holes;		/* entries of @hole in use */
	struct oms_info_hole hole[OMS_INFO_MAX_HOLES];
	__u64 reserved;
};

/*
 * OMS_IOC_ORDERED_STORE - write a vector of stores into the window.
 *
 * Each op copies @length bytes from user buffer @buf to window offset
 * @offset with write-combining stores.  The ordering classes follow
 * "ordered stores" (weak/strong) applied to MMIO:
 *   OMS_STORE_UNORDERED  outside the ordered view: no barrier, and it does
 *                        not make a later strong store wait.
 *   OMS_STORE_WEAK       in the ordered view: no barrier between weak stores.
 *   OMS_STORE_STRONG     before it, every earlier ordered (weak or strong)
 *                        store is made visible, of this call or an earlier
 *                        one: one WC drain before each strong op.  (The
 *                        module cannot see what earlier calls or the
 *                        caller's own stores to a mapping left in the WC
 *                        buffers, so even a call's first strong op is
 *                        drained before.)
 * OMS_STORE_F_FLUSH issues one more WC drain after the last op, so the
 * whole vector has left the CPU when the call returns.  @barriers returns
 * how many WC drains the call issued (the tests check the exact count).
 *
 * Limits: @count in 1..OMS_STORE_MAX_OPS, @length in 8..OMS_STORE_MAX_BYTES
 * and the sum too, @offset and @length multiples of OMS_STORE_ALIGN, each op
 * inside the window.  The whole vector and every buffer are checked and
 * copied before the first store, so a bad op writes nothing.
 *
 * OMS_STORE_RELEASE has no meaning on a window (it orders against earlier
 * operations to a remote destination) and is refused with EINVAL.
 *
 * Errors: EBADF (read-only file), EINVAL (count, class, alignment, op
 * reserved != 0, sizes), ERANGE (an op reaches beyond the window, or
 * offset + length overflows), E2BIG (total bytes above
 * OMS_STORE_MAX_BYTES), EFAULT, ENODEV, EPERM (lockdown).
 */

#define OMS_STORE_F_FLUSH	(1U << 0)

struct oms_store_op {
	__u64 offset;
	__u32 length;
	__u32 cls;		/* enum oms_store_class, OMS_STORE_* */
	__u64 buf;		/* user pointer */
	__u64 reserved;		/* must be zero */
};

struct oms_ordered_store {
	__u32 flags;		/* OMS_STORE_F_* */
	__u32 count;
	__u64 ops;		/* user pointer to @count struct oms_store_op */
	__u64 barriers;		/* out */
	__u64 reserved[2];
};

/*
 * OMS_IOC_DOORBELL - post a WQE the way a NIC driver does:
 *   1. weak store: copy the @wqe_len byte WQE from @wqe to @wqe_offset;
 *   2. strong store: the 32-bit @dbrec at @dbrec_offset (a WC drain first,
 *      so the WQE is visible before the doorbell record);
 *   3. strong store: the 64-bit @db at @db_offset (a WC drain first), then a
 *      WC drain to push the doorbell out.  @barriers returns 3.
 * With OMS_DB_BLUEFLAME step 3 instead copies the WQE (at most OMS_BF_SIZE
 * bytes, a multiple of OMS_BF_CHUNK) to the BlueFlame register at
 * @db_offset in OMS_BF_CHUNK-byte chunks with no barrier between chunks,
 * then one WC drain; @db must be zero.
 *
 * Alignment: @wqe_offset and @wqe_len multiples of 8 (of 64 with BlueFlame),
 * @dbrec_offset of 4, @db_offset of 8 (of 64 with BlueFlame).
 * Errors: EINVAL (alignment, @wqe_len 0 or > OMS_BF_SIZE with BlueFlame or
 * > OMS_STORE_MAX_BYTES, flags, reserved), ERANGE (outside the window),
 * EFAULT, ENODEV, EBADF (read-only file), EPERM (lockdown).
 */
#define OMS_DB_BLUEFLAME	(1U << 0)

struct oms_doorbell {
	__u32 flags;		/* OMS_DB_* */
	__u32 wqe_len;
	__u64 wqe;		/* user pointer */
	__u64 wqe_offset;
	__u64 dbrec_offset;
	__u64 db_offset;
	__u64 db;
	__u32 dbrec;
	__u32 reserved0;
	__u64 barriers;		/* out */
	__u64 reserved[2];
};

/*
 * OMS_IOC_FLUSH - WC drain, then a flush read: a 32-bit read of the window
 * at @offset (4-byte aligned).  The read is non-posted, so it returns only
 * after every earlier posted write to the device has reached it; @value is
 * what it read.
 * Errors: EINVAL (alignment, flags, reserved), ERANGE, ENODEV, EPERM
 * (lockdown).
 */
struct oms_flush {
	__u32 flags;		/* must be zero */
	__u32 value;		/* out */
	__u64 offset;
	__u64 reserved[2];
};

/*
 * OMS_IOC_MMIO_BENCH - MMIO write bandwidth with and without ordering.
 *
 * Writes @total_bytes as messages of @msg_size bytes with @width-byte
 * stores, cycling over [@offset, @offset + @span) of the window (@span 0
 * means up to 256 KiB from @offset, clipped to the window; @span returns
 * the span used).  With
 * OMS_BENCH_FENCE a WC drain follows every message (ordered messages, the
 * transmit path that needs one); without it there is one flush at the end.
 * Timed with ktime (ns) and the TSC (cycles; @tsc_khz is the kernel's
 * calibrated TSC rate, 0 if unknown).  The window holds the pattern of the
 * last pass afterwards: every @width-byte store writes its byte offset in
 * the window, truncated to @width bytes.
 *
 * Limits: @msg_size a power of two in OMS_BENCH_MIN_MSG..OMS_BENCH_MAX_MSG,
 * @width 4 or 8, @total_bytes a multiple of @msg_size up to
 * OMS_BENCH_MAX_TOTAL, @offset and @span multiples of @msg_size and @span
 * at least @msg_size.
 * The run blocks no other call, mmap() or page fault.  Every 256 KiB it
 * yields the CPU and checks for signals: a pending signal (handled or
 * fatal) stops it early, and the call returns 0 with @bytes < @total_bytes
 * and the figures of the part that ran.  A detach stops it too (ENODEV).
 * Errors: EBADF (read-only file), EINVAL, ERANGE (region outside the
 * window), EINTR (a fatal signal while a detach was pending), ENODEV,
 * EPERM (lockdown).
 */
#define OMS_BENCH_FENCE		(1U << 0)

struct oms_bench {
	__u32 flags;		/* OMS_BENCH_* */
	__u32 msg_size;
	__u64 total_bytes;
	__u32 width;
	__u32 reserved0;
	__u64 offset;
	__u64 span;		/* in/out */
	__u64 bytes;		/* out: bytes written */
	__u64 ns;		/* out */
	__u64 cycles;		/* out */
	__u64 tsc_khz;		/* out */
	__u64 fences;		/* out: WC drains issued */
	__u64 reserved[2];
};

#define OMS_IOC_ATTACH		_IOW(OMS_IOC_MAGIC, 0x01, struct oms_attach)
#define OMS_IOC_DETACH		_IO(OMS_IOC_MAGIC, 0x02)
#define OMS_IOC_INFO		_IOR(OMS_IOC_MAGIC, 0x03, struct oms_info)
#define OMS_IOC_ORDERED_STORE	_IOWR(OMS_IOC_MAGIC, 0x04, struct oms_ordered_store)
#define OMS_IOC_DOORBELL	_IOWR(OMS_IOC_MAGIC, 0x05, struct oms_doorbell)
#define OMS_IOC_FLUSH		_IOWR(OMS_IOC_MAGIC, 0x06, struct oms_flush)
#define OMS_IOC_MMIO_BENCH	_IOWR(OMS_IOC_MAGIC, 0x07, struct oms_bench)

#endif /* OMS_UAPI_H */
