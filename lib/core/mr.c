// SPDX-License-Identifier: MIT
/*
 * Memory regions: local memory a context exposes to initiators, with the
 * key every operation on it must carry (seed 003), and coherent host
 * access to it (writes through oms_mr_write are seen by the device as
 * coherence invalidations, which is what lets the RC-opt read engine
 * squash stale speculative reads, seed 004).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "oms_priv.h"

/*
 * No memory can be [@addr, @addr+@len) when the range is longer than any
 * object may be (pointer differences within it would overflow) or wraps
 * past the end of the address space (its end is not an address).  Every
 * backend trusts a region's bounds afterwards: the emulated device
 * indexes base + offset for whatever offset is below the length, and
 * ibv_reg_mr must not be handed such a range either.
 */
static int mr_range_check(const void *addr, size_t len)
{
	if (len > PTRDIFF_MAX)
		return -EOVERFLOW;
	if (len > UINTPTR_MAX - (uintptr_t)addr)
		return -EINVAL;
	return 0;
}

OMS_EXPORT int oms_mr_reg(struct oms_ctx *ctx, void *addr, size_t len,
			  uint32_t access, struct oms_mr **out)
{
	struct oms_mr *mr;
	int err;

	if (!ctx || !addr || !len || !out || !access ||
	    (access & ~OMS_ACCESS_ALL))
		return -EINVAL;
	err = mr_range_check(addr, len);
	if (err)
		return err;
	if (ctx->gone)
		return ctx->gone;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	err = ctx->be->mr_reg(ctx, addr, len, access, &mr->rmr);
	if (err) {
		free(mr);
		return err;
	}
	mr->ctx = ctx;
	mr->addr = addr;
	mr->len = len;
	mr->next = ctx->mrs;
	ctx->mrs = mr;
	*out = mr;
	return 0;
}

OMS_EXPORT int oms_mr_dereg(struct oms_mr *mr)
{
	struct oms_mr **pp;

	if (!mr || !mr->ctx)
		return -EINVAL;
	for (pp = &mr->ctx->mrs; *pp && *pp != mr; pp = &(*pp)->next)
		;
	if (!*pp)
		return -EINVAL;
	if (oms_mr_listened(mr))
		return -EBUSY;
	*pp = mr->next;
	mr->ctx->be->mr_dereg(mr->ctx, &mr->rmr);
	free(mr);
	return 0;
}

OMS_EXPORT int oms_mr_remote(const struct oms_mr *mr, struct oms_rmr *rmr)
{
	if (!mr || !rmr)
		return -EINVAL;
	*rmr = mr->rmr;
	return 0;
}

static int range_ok(const struct oms_mr *mr, uint64_t off, size_t len)
{
	return off <= mr->len && len <= mr->len - off;
}

OMS_EXPORT int oms_mr_write(struct oms_mr *mr, uint64_t off, const void *src,
			    size_t len)
{
	if (!mr || !src || !len)
		return -EINVAL;
	if (!range_ok(mr, off, len))
		return -ERANGE;
	return mr->ctx->be->mr_write(mr->ctx, &mr->rmr, off, src, len);
}

OMS_EXPORT int oms_mr_read(struct oms_mr *mr, uint64_t off, void *dst,
			   size_t len)
{
	if (!mr || !dst || !len)
		return -EINVAL;
	if (!range_ok(mr, off, len))
		return -ERANGE;
	return mr->ctx->be->mr_read(mr->ctx, &mr->rmr, off, dst, len);
}
