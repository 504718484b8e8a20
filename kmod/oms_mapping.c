// SPDX-License-Identifier: GPL-2.0
/*
 * oms_mapping.c - one address space for every open file of a device.
 *
 * Files opened through different device nodes of a device (a second
 * mknod, a container's /dev) have different inodes, so each would have its
 * own address space, and detach would have to find and zap each.  Instead
 * every file takes, at open, the address space of one inode of its
 * device's own, on a small pseudo filesystem of the module (the pattern of
 * vfio's device inode): its mappings are linked there, and one
 * unmap_mapping_range() zaps every user mapping of that device, whoever
 * made it and however many files there are, and no mapping of another
 * device.
 */
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>

#include "oms_drv.h"

#define OMS_FS_MAGIC	0x6f6d7366	/* "omsf" */

static int oms_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, OMS_FS_MAGIC) ? 0 : -ENOMEM;
}

/*
 * No .owner: the module's own mount of it would then hold the module for
 * ever (a mount takes its filesystem's owner), and rmmod never could.  The
 * mount is the module's: made at load, gone at unload, after the last
 * file (each holds the module) has closed.
 */
static struct file_system_type oms_fs_type = {
	.name = "oms",
	.init_fs_context = oms_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

/* One mount, pinned once per device. */
static struct vfsmount *oms_fs_mnt;
static int oms_fs_count;

/* The inode whose address space every open file of @od shares: at load. */
int oms_mapping_init(struct oms_device *od)
{
	struct inode *inode;
	int ret;

	ret = simple_pin_fs(&oms_fs_type, &oms_fs_mnt, &oms_fs_count);
	if (ret)
		return ret;
	inode = alloc_anon_inode(oms_fs_mnt->mnt_sb);
	if (IS_ERR(inode)) {
		simple_release_fs(&oms_fs_mnt, &oms_fs_count);
		return PTR_ERR(inode);
	}
	od->inode = inode;
	return 0;
}

/* At unload: no file is open (each holds a module reference). */
void oms_mapping_exit(struct oms_device *od)
{
	iput(od->inode);
	od->inode = NULL;
	simple_release_fs(&oms_fs_mnt, &oms_fs_count);
}

/* At open, before any mmap() of @filp can link a mapping anywhere else. */
void oms_mapping_attach(struct oms_device *od, struct file *filp)
{
	filp->f_mapping = od->inode->i_mapping;
}

/*
 * Zap every user mapping of every open file of @od.  Called by detach
 * after the window is marked gone, with od->lock held: a fault that comes
 * later finds the window gone and raises SIGBUS.
 */
void oms_zap_mappings(struct oms_device *od)
{
	unmap_mapping_range(od->inode->i_mapping, 0, 0, 1);
}
