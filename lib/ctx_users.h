/* SPDX-License-Identifier: MIT */
/*
 * The one door from objects built over the public API (lib/kvs/) into the
 * context layer: while such an object lives and keeps using its context's
 * regions, listeners or calls, oms_ctx_destroy() refuses with -EBUSY
 * instead of freeing them under it.  Atomic: a KVS writer may run on
 * another thread than its context's.  And the clock a latency is measured
 * on: the calling thread's model time where the context's device keeps
 * one (the emulated device's latency model), else CLOCK_MONOTONIC.  And
 * how long the context waits for a peer (its timeout_ms), which a
 * connection such an object makes on its own waits too.  Implemented in
 * lib/core/ctx.c.
 */
#ifndef OMS_CTX_USERS_H
#define OMS_CTX_USERS_H

#include <stdint.h>

struct oms_ctx;

void oms_ctx_user_get(struct oms_ctx *ctx);
void oms_ctx_user_put(struct oms_ctx *ctx);
uint64_t oms_ctx_clock_ns(struct oms_ctx *ctx);
uint32_t oms_ctx_timeout_ms(const struct oms_ctx *ctx);

#endif /* OMS_CTX_USERS_H */
