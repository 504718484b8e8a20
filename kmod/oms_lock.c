// SPDX-License-Identifier: GPL-2.0
/*
 * oms_lock.c - the locks of attach and detach: the PCI device's own lock,
 * then the oms device's, od->lock.
 *
 * The module is not the device's driver, so root can write the device's
 * sysfs "enable" while a window holds an enable count: enable_store()
 * checks pci_is_enabled() and disables under the device lock.  Detach
 * must make the same check under the same lock, or both see the device
 * enabled, both disable it, and its count goes below zero ("disabling
 * already-disabled device").  The driver core calls the bus notifier with
 * the device locked when it unbinds a driver, and the notifier takes
 * od->lock: so the device lock always comes first, and every attach or
 * detach of a PCI window takes it before od->lock.  The device of a
 * detach is the window's, which may change until od->lock is held:
 * oms_lock_window() looks, locks, and looks again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/pci.h>

#include "oms_drv.h"

/*
 * oms_lock() - lock @pdev's device (if any), then od->lock.  Killable
 * unless @wait: the module's own load and unload wait.
 */
int oms_lock(struct oms_device *od, struct pci_dev *pdev, bool wait)
{
	if (pdev) {
		if (wait)
			device_lock(&pdev->dev);
		else if (device_lock_interruptible(&pdev->dev))
			return -EINTR;
	}
	if (!wait && mutex_lock_killable(&od->lock)) {
		if (pdev)
			device_unlock(&pdev->dev);
		return -EINTR;
	}
	if (wait)
		mutex_lock(&od->lock);
	return 0;
}

void oms_unlock(struct oms_device *od, struct pci_dev *pdev)
{
	mutex_unlock(&od->lock);
	if (pdev)
		device_unlock(&pdev->dev);
}

/* The PCI device of @od's window, with a reference, or NULL. */
static struct pci_dev *oms_window_pdev(struct oms_device *od)
{
	struct pci_dev *pdev = NULL;

	spin_lock(&od->win_lock);
	if (od->win && od->win->kind == OMS_WINDOW_PCI)
		pdev = pci_dev_get(od->win->pdev);
	spin_unlock(&od->win_lock);
	return pdev;
}

/*
 * oms_lock_window() - oms_lock() on the PCI device of @od's window, the
 * one it still has once od->lock is held.  *@pdev: that device with a
 * reference (NULL for no window or an emulated one), for oms_unlock()
 * and pci_dev_put().
 */
int oms_lock_window(struct oms_device *od, struct pci_dev **pdev, bool wait)
{
	struct pci_dev *p;
	int ret;

	for (;;) {
		p = oms_window_pdev(od);
		ret = oms_lock(od, p, wait);
		if (ret) {
			pci_dev_put(p);
			return ret;
		}
		lockdep_assert_held(&od->lock);
		if ((od->win && od->win->kind == OMS_WINDOW_PCI ?
		     od->win->pdev : NULL) == p)
			break;
		/* detached, or attached elsewhere, before od->lock */
		oms_unlock(od, p);
		pci_dev_put(p);
	}
	*pdev = p;
	return 0;
}
