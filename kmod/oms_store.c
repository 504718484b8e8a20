// SPDX-License-Identifier: GPL-2.0
/*
 * oms_store.c - ORDERED_STORE, DOORBELL and FLUSH.
 *
 * The *_prepare() helpers run before the window is looked up: they check everything that
 * does not depend on the window and copy every user buffer into the kernel.
 * The *_exec() helpers run while using the window and touch no user memory:
 * they check the ranges against the window, then store.  A call that fails
 * therefore never writes a byte.
 */
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "oms_drv.h"
#include "oms_barrier.h"
#include "oms_compat.h"

/*
 * oms_range_check() - may a call touch [@offset, @offset + @len) of @w?
 * -ERANGE outside the window (or if the end overflows), -EACCES in a hole
 * (the device's MSI-X table or PBA), else 0.
 */
int oms_range_check(const struct oms_window *w, u64 offset, u64 len)
{
	u64 end;

	if (check_add_overflow(offset, len, &end) || end > w->len)
		return -ERANGE;
	if (oms_window_in_hole(w, offset, len))
		return -EACCES;
	return 0;
}

/*
 * oms_wc_copy() - copy @len bytes (a multiple of 8) to the window with
 * 64-bit write-combining stores, in ascending address order, no barrier.
 */
static void oms_wc_copy(void __iomem *dst, const u8 *src, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 8)
		__raw_writeq(get_unaligned((const u64 *)(src + i)), dst + i);
}

static bool oms_reserved_zero(const u64 *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i])
			return false;
	return true;
}

int oms_store_prepare(const struct oms_ordered_store *a,
		      struct oms_store_req *req)
{
	const struct oms_store_op *op;
	u64 total = 0;
	u32 i;
	int ret;

	memset(req, 0, sizeof(*req));
	if (a->flags & ~OMS_STORE_F_FLUSH ||
	    !oms_reserved_zero(a->reserved, ARRAY_SIZE(a->reserved)))
		return -EINVAL;
	if (!a->count || a->count > OMS_STORE_MAX_OPS)
		return -EINVAL;

	req->ops = memdup_user(u64_to_user_ptr(a->ops),
			       array_size(a->count, sizeof(*req->ops)));
	if (IS_ERR(req->ops)) {
		ret = PTR_ERR(req->ops);
		req->ops = NULL;
		return ret;
	}
	req->count = a->count;

	for (i = 0; i < req->count; i++) {
		op = &req->ops[i];
		if (op->reserved || op->cls > OMS_STORE_STRONG ||
		    !op->length || op->length % OMS_STORE_ALIGN ||
		    op->offset % OMS_STORE_ALIGN) {
			ret = -EINVAL;
			goto err;
		}
		total += op->length;
	}
	if (total > OMS_STORE_MAX_BYTES) {
		ret = -E2BIG;
		goto err;
	}

	/* charged to the caller's memory cgroup while it is held */
	req->data = kvmalloc(total, GFP_KERNEL_ACCOUNT);
	if (!req->data) {
		ret = -ENOMEM;
		goto err;
	}
	for (i = 0, total = 0; i < req->count; i++) {
		op = &req->ops[i];
		if (copy_from_user(req->data + total, u64_to_user_ptr(op->buf),
				   op->length)) {
			ret = -EFAULT;
			goto err;
		}
		total += op->length;
	}
	return 0;

err:
	oms_store_release(req);
	return ret;
}

void oms_store_release(struct oms_store_req *req)
{
	kvfree(req->data);
	kfree(req->ops);
	req->data = NULL;
	req->ops = NULL;
}

int oms_store_exec(struct oms_window *w, struct oms_ordered_store *a,
		   struct oms_store_req *req)
{
	/* a strong store follows the stores of earlier calls too */
	struct oms_order order = OMS_ORDER_UNKNOWN;
	const struct oms_store_op *op;
	const u8 *src = req->data;
	u32 i;

	int ret;

	for (i = 0; i < req->count; i++) {
		ret = oms_range_check(w, req->ops[i].offset,
				      req->ops[i].length);
		if (ret)
			return ret;
	}

	for (i = 0; i < req->count; i++) {
		op = &req->ops[i];
		oms_order_store(&order, op->cls);
		oms_wc_copy(w->base + op->offset, src, op->length);
		src += op->length;
	}
	if (a->flags & OMS_STORE_F_FLUSH)
		oms_wc_drain(&order);
	a->barriers = oms_order_fences(&order);
	return 0;
}

int oms_doorbell_prepare(const struct oms_doorbell *a, u8 **wqe)
{
	bool bf = a->flags & OMS_DB_BLUEFLAME;
	u32 align = bf ? OMS_BF_CHUNK : 8;
	void *buf;

	*wqe = NULL;
	if (a->flags & ~OMS_DB_BLUEFLAME || a->reserved0 ||
	    !oms_reserved_zero(a->reserved, ARRAY_SIZE(a->reserved)))
		return -EINVAL;
	if (!a->wqe_len || a->wqe_len % align || a->wqe_offset % align ||
	    a->db_offset % align || a->dbrec_offset % 4)
		return -EINVAL;
	if (bf ? a->wqe_len > OMS_BF_SIZE || a->db :
		 a->wqe_len > OMS_STORE_MAX_BYTES)
		return -EINVAL;

	/* up to 1 MiB: not one contiguous allocation, and charged */
	buf = kvmalloc(a->wqe_len, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, u64_to_user_ptr(a->wqe), a->wqe_len)) {
		kvfree(buf);
		return -EFAULT;
	}
	*wqe = buf;
	return 0;
}

/* oms_bf_copy() - BlueFlame: the WQE in 64-byte chunks, no barrier between. */
static void oms_bf_copy(void __iomem *reg, const u8 *wqe, u32 len)
{
	u32 off;

	for (off = 0; off < len; off += OMS_BF_CHUNK)
		oms_wc_copy(reg + off, wqe + off, OMS_BF_CHUNK);
}

int oms_doorbell_exec(struct oms_window *w, struct oms_doorbell *a,
		      const u8 *wqe)
{
	bool bf = a->flags & OMS_DB_BLUEFLAME;
	void __iomem *base = w->base;
	struct oms_order order = {};
	int ret;

	ret = oms_range_check(w, a->wqe_offset, a->wqe_len);
	if (!ret)
		ret = oms_range_check(w, a->dbrec_offset, 4);
	if (!ret)
		ret = oms_range_check(w, a->db_offset, bf ? a->wqe_len : 8);
	if (ret)
		return ret;

	/* 1. weak store: the WQE */
	oms_order_store(&order, OMS_STORE_WEAK);
	oms_wc_copy(base + a->wqe_offset, wqe, a->wqe_len);

	/* 2. strong store: the doorbell record, after the WQE */
	oms_order_store(&order, OMS_STORE_STRONG);
	__raw_writel(a->dbrec, base + a->dbrec_offset);

	/* 3. strong store: the doorbell (or the BlueFlame copy), then push */
	oms_order_store(&order, OMS_STORE_STRONG);
	if (bf)
		oms_bf_copy(base + a->db_offset, wqe, a->wqe_len);
	else
		__raw_writeq(a->db, base + a->db_offset);
	oms_push_doorbell(&order);

	a->barriers = oms_order_fences(&order);
	return 0;
}

int oms_flush_check(const struct oms_flush *a)
{
	if (a->flags || a->offset % 4 ||
	    !oms_reserved_zero(a->reserved, ARRAY_SIZE(a->reserved)))
		return -EINVAL;
	return 0;
}

int oms_flush_exec(struct oms_window *w, struct oms_flush *a)
{
	struct oms_order order = {};
	int ret = oms_range_check(w, a->offset, 4);

	if (ret)
		return ret;
	a->value = oms_flush_read(&order, w->base + a->offset);
	return 0;
}
