// SPDX-License-Identifier: GPL-2.0
/*
 * oms_main.c - module entry, misc device /dev/oms and module parameters.
 *
 * Load with pci=DDDD:BB:SS.F and bar=N to attach that memory BAR, or with
 * no pci= to start with an emulated window of kernel pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "oms_drv.h"

struct oms_device oms = {
	.lock = __MUTEX_INITIALIZER(oms.lock),
	.win_lock = __SPIN_LOCK_UNLOCKED(oms.win_lock),
};

static char *pci;
module_param(pci, charp, 0444);
MODULE_PARM_DESC(pci, "PCI device [DDDD:]BB:SS.F whose BAR to attach (default: emulated window)");

static int bar;
module_param(bar, int, 0444);
MODULE_PARM_DESC(bar, "BAR index of the pci= device (default 0)");

static bool uc;
module_param(uc, bool, 0444);
MODULE_PARM_DESC(uc, "map the window uncached instead of write-combining");

static ulong emu_len = OMS_EMU_DEFAULT_LEN;
module_param(emu_len, ulong, 0444);
MODULE_PARM_DESC(emu_len, "bytes of the emulated window attached without pci=");

static int oms_parse_pci(const char *s, struct oms_attach *a)
{
	unsigned int dom = 0, b, d, f;
	char extra;

	/* field widths: a longer number is refused, not truncated */
	if (sscanf(s, "%4x:%2x:%2x.%1x%c", &dom, &b, &d, &f, &extra) != 4) {
		dom = 0;
		if (sscanf(s, "%2x:%2x.%1x%c", &b, &d, &f, &extra) != 3)
			return -EINVAL;
	}
	if (dom > 0xffff || b > 0xff || d > 0x1f || f > 7)
		return -EINVAL;
	a->domain = dom;
	a->bus = b;
	a->slot = d;
	a->func = f;
	return 0;
}

static int oms_attach_at_load(void)
{
	struct oms_attach a = { .flags = uc ? OMS_ATTACH_UC : 0 };
	struct pci_dev *pdev;
	int ret;

	if (!pci) {
		a.flags |= OMS_ATTACH_EMULATED;
		a.length = emu_len;
		oms_lock(NULL, true);
		ret = oms_attach_emulated(&a);
		if (ret)
			oms_emu_free();
		oms_unlock(NULL);
		goto out;
	}
	if (bar < 0 || bar >= PCI_STD_NUM_BARS) {
		pr_err("bar=%d out of range\n", bar);
		return -EINVAL;
	}
	ret = oms_parse_pci(pci, &a);
	if (ret) {
		pr_err("pci=%s: expected [DDDD:]BB:SS.F\n", pci);
		return ret;
	}
	a.bar = bar;
	pdev = oms_attach_pci_find(&a);
	if (IS_ERR(pdev)) {
		ret = PTR_ERR(pdev);
		goto out;
	}
	oms_lock(pdev, true);
	ret = oms_attach_pci(&a, pdev);
	oms_unlock(pdev);
	pci_dev_put(pdev);
out:
	if (ret)
		pr_err("cannot attach the window at load: %d\n", ret);
	return ret;
}

/* Detach at unload (or a failed load), and free the emulated pages. */
static void oms_detach_at_unload(void)
{
	struct pci_dev *pdev;

	oms_lock_window(&pdev, true);
	oms_detach();
	oms_emu_free();
	oms_unlock(pdev);
	pci_dev_put(pdev);
}

/*
 * A new file: it takes the module's address space (every mapping of every
 * file in one place for detach to zap) and is bound to the window attached
 * now, if any.
 */
static int oms_open(struct inode *inode, struct file *filp)
{
	struct oms_window *w;
	struct oms_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	oms_mapping_attach(filp);
	w = oms_window_get();
	if (w) {
		f->generation = w->generation;
		oms_window_put(w);
	}
	filp->private_data = f;
	return 0;
}

static int oms_release(struct inode *inode, struct file *filp)
{
	kfree(filp->private_data);
	return 0;
}

static const struct file_operations oms_fops = {
	.owner = THIS_MODULE,
	.open = oms_open,
	.release = oms_release,
	.mmap = oms_mmap,
	.unlocked_ioctl = oms_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice oms_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = OMS_DEVICE_NAME,
	.fops = &oms_fops,
	.mode = 0600,
};

static int __init oms_init(void)
{
	int ret;

	ret = oms_mapping_init();
	if (ret)
		return ret;
	ret = oms_notifier_register();
	if (ret)
		goto err_mapping;

	ret = oms_attach_at_load();
	if (ret)
		goto err_notifier;

	ret = misc_register(&oms_misc);
	if (ret)
		goto err_detach;
	return 0;

err_detach:
	oms_detach_at_unload();
err_notifier:
	oms_notifier_unregister();
err_mapping:
	oms_mapping_exit();
	return ret;
}

static void __exit oms_exit(void)
{
	misc_deregister(&oms_misc);
	oms_detach_at_unload();
	oms_notifier_unregister();
	oms_mapping_exit();
}

module_init(oms_init);
module_exit(oms_exit);

MODULE_DESCRIPTION("Write-combining BAR windows with ordered-store and doorbell ioctls");
MODULE_AUTHOR("liboms developers");
MODULE_LICENSE("GPL");
/* The same as PACKAGE_VERSION in dkms.conf (and VERSION in the Makefile). */
MODULE_VERSION("2.2.0");
