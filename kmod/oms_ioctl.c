// SPDX-License-Identifier: GPL-2.0
/*
 * oms_ioctl.c - ioctl dispatch.
 *
 * Boring on purpose: look the command up, check the file mode and the
 * capability, copy the argument in and run the lock-free checks (which
 * also copy user buffers in), then call one helper on the file's device:
 * attach and detach under its lock (killable), INFO under the spinlock
 * that publishes the window, the data calls on a referenced window they
 * use (the one the file is bound to; killable, never behind a
 * benchmark), then copy out.
 * For commands that write results back, the argument is written back
 * unchanged before the operation, so an unwritable argument fails with
 * EFAULT before anything happens.
 */
#include <linux/capability.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "oms_drv.h"

union oms_arg {
	struct oms_attach attach;
	struct oms_info info;
	struct oms_ordered_store store;
	struct oms_doorbell db;
	struct oms_flush flush;
	struct oms_bench bench;
};

/* Per-call kernel copies of user buffers, made before taking the lock. */
struct oms_call {
	union oms_arg arg;
	struct oms_store_req store;
	u8 *wqe;
};

static const unsigned int oms_cmds[] = {
	OMS_IOC_ATTACH, OMS_IOC_DETACH, OMS_IOC_INFO, OMS_IOC_ORDERED_STORE,
	OMS_IOC_DOORBELL, OMS_IOC_FLUSH, OMS_IOC_MMIO_BENCH,
};

/*
 * Commands that write the window or change it need a file opened for
 * writing: a read-only descriptor may only ask INFO and FLUSH (a fence and
 * a read).
 */
static bool oms_cmd_writes(unsigned int cmd)
{
	return cmd != OMS_IOC_INFO && cmd != OMS_IOC_FLUSH;
}

/* -ENOTTY for an unknown number, -EINVAL for a known one with a bad size. */
static int oms_cmd_check(unsigned int cmd)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(oms_cmds); i++) {
		if (oms_cmds[i] == cmd)
			return 0;
		if (_IOC_TYPE(cmd) == _IOC_TYPE(oms_cmds[i]) &&
		    _IOC_NR(cmd) == _IOC_NR(oms_cmds[i]))
			return -EINVAL;
	}
	return -ENOTTY;
}

static int oms_attach_check(const struct oms_attach *a)
{
	if (a->flags & ~OMS_ATTACH_FLAGS || a->reserved0 || a->reserved[0] ||
	    a->reserved[1])
		return -EINVAL;
	return 0;
}

/* Checks and copies that need no window.  Runs before oms_call(). */
static int oms_call_prepare(unsigned int cmd, struct oms_call *c)
{
	switch (cmd) {
	case OMS_IOC_ATTACH:
		return oms_attach_check(&c->arg.attach);
	case OMS_IOC_ORDERED_STORE:
		return oms_store_prepare(&c->arg.store, &c->store);
	case OMS_IOC_DOORBELL:
		return oms_doorbell_prepare(&c->arg.db, &c->wqe);
	case OMS_IOC_FLUSH:
		return oms_flush_check(&c->arg.flush);
	case OMS_IOC_MMIO_BENCH:
		return oms_bench_check(&c->arg.bench);
	}
	return 0;
}

/* A store, doorbell, flush or bench on the window @filp is bound to. */
static int oms_call_window(struct file *filp, unsigned int cmd,
			   struct oms_call *c)
{
	struct oms_window *w = oms_window_get_bound(filp);
	int ret;

	if (IS_ERR(w))
		return PTR_ERR(w);
	ret = oms_window_lockdown(w);
	if (ret)
		goto out_put;
	ret = oms_window_use(w);
	if (ret)
		goto out_put;

	switch (cmd) {
	case OMS_IOC_ORDERED_STORE:
		ret = oms_store_exec(w, &c->arg.store, &c->store);
		break;
	case OMS_IOC_DOORBELL:
		ret = oms_doorbell_exec(w, &c->arg.db, c->wqe);
		break;
	case OMS_IOC_FLUSH:
		ret = oms_flush_exec(w, &c->arg.flush);
		break;
	case OMS_IOC_MMIO_BENCH:
		ret = oms_bench_exec(w, &c->arg.bench);
		break;
	default:
		ret = -ENOTTY;
	}
	oms_window_unuse(w);
out_put:
	oms_window_put(w);
	return ret;
}

/*
 * Attach or detach the window of @filp's device.  A PCI BAR also needs
 * CAP_SYS_RAWIO, as the kernel's /proc/bus/pci mmap of a BAR does: the
 * attach hands the BAR to every user of the device file.  The file that
 * attaches is bound to the new window.  A PCI device's lock is taken
 * before od->lock (oms_lock.c).
 */
static int oms_call_attach(struct file *filp, unsigned int cmd,
			   const struct oms_attach *a)
{
	struct oms_file *f = filp->private_data;
	struct oms_device *od = f->od;
	bool emulated = a->flags & OMS_ATTACH_EMULATED;
	struct pci_dev *pdev = NULL;
	int ret;

	if (cmd == OMS_IOC_ATTACH && !emulated) {
		if (!capable(CAP_SYS_RAWIO))
			return -EPERM;
		pdev = oms_attach_pci_find(a);
		if (IS_ERR(pdev))
			return PTR_ERR(pdev);
		ret = oms_lock(od, pdev, false);
	} else if (cmd == OMS_IOC_DETACH) {
		ret = oms_lock_window(od, &pdev, false);
	} else {
		ret = oms_lock(od, NULL, false);
	}
	if (ret)
		goto out_put;
	if (cmd == OMS_IOC_DETACH)
		ret = oms_detach(od);
	else if (emulated)
		ret = oms_attach_emulated(od, a);
	else
		ret = oms_attach_pci(od, a, pdev);
	if (!ret && cmd == OMS_IOC_ATTACH)
		WRITE_ONCE(f->generation, od->win->generation);
	oms_unlock(od, pdev);
out_put:
	pci_dev_put(pdev);
	return ret;
}

static int oms_call(struct file *filp, unsigned int cmd, struct oms_call *c)
{
	switch (cmd) {
	case OMS_IOC_INFO:
		oms_fill_info(filp, &c->arg.info);
		return 0;
	case OMS_IOC_ATTACH:
	case OMS_IOC_DETACH:
		return oms_call_attach(filp, cmd, &c->arg.attach);
	}
	return oms_call_window(filp, cmd, c);
}

long oms_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	size_t size = _IOC_SIZE(cmd);
	struct oms_call *c;
	int ret;

	ret = oms_cmd_check(cmd);
	if (ret)
		return ret;
	/* The file mode first: it costs nothing and audits nothing. */
	if (oms_cmd_writes(cmd) && !(filp->f_mode & FMODE_WRITE))
		return -EBADF;
	if ((cmd == OMS_IOC_ATTACH || cmd == OMS_IOC_DETACH) &&
	    !capable(CAP_SYS_ADMIN))
		return -EPERM;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;

	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy_from_user(&c->arg, uarg, size)) {
		ret = -EFAULT;
		goto out_free;
	}
	if ((_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(uarg, &c->arg, size)) {
		ret = -EFAULT;
		goto out_free;
	}
	ret = oms_call_prepare(cmd, c);
	if (ret)
		goto out_free;

	ret = oms_call(filp, cmd, c);

	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(uarg, &c->arg, size))
		ret = -EFAULT;
out_free:
	oms_store_release(&c->store);
	kvfree(c->wqe);
	kfree(c);
	return ret;
}
