// SPDX-License-Identifier: MIT
/*
 * Connections on the emulated device.  Every context of the process shares
 * one device, so a "network" is a process-wide table of listeners keyed by
 * address and port: oms_connect() finds the entry and copies the region
 * descriptor, exactly what a verbs listener sends in its private data.  A
 * listener bound to no address answers every host name; one bound to an
 * address answers only that name.
 *
 * The descriptor is the listener's own window on the region (backend.c):
 * closing the listener revokes it, so what initiators then send through
 * it fails (-EACCES), as it does on verbs where closing disconnects them.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "oms_priv.h"
#include "emu/emu.h"

#define EMU_LISTENERS	64
#define EMU_NAME	64

struct emu_listener {
	int used;
	char addr[EMU_NAME];	/* "" = any */
	char port[EMU_NAME];
	struct oms_rmr rmr;	/* the listener's window */
};

static struct emu_listener g_listen[EMU_LISTENERS];
static pthread_mutex_t g_listen_lock = PTHREAD_MUTEX_INITIALIZER;

static int fits(const char *s)
{
	return !s || strlen(s) < EMU_NAME;
}

static int same_addr(const struct emu_listener *e, const char *addr)
{
	return !e->addr[0] || !addr || !strcmp(e->addr, addr);
}

int emu_listen(struct oms_ctx *ctx, const char *addr, const char *port,
	       const struct oms_mr *mr, void **lpriv)
{
	struct emu_listener *free_e = NULL;
	int err = 0;

	if (!fits(addr) || !fits(port))
		return -EINVAL;
	pthread_mutex_lock(&g_listen_lock);
	for (int i = 0; i < EMU_LISTENERS; i++) {
		struct emu_listener *e = &g_listen[i];

		if (!e->used) {
			if (!free_e)
				free_e = e;
		} else if (!strcmp(e->port, port) && same_addr(e, addr)) {
			err = -EADDRINUSE;
		}
	}
	if (!err && !free_e)
		err = -ENOMEM;
	if (!err) {
		memset(free_e, 0, sizeof(*free_e));
		err = emu_window_open(ctx, &mr->rmr, &free_e->rmr);
	}
	if (!err) {
		if (addr)
			strcpy(free_e->addr, addr);
		strcpy(free_e->port, port);
		free_e->used = 1;
		*lpriv = free_e;
	}
	pthread_mutex_unlock(&g_listen_lock);
	return err;
}

void emu_listener_close(struct oms_ctx *ctx, void *lpriv)
{
	struct emu_listener *e = lpriv;

	pthread_mutex_lock(&g_listen_lock);
	emu_window_close(ctx, &e->rmr);
	e->used = 0;
	pthread_mutex_unlock(&g_listen_lock);
}

int emu_connect(struct oms_ctx *ctx, const char *host, const char *port,
		uint32_t timeout_ms, struct oms_rmr *rmr)
{
	int err = -ECONNREFUSED;

	(void)ctx;
	(void)timeout_ms;	/* nothing to wait for in one process */
	if (!fits(host) || !fits(port))
		return -EINVAL;
	pthread_mutex_lock(&g_listen_lock);
	for (int i = 0; i < EMU_LISTENERS; i++) {
		struct emu_listener *e = &g_listen[i];

		if (e->used && !strcmp(e->port, port) &&
		    (!e->addr[0] || !strcmp(e->addr, host))) {
			*rmr = e->rmr;
			err = 0;
			break;
		}
	}
	pthread_mutex_unlock(&g_listen_lock);
	return err;
}
