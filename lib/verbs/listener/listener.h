/* SPDX-License-Identifier: MIT */
/*
 * The listener as the backend's table sees it (lib/verbs/listener/): a
 * passive side that serves a context's regions, and nothing of how it
 * does so (listener_int.h: its agent server, serving threads and hold).
 * backend.c includes it; the initiator does not.
 */
#ifndef OMS_VERBS_LISTENER_H
#define OMS_VERBS_LISTENER_H

#include "verbs/common/verbs.h"

int vb_listen(struct oms_ctx *ctx, const char *addr, const char *port,
	      const struct oms_be_region *served, void **lpriv);
void vb_listener_close(struct oms_ctx *ctx, void *lpriv);
int vb_listener_peers(struct oms_ctx *ctx, void *lpriv);

#endif
