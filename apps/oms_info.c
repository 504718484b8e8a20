// SPDX-License-Identifier: MIT
/*
 * oms_info: open a context with the default backend, print the capability
 * query (is destination ordering done in hardware or emulated?) and run
 * one ordered round trip: weak data, strong flag, acquire read back.
 */
#include <stdio.h>
#include <string.h>

#include "oms.h"

int main(void)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	char mem[256], out[256], msg[64] = "hello, ordered world";
	uint64_t flag = 1;
	struct oms_ctx *ctx;
	struct oms_mr *mr;
	struct oms_rmr rmr;
	int err;

	err = oms_ctx_create(NULL, &ctx);
	if (err) {
		/* why, without a context: what the default would choose */
		oms_query_caps(NULL, &caps);
		fprintf(stderr, "oms_info: oms_ctx_create: %s%s%s\n",
			strerror(-err), caps.backend_why[0] ? ": " : "",
			caps.backend_why);
		return 1;
	}
	oms_query_caps(ctx, &caps);
	printf("backend:              %s\n", caps.backend_name);
	printf("chosen because:       %s\n", caps.backend_why);
	printf("destination ordering: %s\n", caps.dest_ordering);
	printf("acquire reads:        %s\n",
	       caps.flags & OMS_CAP_ACQUIRE_READ ? "yes" : "no");
	printf("strong stores:        %s\n",
	       caps.flags & OMS_CAP_STRONG_STORE ? "yes" : "no");
	printf("responder hold:       %s\n",
	       caps.flags & OMS_CAP_RESP_HOLD ? "yes" : "no");
	printf("read ordering at:     %s\n",
	       caps.read_order == OMS_ORDER_NIC ? "NIC" :
	       caps.read_order == OMS_ORDER_RC ? "RC" : "RC-opt");
	printf("nodes, queue depth:   %u, %u\n", caps.max_nodes,
	       caps.queue_depth);
	printf("max op length:        %llu\n",
	       (unsigned long long)caps.max_op_len);

	memset(mem, 0, sizeof(mem));
	err = oms_mr_reg(ctx, mem, sizeof(mem), OMS_ACCESS_ALL, &mr);
	if (!err)
		err = oms_mr_remote(mr, &rmr);
	if (!err)
		err = oms_put(ctx, &rmr, 0, msg, sizeof(msg), OMS_STORE_WEAK);
	if (!err)
		err = oms_put(ctx, &rmr, 128, &flag, 8, OMS_STORE_STRONG);
	if (!err)
		err = oms_fence(ctx, rmr.dest);
	if (!err)
		err = oms_get(ctx, out, &rmr, 0, sizeof(out), OMS_READ_ACQUIRE);
	if (!err)
		err = oms_quiet(ctx);
	printf("round trip:           %s (%s)\n", err ? "FAILED" : "ok",
	       err ? strerror(-err) : out);
	oms_ctx_destroy(ctx);
	return err ? 1 : 0;
}
