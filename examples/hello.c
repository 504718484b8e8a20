// SPDX-License-Identifier: MIT
/*
 * hello: the message-passing pattern liboms exists for, in one process on
 * the emulated device.  The data goes as a weak put and the flag as a
 * strong put: the flag is never visible before the data, and the caller
 * never waits for the data to land before issuing the flag.  An acquire
 * get then reads both back, and oms_quiet() waits for everything.
 *
 *   cc hello.c $(pkg-config --cflags --libs liboms) -o hello && ./hello
 */
#include <stdio.h>
#include <string.h>

#include <oms.h>

int main(int argc, char **argv)
{
	struct oms_ctx_attr attr = {
		.size = sizeof(attr),
		.comp_mask = OMS_CTX_ATTR_BACKEND,
		.backend = OMS_BACKEND_EMU,	/* no NIC needed */
	};
	char region[4096] = "", back[64] = "";
	char msg[64] = "hello, ordered world";
	uint64_t flag = 1, flag_back = 0;
	struct oms_ctx *ctx;
	struct oms_mr *mr;
	struct oms_rmr dst;
	int err;

	if (argc > 1) {	/* nothing to choose: --help says so */
		int help = argc == 2 && (!strcmp(argv[1], "--help") ||
					 !strcmp(argv[1], "-h"));

		if (!help)
			fprintf(stderr, "hello: no arguments, '%s' given\n",
				argv[1]);
		fprintf(help ? stdout : stderr, "usage: hello\nData with a "
			"weak put, its flag with a strong one, both read back "
			"with an\nacquire get, in this process on the emulated "
			"device.\n");
		return help ? 0 : 2;
	}

	err = oms_ctx_create(&attr, &ctx);
	if (err) {
		fprintf(stderr, "hello: oms_ctx_create: %s\n", strerror(-err));
		return 1;
	}
	/* The destination: a region of this node that others may access. */
	err = oms_mr_reg(ctx, region, sizeof(region), OMS_ACCESS_ALL, &mr);
	if (!err)
		err = oms_mr_remote(mr, &dst);
	/* Data, then flag: the strong store orders itself after the weak. */
	if (!err)
		err = oms_put(ctx, &dst, 0, msg, sizeof(msg), OMS_STORE_WEAK);
	if (!err)
		err = oms_put(ctx, &dst, 256, &flag, sizeof(flag),
			      OMS_STORE_STRONG);
	/* An acquire get: no later operation is performed before it. */
	if (!err)
		err = oms_get(ctx, &flag_back, &dst, 256, sizeof(flag_back),
			      OMS_READ_ACQUIRE);
	if (!err)
		err = oms_get(ctx, back, &dst, 0, sizeof(back),
			      OMS_READ_RELAXED);
	/* Completion: every operation above has been performed. */
	if (!err)
		err = oms_quiet(ctx);
	if (err) {
		fprintf(stderr, "hello: %s\n", strerror(-err));
		oms_ctx_destroy(ctx);
		return 1;
	}
	printf("flag %llu, data \"%s\"\n", (unsigned long long)flag_back, back);
	oms_mr_dereg(mr);
	oms_ctx_destroy(ctx);
	return flag_back == 1 && !strcmp(back, msg) ? 0 : 1;
}
