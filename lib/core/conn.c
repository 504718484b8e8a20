// SPDX-License-Identifier: MIT
/*
 * Connections: how an initiator learns a remote region.  The owner of a
 * region listens on an address and port and hands its descriptor to each
 * initiator that connects (librdmacm private data on verbs, a process-wide
 * table on emu); the initiator checks what it got before using it.  This
 * file checks arguments and keeps the context's listener list; the
 * backends do the work.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oms_priv.h"

#define OMS_NAME_MAX	256	/* host names and ports */

static int name_ok(const char *s, int may_be_empty)
{
	size_t n;

	if (!s)
		return may_be_empty;
	n = strnlen(s, OMS_NAME_MAX);
	return n < OMS_NAME_MAX && (n > 0 || may_be_empty);
}

OMS_EXPORT int oms_listen(struct oms_ctx *ctx, const char *addr,
			  const char *port, struct oms_mr *mr,
			  struct oms_listener **out)
{
	struct oms_listener *l;
	struct oms_be_region reg;
	int err;

	if (!ctx || !mr || mr->ctx != ctx || !out || !name_ok(addr, 1) ||
	    !name_ok(port, 0))
		return -EINVAL;
	if (ctx->gone)
		return ctx->gone;
	if (!ctx->be->listen)
		return -EOPNOTSUPP;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	reg = (struct oms_be_region){ .addr = mr->addr, .len = mr->len,
				      .rmr = mr->rmr };
	err = ctx->be->listen(ctx, addr && *addr ? addr : NULL, port, &reg,
			      &l->bpriv);
	if (err) {
		free(l);
		return err;
	}
	l->ctx = ctx;
	l->mr = mr;
	l->next = ctx->listeners;
	ctx->listeners = l;
	*out = l;
	return 0;
}

OMS_EXPORT int oms_listener_close(struct oms_listener *l)
{
	struct oms_listener **pp;

	if (!l || !l->ctx)
		return -EINVAL;
	for (pp = &l->ctx->listeners; *pp && *pp != l; pp = &(*pp)->next)
		;
	if (!*pp)
		return -EINVAL;
	*pp = l->next;
	l->ctx->be->listener_close(l->ctx, l->bpriv);
	free(l);
	return 0;
}

OMS_EXPORT int oms_listener_peers(const struct oms_listener *l)
{
	if (!l || !l->ctx)
		return -EINVAL;
	return l->ctx->be->listener_peers(l->ctx, l->bpriv);
}

OMS_EXPORT int oms_connect(struct oms_ctx *ctx, const char *host,
			   const char *port, uint32_t timeout_ms,
			   struct oms_rmr *rmr)
{
	struct oms_rmr r;
	int err;

	if (!ctx || !rmr || !name_ok(host, 0) || !name_ok(port, 0) ||
	    timeout_ms > 600000)
		return -EINVAL;
	if (ctx->gone)
		return ctx->gone;
	if (!ctx->be->connect)
		return -EOPNOTSUPP;
	memset(&r, 0, sizeof(r));
	err = ctx->be->connect(ctx, host, port, timeout_ms ? timeout_ms : 5000,
			       &r);
	if (err)
		return err;
	*rmr = r;
	return 0;
}

/* A region a listener serves cannot go away under it. */
int oms_mr_listened(const struct oms_mr *mr)
{
	for (const struct oms_listener *l = mr->ctx->listeners; l; l = l->next)
		if (l->mr == mr)
			return 1;
	return 0;
}
