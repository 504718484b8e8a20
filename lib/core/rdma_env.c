// SPDX-License-Identifier: MIT
/*
 * The RDMA device a verbs context uses, as the user named it: OMS_DEVICE
 * (a device of /sys/class/infiniband), OMS_PORT (its port, from 1) and
 * OMS_GID_INDEX (an entry of that port's GID table; port 1 when OMS_PORT
 * is unset).  They are perftest's -d, -i and -x.
 *
 * Checked here against sysfs, so that a name that does not exist is refused
 * with its reason before anything is opened, and also with no context
 * (oms_query_caps(NULL, ...)); the verbs backend then opens what was named.
 * Naming a device picks the verbs backend: a program told "-d mlx5_0"
 * must not run on the emulated device instead.
 *
 * Narrowed: a GID index is taken on RoCE ports only.  rdma_cm, which makes
 * every connection, addresses by IP; a RoCE GID is an IP address (the
 * context binds to it), an InfiniBand GID is not.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oms_priv.h"

#define SYS_IB "/sys/class/infiniband"

int oms_rdma_first_device(char *name, size_t len)
{
	DIR *d = opendir(SYS_IB);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		found = e->d_name[0] != '.';
		if (found)
			snprintf(name, len, "%.63s", e->d_name);
	}
	closedir(d);
	return found;
}

/* The devices present, for a message: "rxe0 mlx5_0" or "none". */
static void device_list(char *buf, size_t len)
{
	DIR *d = opendir(SYS_IB);
	struct dirent *e;
	size_t used = 0;

	buf[0] = 0;
	while (d && (e = readdir(d)) && used + 2 < len) {
		if (e->d_name[0] == '.')
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? " " : "", e->d_name);
	}
	if (d)
		closedir(d);
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* A whole number in 0..@max from @s; -1 if it is not one. */
static long parse_num(const char *s, long max)
{
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return !errno && !*end && v <= max ? v : -1;
}

static int sys_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* The first line of sysfs file @path into @buf; 0 if unreadable. */
static int sys_read(const char *path, char *buf, int len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return 0;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

static int want_device(struct oms_be_rdma_want *w, const char *env,
		       char *why, size_t whylen)
{
	char path[160], list[96];

	if (strlen(env) >= sizeof(w->dev) || strchr(env, '/') ||
	    env[0] == '.') {
		snprintf(why, whylen, "OMS_DEVICE: not a device name");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), SYS_IB "/%s", env);
	if (!sys_exists(path)) {
		device_list(list, sizeof(list));
		snprintf(why, whylen, "OMS_DEVICE=%.40s: no such RDMA device "
			 "(present: %.60s; `rdma link show` lists them)",
			 env, list);
		return -ENODEV;
	}
	snprintf(w->dev, sizeof(w->dev), "%s", env);
	return 0;
}

static int want_port(struct oms_be_rdma_want *w, const char *dev,
		     const char *env, char *why, size_t whylen)
{
	long v = parse_num(env, 255);
	char path[192];

	snprintf(path, sizeof(path), SYS_IB "/%s/ports/%ld", dev, v);
	if (v < 1 || !sys_exists(path)) {
		snprintf(why, whylen, "OMS_PORT=%.16s: %s has no such port "
			 "(ports count from 1: `rdma link show`)", env, dev);
		return -EINVAL;
	}
	w->port = (uint32_t)v;
	return 0;
}

static int want_gid(struct oms_be_rdma_want *w, const char *dev,
		    const char *env, char *why, size_t whylen)
{
	uint32_t port = w->port ? w->port : 1;
	long v = parse_num(env, 65535);
	char path[224], val[64];

	snprintf(path, sizeof(path), SYS_IB "/%s/ports/%u/link_layer", dev,
		 port);
	if (v >= 0 && sys_read(path, val, sizeof(val)) &&
	    strcmp(val, "Ethernet")) {
		snprintf(why, whylen, "OMS_GID_INDEX=%.16s: port %u of %s is "
			 "%.16s, and a GID index is taken on RoCE ports only "
			 "(connect by its IPoIB address)", env, port, dev, val);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), SYS_IB "/%s/ports/%u/gids/%ld", dev,
		 port, v);
	if (v < 0 || !sys_read(path, val, sizeof(val)) ||
	    !strcmp(val, "0000:0000:0000:0000:0000:0000:0000:0000")) {
		snprintf(why, whylen, "OMS_GID_INDEX=%.16s: port %u of %s has "
			 "no GID there (`rdma link show`, `ip addr`: a RoCE GID "
			 "is an address of its netdev)", env, port, dev);
		return -EINVAL;
	}
	w->gid_index = (int32_t)v;
	return 0;
}

int oms_rdma_want_parse(struct oms_be_rdma_want *w, char *why, size_t whylen)
{
	const char *dev_env = getenv("OMS_DEVICE");
	const char *port_env = getenv("OMS_PORT");
	const char *gid_env = getenv("OMS_GID_INDEX");
	char dev[64];
	int err = 0;

	memset(w, 0, sizeof(*w));
	w->gid_index = -1;
	if (dev_env && *dev_env)
		err = want_device(w, dev_env, why, whylen);
	if (err)
		return err;
	/* port and GID of the named device, else of the one opened then */
	if (w->dev[0])
		snprintf(dev, sizeof(dev), "%s", w->dev);
	else if (!oms_rdma_first_device(dev, sizeof(dev)))
		return 0;	/* the open says there is no device */
	if (port_env && *port_env)
		err = want_port(w, dev, port_env, why, whylen);
	if (!err && gid_env && *gid_env)
		err = want_gid(w, dev, gid_env, why, whylen);
	return err;
}
