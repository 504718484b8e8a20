// SPDX-License-Identifier: MIT
/*
 * Connections on the emulated device.  A device is one fabric, so its
 * "network" is a table of listeners of the device keyed by address and
 * port: oms_connect() finds the entry and copies the region descriptor,
 * exactly what a verbs listener sends in its private data.  Contexts of
 * different devices do not see each other's listeners.
 *
 * Host names are resolved as librdmacm resolves them (getaddrinfo), and
 * addresses are compared, not strings: a listener on 127.0.0.1 answers
 * "localhost" and one on "localhost" answers 127.0.0.1, as on verbs.  A
 * listener bound to no address (or to a wildcard one) answers every host.
 * A name that does not resolve fails as on verbs: -EADDRNOTAVAIL to listen,
 * -EHOSTUNREACH to connect.
 *
 * The descriptor is the listener's own window on the region (backend.c):
 * closing the listener revokes it, so what initiators then send through
 * it fails (-EACCES), as it does on verbs where closing disconnects them.
 * A context that connected stays counted as the listener's peer until it
 * is destroyed, as a verbs connection lasts until its context disconnects.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "backend.h"
#include "util/export.h"
#include "emu/emu.h"

#define EMU_LISTENERS	64
#define EMU_NAME	64
#define EMU_ADDRS	8	/* addresses kept of one name */

/* What a name resolved to: any address, or these. */
struct emu_addrs {
	int any;
	int n;
	struct sockaddr_storage a[EMU_ADDRS];
};

struct emu_listener {
	int used;
	struct emu_addrs addrs;
	char port[EMU_NAME];
	struct oms_rmr rmr;	/* the listener's window */
	uint64_t gen;		/* which listener holds the entry */
	int peers;		/* contexts connected and not destroyed */
};

/* A device's listeners, under its listen_lock. */
struct emu_listeners {
	struct emu_listener e[EMU_LISTENERS];
	uint64_t gen;		/* the last listener's */
};

int emu_conn_init(struct oms_emu *dev)
{
	dev->listeners = calloc(1, sizeof(*dev->listeners));
	return dev->listeners ? 0 : -ENOMEM;
}

void emu_conn_fini(struct oms_emu *dev)
{
	free(dev->listeners);
	dev->listeners = NULL;
}

static int fits(const char *s)
{
	return !s || strlen(s) < EMU_NAME;
}

/* The bytes of @sa's address (not its port); their length in *@len. */
static const void *addr_bytes(const struct sockaddr_storage *sa, size_t *len)
{
	if (sa->ss_family == AF_INET) {
		*len = sizeof(struct in_addr);
		return &((const struct sockaddr_in *)sa)->sin_addr;
	}
	if (sa->ss_family == AF_INET6) {
		*len = sizeof(struct in6_addr);
		return &((const struct sockaddr_in6 *)sa)->sin6_addr;
	}
	*len = 0;
	return NULL;
}

static int same_sockaddr(const struct sockaddr_storage *x,
			 const struct sockaddr_storage *y)
{
	size_t lx, ly;
	const void *bx = addr_bytes(x, &lx), *by = addr_bytes(y, &ly);

	return x->ss_family == y->ss_family && bx && lx == ly &&
	       !memcmp(bx, by, lx);
}

/* 0.0.0.0 or ::, which a listener binds to mean every address. */
static int wildcard(const struct sockaddr_storage *sa)
{
	static const uint8_t zero[sizeof(struct in6_addr)];
	size_t len;
	const void *b = addr_bytes(sa, &len);

	return b && !memcmp(b, zero, len);
}

static int has_addr(const struct emu_addrs *s,
		    const struct sockaddr_storage *sa)
{
	for (int i = 0; i < s->n; i++)
		if (same_sockaddr(&s->a[i], sa))
			return 1;
	return 0;
}

/*
 * Resolve @name (NULL: any address) into *@out, before taking the table's
 * lock: a lookup may take a while.  -ENOENT if it names nothing.
 */
static int emu_resolve(const char *name, struct emu_addrs *out)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;

	memset(out, 0, sizeof(*out));
	if (!name) {
		out->any = 1;
		return 0;
	}
	if (getaddrinfo(name, NULL, &hints, &res))
		return -ENOENT;
	for (ai = res; ai && out->n < EMU_ADDRS; ai = ai->ai_next) {
		struct sockaddr_storage sa = { 0 };
		size_t len;

		if (ai->ai_addrlen > sizeof(sa))
			continue;
		memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
		if (!addr_bytes(&sa, &len) || has_addr(out, &sa))
			continue;
		if (wildcard(&sa))
			out->any = 1;
		out->a[out->n++] = sa;
	}
	freeaddrinfo(res);
	return out->n ? 0 : -ENOENT;
}

/* Could one host reach both: one side any, or an address in common. */
static int overlap(const struct emu_addrs *x, const struct emu_addrs *y)
{
	if (x->any || y->any)
		return 1;
	for (int i = 0; i < x->n; i++)
		if (has_addr(y, &x->a[i]))
			return 1;
	return 0;
}

int emu_listen(struct oms_ctx *ctx, const char *addr, const char *port,
	       const struct oms_be_region *reg, void **lpriv)
{
	struct oms_emu *dev = emu_ctx_dev(ctx);
	struct emu_listener *free_e = NULL;
	struct emu_addrs addrs;
	int err = 0;

	if (!fits(port))
		return -EINVAL;
	if (emu_resolve(addr, &addrs))
		return -EADDRNOTAVAIL;	/* as on verbs */
	if (emu_dev_gone(dev))
		return -ENODEV;
	pthread_mutex_lock(&dev->listen_lock);
	for (int i = 0; i < EMU_LISTENERS; i++) {
		struct emu_listener *e = &dev->listeners->e[i];

		if (!e->used) {
			if (!free_e)
				free_e = e;
		} else if (!strcmp(e->port, port) &&
			   overlap(&e->addrs, &addrs)) {
			err = -EADDRINUSE;
		}
	}
	if (!err && !free_e)
		err = -ENOMEM;
	if (!err) {
		memset(free_e, 0, sizeof(*free_e));
		err = emu_window_open(dev, &reg->rmr, &free_e->rmr);
	}
	if (!err) {
		free_e->addrs = addrs;
		strcpy(free_e->port, port);
		free_e->gen = ++dev->listeners->gen;
		free_e->used = 1;
		*lpriv = free_e;
	}
	pthread_mutex_unlock(&dev->listen_lock);
	return err;
}

void emu_listener_close(struct oms_ctx *ctx, void *lpriv)
{
	struct oms_emu *dev = emu_ctx_dev(ctx);
	struct emu_listener *e = lpriv;

	pthread_mutex_lock(&dev->listen_lock);
	emu_window_close(dev, &e->rmr);
	e->used = 0;
	pthread_mutex_unlock(&dev->listen_lock);
}

/*
 * @ec's record of listener entry @e (listen_lock held), made if need be;
 * records of listeners since closed are dropped first, so a context keeps
 * at most one per entry however often it connects.  NULL: no memory.
 */
static struct emu_peer *peer_of(struct emu_ctx *ec, struct emu_listener *e)
{
	struct emu_peer *p;
	uint32_t k = 0;

	for (uint32_t i = 0; i < ec->npeer; i++) {
		p = &ec->peer[i];
		if (p->e->used && p->e->gen == p->gen)
			ec->peer[k++] = *p;
	}
	ec->npeer = k;
	for (uint32_t i = 0; i < ec->npeer; i++)
		if (ec->peer[i].e == e)
			return &ec->peer[i];	/* open, so e's own */
	p = realloc(ec->peer, (ec->npeer + 1) * sizeof(*p));
	if (!p)
		return NULL;
	ec->peer = p;
	p[ec->npeer] = (struct emu_peer){ .e = e, .gen = e->gen };
	return &p[ec->npeer++];
}

int emu_connect(struct oms_ctx *ctx, const char *host, const char *port,
		uint32_t timeout_ms, struct oms_rmr *rmr)
{
	struct emu_ctx *ec = EC(ctx);
	struct oms_emu *dev = ec->dev;
	struct emu_addrs addrs;
	struct emu_peer *peer;
	int err = -ECONNREFUSED;

	(void)timeout_ms;	/* nothing to wait for in one process */
	if (!fits(port))
		return -EINVAL;
	if (emu_resolve(host, &addrs))
		return -EHOSTUNREACH;	/* as on verbs */
	if (emu_dev_gone(dev))
		return -ENODEV;
	pthread_mutex_lock(&dev->listen_lock);
	for (int i = 0; i < EMU_LISTENERS; i++) {
		struct emu_listener *e = &dev->listeners->e[i];

		if (!e->used || strcmp(e->port, port) ||
		    !overlap(&e->addrs, &addrs))
			continue;
		peer = peer_of(ec, e);
		if (!peer) {
			err = -ENOMEM;
			break;
		}
		peer->n++;
		e->peers++;
		*rmr = e->rmr;
		err = 0;
		break;
	}
	pthread_mutex_unlock(&dev->listen_lock);
	return err;
}

int emu_listener_peers(struct oms_ctx *ctx, void *lpriv)
{
	struct oms_emu *dev = emu_ctx_dev(ctx);
	struct emu_listener *e = lpriv;
	int n;

	pthread_mutex_lock(&dev->listen_lock);
	n = e->peers;
	pthread_mutex_unlock(&dev->listen_lock);
	return n;
}

/* @ctx goes: it is no longer a peer of the listeners it connected to
 * (of those still open: a closed entry may hold another listener now). */
void emu_conn_leave(struct oms_ctx *ctx)
{
	struct emu_ctx *ec = EC(ctx);
	struct oms_emu *dev = ec->dev;

	pthread_mutex_lock(&dev->listen_lock);
	for (uint32_t i = 0; i < ec->npeer; i++) {
		struct emu_listener *e = ec->peer[i].e;

		if (e->used && e->gen == ec->peer[i].gen)
			e->peers -= (int)ec->peer[i].n;
	}
	pthread_mutex_unlock(&dev->listen_lock);
	free(ec->peer);
	ec->peer = NULL;
	ec->npeer = 0;
}
