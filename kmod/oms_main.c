// SPDX-License-Identifier: GPL-2.0
/*
 * oms_main.c - module entry, the devices and module parameters.
 *
 * devices=N makes N devices, misc devices /dev/oms, /dev/oms1, ...
 * /dev/oms(N-1), each with a window of its own, attached and detached
 * through its own node.  The first one, /dev/oms, starts with a window:
 * load with pci=DDDD:BB:SS.F and bar=N to attach that memory BAR, or with
 * no pci= for an emulated window of kernel pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/stringify.h>

#include "oms_drv.h"

static struct oms_device *oms_devs;

static uint devices = 1;
module_param(devices, uint, 0444);
MODULE_PARM_DESC(devices, "number of devices, /dev/oms, /dev/oms1, ... (1 to "
		 __stringify(OMS_MAX_DEVICES) ", default 1)");

static char *pci;
module_param(pci, charp, 0444);
MODULE_PARM_DESC(pci, "PCI device [DDDD:]BB:SS.F whose BAR /dev/oms attaches at load (default: emulated window)");

static int bar;
module_param(bar, int, 0444);
MODULE_PARM_DESC(bar, "BAR index of the pci= device (default 0)");

static bool uc;
module_param(uc, bool, 0444);
MODULE_PARM_DESC(uc, "map the window uncached instead of write-combining");

static ulong emu_len = OMS_EMU_DEFAULT_LEN;
module_param(emu_len, ulong, 0444);
MODULE_PARM_DESC(emu_len, "bytes of the emulated window /dev/oms attaches without pci=");

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

/* The window of the first device, from pci=, bar=, uc= and emu_len=. */
static int oms_attach_at_load(struct oms_device *od)
{
	struct oms_attach a = { .flags = uc ? OMS_ATTACH_UC : 0 };
	struct pci_dev *pdev;
	int ret;

	if (!pci) {
		a.flags |= OMS_ATTACH_EMULATED;
		a.length = emu_len;
		oms_lock(od, NULL, true);
		ret = oms_attach_emulated(od, &a);
		oms_unlock(od, NULL);
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
	oms_lock(od, pdev, true);
	ret = oms_attach_pci(od, &a, pdev);
	oms_unlock(od, pdev);
	pci_dev_put(pdev);
out:
	if (ret)
		pr_err("cannot attach the window at load: %d\n", ret);
	return ret;
}

/* Detach at unload (or a failed load), and free the emulated pages. */
static void oms_detach_at_unload(struct oms_device *od)
{
	struct pci_dev *pdev;

	oms_lock_window(od, &pdev, true);
	oms_detach(od);
	oms_emu_free(od);
	oms_unlock(od, pdev);
	pci_dev_put(pdev);
}

/*
 * A new file: its device is the one whose misc device it was opened on
 * (misc_open() leaves that in private_data).  It takes the device's
 * address space (every mapping of every file of the device in one place
 * for detach to zap) and is bound to the window attached now, if any.
 */
static int oms_open(struct inode *inode, struct file *filp)
{
	struct oms_device *od = container_of(filp->private_data,
					     struct oms_device, misc);
	struct oms_window *w;
	struct oms_file *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	f->od = od;
	oms_mapping_attach(od, filp);
	w = oms_window_get(od);
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

/*
 * Device @i without its misc device: "oms" for the first, "oms<i>" for
 * the others.
 */
static int oms_device_init(struct oms_device *od, uint i)
{
	int ret;

	mutex_init(&od->lock);
	spin_lock_init(&od->win_lock);
	if (i)
		snprintf(od->name, sizeof(od->name), "%s%u", OMS_DEVICE_NAME, i);
	else
		strscpy(od->name, OMS_DEVICE_NAME, sizeof(od->name));
	od->misc.minor = MISC_DYNAMIC_MINOR;
	od->misc.name = od->name;
	od->misc.fops = &oms_fops;
	od->misc.mode = 0600;

	ret = oms_mapping_init(od);
	if (ret)
		return ret;
	ret = oms_notifier_register(od);
	if (ret)
		goto err_mapping;
	return 0;

err_mapping:
	oms_mapping_exit(od);
	return ret;
}

/* The mirror of oms_device_init(), detaching the device's window. */
static void oms_device_exit(struct oms_device *od)
{
	oms_detach_at_unload(od);
	oms_notifier_unregister(od);
	oms_mapping_exit(od);
	mutex_destroy(&od->lock);
}

static int __init oms_init(void)
{
	uint n, m;
	int ret;

	if (!devices || devices > OMS_MAX_DEVICES) {
		pr_err("devices=%u out of range (1 to %u)\n", devices,
		       OMS_MAX_DEVICES);
		return -EINVAL;
	}
	oms_devs = kcalloc(devices, sizeof(*oms_devs), GFP_KERNEL);
	if (!oms_devs)
		return -ENOMEM;
	oms_window_devices(oms_devs, devices);

	for (n = 0; n < devices; n++) {
		ret = oms_device_init(&oms_devs[n], n);
		if (ret)
			goto err_devices;
	}

	ret = oms_attach_at_load(&oms_devs[0]);
	if (ret)
		goto err_devices;

	for (m = 0; m < devices; m++) {
		ret = misc_register(&oms_devs[m].misc);
		if (ret)
			goto err_misc;
	}
	return 0;

err_misc:
	while (m--)
		misc_deregister(&oms_devs[m].misc);
err_devices:
	while (n--)
		oms_device_exit(&oms_devs[n]);
	oms_window_devices(NULL, 0);
	kfree(oms_devs);
	return ret;
}

static void __exit oms_exit(void)
{
	uint i;

	for (i = 0; i < devices; i++)
		misc_deregister(&oms_devs[i].misc);
	for (i = 0; i < devices; i++)
		oms_device_exit(&oms_devs[i]);
	oms_window_devices(NULL, 0);
	kfree(oms_devs);
}

module_init(oms_init);
module_exit(oms_exit);

MODULE_DESCRIPTION("Write-combining BAR windows with ordered-store and doorbell ioctls");
MODULE_AUTHOR("liboms developers");
MODULE_LICENSE("GPL");
/* The same as PACKAGE_VERSION in dkms.conf (and VERSION in the Makefile). */
MODULE_VERSION("2.2.0");
