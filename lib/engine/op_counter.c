// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "engine/op_counter.h"

void oms_oc_init(struct oms_op_counter *oc)
{
	memset(oc, 0, sizeof(*oc));
}

int oms_oc_issue(struct oms_op_counter *oc, uint32_t n)
{
	if (!oc || n == 0)
		return -EINVAL;
	oc->stage[OMS_OC_ISSUED] += n;
	oc->started += n;
	return 0;
}

int oms_oc_advance(struct oms_op_counter *oc, enum oms_oc_stage from,
		   uint32_t n)
{
	if (!oc || (unsigned int)from >= OMS_OC_NSTAGES || n == 0 ||
	    oc->stage[from] < n)
		return -EINVAL;
	oc->stage[from] -= n;
	if (from == OMS_OC_AWAITING_ACK)
		oc->completed += n;
	else
		oc->stage[from + 1] += n;
	return 0;
}

int oms_oc_fail(struct oms_op_counter *oc, enum oms_oc_stage from,
		int status)
{
	if (!oc || (unsigned int)from >= OMS_OC_NSTAGES || status >= 0 ||
	    oc->stage[from] == 0)
		return -EINVAL;
	oc->stage[from]--;
	oc->failed++;
	/* The first real error: an op cancelled because it followed a
	 * failed one (-ECANCELED) must not hide why. */
	if (!oc->first_error ||
	    (oc->first_error == -ECANCELED && status != -ECANCELED))
		oc->first_error = status;
	return 0;
}

int oms_oc_local_done(const struct oms_op_counter *oc)
{
	return !oc->stage[OMS_OC_ISSUED] && !oc->stage[OMS_OC_PROCESSING];
}

int oms_oc_quiet_done(const struct oms_op_counter *oc)
{
	return oms_oc_outstanding(oc) == 0;
}

uint64_t oms_oc_outstanding(const struct oms_op_counter *oc)
{
	return oc->stage[OMS_OC_ISSUED] + oc->stage[OMS_OC_PROCESSING] +
	       oc->stage[OMS_OC_AWAITING_ACK];
}

int oms_oc_take_error(struct oms_op_counter *oc)
{
	int e = oc->first_error;

	oc->first_error = 0;
	return e;
}
