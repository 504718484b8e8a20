/* SPDX-License-Identifier: MIT */
/*
 * Per-context operation counters (seed 003, IBM US 8214604: per-context
 * counters, local and global fences; seed 001, NVSHMEM quiet).  Pure.
 *
 * Every operation a context starts (put, get, atomic, flush) walks
 *
 *   issued  --start-->  processing  --sent-->  awaiting_ack  --complete--> done
 *
 * issued:       accepted from the caller, not yet taken by the transport;
 * processing:   the transport is reading the source buffer;
 * awaiting_ack: the source buffer is free again, the remote side has not
 *               yet said the operation is visible (or, for a get, the data
 *               has not arrived).
 *
 * A local fence is satisfied when nothing is issued or processing: every
 * source buffer may be reused (L16).  Quiet is satisfied when nothing at all
 * is outstanding: every earlier operation is complete and visible (L15).
 * The counters belong to one context, so a fence never waits for another
 * context's operations (L19).
 *
 * An operation may fail in any stage; oms_oc_fail() retires it with its
 * status, which the next fence or quiet reports (L22): a failure never
 * leaves a counter raised, so nothing hangs.
 */
#ifndef OMS_ENGINE_OP_COUNTER_H
#define OMS_ENGINE_OP_COUNTER_H

#include <stdint.h>

enum oms_oc_stage {
	OMS_OC_ISSUED = 0,
	OMS_OC_PROCESSING = 1,
	OMS_OC_AWAITING_ACK = 2,
	OMS_OC_NSTAGES = 3,
};

struct oms_op_counter {
	uint64_t stage[OMS_OC_NSTAGES];	/* operations in each stage */
	uint64_t started, completed, failed;
	int first_error;
};

void oms_oc_init(struct oms_op_counter *oc);

/* @n new operations accepted.  Returns 0, -EINVAL (n == 0). */
int oms_oc_issue(struct oms_op_counter *oc, uint32_t n);

/*
 * Move @n operations from stage @from to the next stage, or out of the
 * last one (complete).  Returns 0, or -EINVAL if @from is not a stage or
 * fewer than @n operations are in it; nothing changes then.
 */
int oms_oc_advance(struct oms_op_counter *oc, enum oms_oc_stage from,
		   uint32_t n);

/*
 * Retire one operation that failed in stage @from with @status (< 0).
 * Returns 0, -EINVAL (bad stage, empty stage, status >= 0).
 */
int oms_oc_fail(struct oms_op_counter *oc, enum oms_oc_stage from,
		int status);

/* Local fence condition: all source buffers are free. */
int oms_oc_local_done(const struct oms_op_counter *oc);

/* Quiet condition: nothing outstanding. */
int oms_oc_quiet_done(const struct oms_op_counter *oc);

/* Outstanding operations in all stages. */
uint64_t oms_oc_outstanding(const struct oms_op_counter *oc);

/* First failure status since the last call, or 0; clears it.  A real
 * error wins over -ECANCELED (an op cancelled behind a failed one). */
int oms_oc_take_error(struct oms_op_counter *oc);

#endif
