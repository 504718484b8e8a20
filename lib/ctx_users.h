/* SPDX-License-Identifier: MIT */
/*
 * The one door from objects built over the public API (lib/kvs/) into the
 * context layer: while such an object lives and keeps using its context's
 * regions, listeners or calls, oms_ctx_destroy() refuses with -EBUSY
 * instead of freeing them under it.  Atomic: a KVS writer may run on
 * another thread than its context's.  Implemented in lib/core/ctx.c.
 */
#ifndef OMS_CTX_USERS_H
#define OMS_CTX_USERS_H

struct oms_ctx;

void oms_ctx_user_get(struct oms_ctx *ctx);
void oms_ctx_user_put(struct oms_ctx *ctx);

#endif /* OMS_CTX_USERS_H */
