// SPDX-License-Identifier: MIT
/*
 * The bottom of the initiator: an operation finished (its completion for
 * the engine, a get's bounce buffer copied out, an atomic's old value
 * attached).  Everything above may call it; it calls nothing of the
 * backend.
 */
#include <string.h>

#include "verbs/common/verbs.h"
#include "verbs/initiator/initiator.h"

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
