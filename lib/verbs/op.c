// SPDX-License-Identifier: MIT
/*
 * The bottom of the verbs backend: an operation finished (its completion
 * for the engine, a get's bounce buffer copied out, an atomic's old value
 * attached), a work completion's status as an errno, and errno itself.
 * Everything above may call these; they call nothing of the backend.
 */
#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

/* errno as a negative value, @fallback when a library left it at 0. */
int vb_errno(int fallback)
{
	return errno > 0 ? -errno : fallback;
}

int vb_wc_status(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_SUCCESS:		return 0;
	case IBV_WC_REM_ACCESS_ERR:	return -EACCES;	/* key or range */
	case IBV_WC_MW_BIND_ERR:	return -EACCES;
	case IBV_WC_RETRY_EXC_ERR:	return -ETIMEDOUT; /* peer gone */
	case IBV_WC_RNR_RETRY_EXC_ERR:	return -ETIMEDOUT;
	case IBV_WC_WR_FLUSH_ERR:	return -ECONNRESET;
	case IBV_WC_LOC_LEN_ERR:	return -EMSGSIZE;
	case IBV_WC_LOC_PROT_ERR:	return -EFAULT;
	case IBV_WC_REM_INV_REQ_ERR:	return -EINVAL;
	case IBV_WC_REM_OP_ERR:		return -EREMOTEIO;
	case IBV_WC_REM_ABORT_ERR:	return -ECONNABORTED;
	case IBV_WC_BAD_RESP_ERR:	return -EPROTO;
	case IBV_WC_FATAL_ERR:		return -ENODEV;
	default:			return -EIO;
	}
}

static void wc_push(struct vb_ctx *vc, const struct oms_wc *wc)
{
	vc->wc[vc->wc_tail++ % oms_be_view(vc->ctx)->qdepth] = *wc;
}

void vb_op_finish(struct vb_ctx *vc, struct vb_op *op, int status)
{
	struct oms_wc wc = { .slot = op->wr.slot, .status = status };

	if (!status && op->wr.op == OMS_WR_GET && op->loc == VB_LOC_BOUNCE)
		memcpy((void *)(uintptr_t)op->wr.local, op->lbuf, op->wr.len);
	if (!status && (op->wr.op == OMS_WR_FADD || op->wr.op == OMS_WR_CAS))
		wc.value = vc->result[op->wr.slot];
	if (op->tmp) {
		ibv_dereg_mr(op->tmp);
		op->tmp = NULL;
	}
	if (!op->src_counted) {
		op->src_counted = 1;
		vc->src_done++;
	}
	if (op->pw_serial && op->wr.dest < VB_MAX_CONN &&
	    vc->conn[op->wr.dest].pw.serial == op->pw_serial)
		__atomic_fetch_add(&vc->conn[op->wr.dest].pw.done, 1,
				   __ATOMIC_RELEASE);
	op->pw_serial = 0;
	vc->progress++;
	wc_push(vc, &wc);
}
