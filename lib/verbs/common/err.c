// SPDX-License-Identifier: MIT
/*
 * Errors as both sides of the verbs backend report them: errno as a
 * negative value, and a work completion's status as an errno.  At the
 * bottom: they call nothing of the backend.
 */
#include <errno.h>

#include "verbs/common/verbs.h"

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
