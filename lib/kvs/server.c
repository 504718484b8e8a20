// SPDX-License-Identifier: MIT
/*
 * The KVS server: one region holding a directory and the tables, each item
 * at version 2 with its derived value, registered for remote reads and
 * atomics (Pessimistic readers fetch-and-add the lock word) - and remote
 * writes when a table admits clients' updates (OMS_KVS_TABLE_REMOTE_WRITE)
 * - and served with oms_listen().  Once listening, the server's CPU takes
 * no part in gets or remote updates: the region is read and written by
 * the NIC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ctx_users.h"
#include "kvs/kvs_priv.h"
#include "util/clock.h"
#include "util/export.h"

static void server_free(struct oms_kvs_server *s)
{
	for (uint32_t i = 0; i < OMS_KVS_MAX_TABLES; i++)
		free(s->ver[i]);
	free(s->mem);
	free(s);
}

/* Check the specs and place the tables; -EINVAL/-E2BIG. */
static int server_plan(struct oms_kvs_server *s,
		       const struct oms_kvs_table_spec *spec, uint32_t n)
{
	uint64_t at = KVS_TABLE0;

	for (uint32_t i = 0; i < n; i++) {
		struct kvs_layout *l = &s->lay[i];

		if ((spec[i].flags & ~OMS_KVS_TABLE_F_ALL) || !spec[i].items ||
		    spec[i].proto == OMS_KVS_BROKEN ||
		    kvs_layout(spec[i].proto, spec[i].value_size, l))
			return -EINVAL;
		if ((uint64_t)spec[i].items * l->stride >
		    KVS_MAX_REGION - at)
			return -E2BIG;
		s->off[i] = at;
		s->items[i] = spec[i].items;
		s->flags[i] = spec[i].flags;
		if (spec[i].flags & OMS_KVS_TABLE_REMOTE_WRITE)
			s->has_remote_write = 1;
		at += (uint64_t)spec[i].items * l->stride;
		if (l->stride > s->max_stride)
			s->max_stride = l->stride;
		if (spec[i].proto == OMS_KVS_PESSIMISTIC)
			s->has_pessimistic = 1;
	}
	s->ntables = n;
	s->len = (at + 4095) / 4096 * 4096;
	return 0;
}

/* Directory and every item at its first version, before registration. */
static int server_fill(struct oms_kvs_server *s)
{
	struct kvs_dir *d = (struct kvs_dir *)s->mem;
	uint8_t *val = malloc(OMS_KVS_MAX_VALUE);

	if (!val)
		return -ENOMEM;
	d->magic = KVS_MAGIC;
	d->version = KVS_DIR_VERSION;
	d->ntables = s->ntables;
	d->region_len = s->len;
	/* unlike every other server's of the process, and of the host's
	 * other processes with their own clocks and pids */
	d->nonce = ((uint64_t)oms_now_ns() ^ (uint64_t)(uintptr_t)s ^
		    (uint64_t)getpid() << 40) * 0x9e3779b97f4a7c15ull;
	for (uint32_t i = 0; i < s->ntables; i++) {
		const struct kvs_layout *l = &s->lay[i];

		d->t[i] = (struct kvs_dir_ent){
			.proto = l->proto, .value_size = l->value_size,
			.items = s->items[i], .stride = l->stride,
			.offset = s->off[i], .flags = s->flags[i],
		};
		s->ver[i] = malloc((size_t)s->items[i] * sizeof(uint64_t));
		if (!s->ver[i]) {
			free(val);
			return -ENOMEM;
		}
		for (uint32_t k = 0; k < s->items[i]; k++) {
			kvs_item_build(l, k, KVS_FIRST_VERSION, val,
				       s->mem + s->off[i] +
				       (uint64_t)k * l->stride);
			s->ver[i][k] = KVS_FIRST_VERSION;
		}
	}
	free(val);
	return 0;
}

OMS_EXPORT int oms_kvs_server_create(struct oms_ctx *ctx,
				    const struct oms_kvs_table_spec *spec,
				    uint32_t n, struct oms_kvs_server **out)
{
	struct oms_kvs_server *s;
	int err;

	if (!ctx || !spec || !out || !n || n > OMS_KVS_MAX_TABLES)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ctx = ctx;
	err = server_plan(s, spec, n);
	if (!err) {
		s->mem = aligned_alloc(4096, s->len);
		err = s->mem ? 0 : -ENOMEM;
	}
	if (!err) {
		memset(s->mem, 0, s->len);
		err = server_fill(s);
	}
	if (!err)
		err = oms_mr_reg(ctx, s->mem, s->len, OMS_ACCESS_REMOTE_READ |
				 OMS_ACCESS_REMOTE_ATOMIC |
				 (s->has_remote_write ?
				  OMS_ACCESS_REMOTE_WRITE : 0), &s->mr);
	if (err) {
		server_free(s);
		return err;
	}
	oms_ctx_user_get(ctx);
	*out = s;
	return 0;
}

OMS_EXPORT int oms_kvs_server_listen(struct oms_kvs_server *s,
				    const char *addr, const char *port)
{
	int err;

	if (!s || !port || !*port || strlen(port) >= sizeof(s->port) ||
	    (addr && strlen(addr) >= sizeof(s->addr)))
		return -EINVAL;
	if (s->listener)
		return -EALREADY;
	err = oms_listen(s->ctx, addr, port, s->mr, &s->listener);
	if (err) {
		s->listener = NULL;
		return err;
	}
	snprintf(s->addr, sizeof(s->addr), "%s", addr ? addr : "");
	snprintf(s->port, sizeof(s->port), "%s", port);
	return 0;
}

OMS_EXPORT int oms_kvs_server_destroy(struct oms_kvs_server *s)
{
	if (!s)
		return -EINVAL;
	if (__atomic_load_n(&s->writers, __ATOMIC_ACQUIRE))
		return -EBUSY;
	if (s->listener)
		oms_listener_close(s->listener);
	oms_mr_dereg(s->mr);
	oms_ctx_user_put(s->ctx);
	server_free(s);
	return 0;
}
