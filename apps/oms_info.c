// SPDX-License-Identifier: MIT
/*
 * oms_info: open a context with the default backend, print the capability
 * query (is destination ordering done in hardware or emulated?) and run
 * one ordered round trip: weak data, strong flag, acquire read back.
 *
 *   oms_info [--json]    as text, or one JSON object of the same
 *   oms_info --help
 *
 * Exit: 0; 1 no context, or the round trip failed; 2 bad arguments.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oms.h"

/* The name it was run as, for its messages. */
static const char *prog = "oms_info";

/* What it found, a line of text or a JSON field each. */
struct row {
	const char *label;	/* the text's, with its colon */
	const char *key;	/* the JSON object's */
	char val[192];
	int bare;		/* a JSON number or true/false, not a string */
};

#define MAX_ROWS 16

static struct row rows[MAX_ROWS];
static unsigned nrows;

static void add(const char *label, const char *key, int bare,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(const char *label, const char *key, int bare,
		const char *fmt, ...)
{
	struct row *r = &rows[nrows < MAX_ROWS ? nrows++ : MAX_ROWS - 1];
	va_list ap;

	r->label = label;
	r->key = key;
	r->bare = bare;
	va_start(ap, fmt);
	vsnprintf(r->val, sizeof(r->val), fmt, ap);
	va_end(ap);
}

/* @s as a JSON string, quotes and escapes included. */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_rows(int json)
{
	for (unsigned i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		if (!json) {
			if (r->label)
				printf("%-22s%s\n", r->label, r->val);
			continue;
		}
		printf("%s\"%s\":", i ? "," : "{", r->key);
		if (r->bare)
			fputs(r->val, stdout);
		else
			json_string(r->val);
	}
	if (json)
		printf("}\n");
}

static const char *yes(uint32_t flags, uint32_t cap, int json)
{
	return flags & cap ? json ? "true" : "yes" : json ? "false" : "no";
}

static void usage(FILE *f)
{
	fprintf(f, "usage: %s [--json]\n"
		"Which backend a context gets on this machine and why, what "
		"it orders, and one\nordered round trip: weak data, a strong "
		"flag, an acquire read back.\n\n"
		"      --json      the same as one JSON object on stdout\n"
		"  -h, --help      this text; runs nothing\n\n"
		"Exit status: 0; 1 no context, or the round trip failed; 2 bad "
		"arguments.\n", prog);
}

/* Its arguments: 0 to go on, else the exit status. */
static int parse(int argc, char **argv, int *json)
{
	const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;

	if (argc > 0 && argv[0][0])
		prog = slash && slash[1] ? slash + 1 : argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			*json = 1;
		} else if (!strcmp(argv[i], "--help") ||
			   !strcmp(argv[i], "-h")) {
			usage(stdout);
			return -1;
		} else {
			fprintf(stderr, "%s: %s '%s': it takes --json and "
				"--help only\n", prog, argv[i][0] == '-' ?
				"unknown option" : "unexpected argument",
				argv[i]);
			fprintf(stderr, "usage: %s [--json] ('%s --help' says "
				"more)\n", prog, prog);
			return 2;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	char mem[256], out[256], msg[64] = "hello, ordered world";
	uint64_t flag = 1;
	struct oms_ctx *ctx;
	struct oms_mr *mr;
	struct oms_rmr rmr;
	int err, json = 0, rc = parse(argc, argv, &json);

	if (rc)
		return rc < 0 ? 0 : rc;
	add(NULL, "liboms", 0, "%s", oms_version());
	err = oms_ctx_create(NULL, &ctx);
	if (err) {
		/* why, without a context: what the default would choose */
		oms_query_caps(NULL, &caps);
		fprintf(stderr, "%s: oms_ctx_create: %s%s%s\n", prog,
			strerror(-err), caps.backend_why[0] ? ": " : "",
			caps.backend_why);
		add(NULL, "error", 0, "%s", strerror(-err));
		add(NULL, "why", 0, "%s", caps.backend_why);
		if (json)
			print_rows(json);
		return 1;
	}
	oms_query_caps(ctx, &caps);
	add("backend:", "backend", 0, "%s", caps.backend_name);
	add("chosen because:", "chosen_because", 0, "%s", caps.backend_why);
	add("destination ordering:", "destination_ordering", 0, "%s",
	    caps.dest_ordering);
	add("acquire reads:", "acquire_reads", json, "%s",
	    yes(caps.flags, OMS_CAP_ACQUIRE_READ, json));
	add("strong stores:", "strong_stores", json, "%s",
	    yes(caps.flags, OMS_CAP_STRONG_STORE, json));
	add("responder hold:", "responder_hold", json, "%s",
	    yes(caps.flags, OMS_CAP_RESP_HOLD, json));
	add("read ordering at:", "read_ordering", 0, "%s",
	    caps.read_order == OMS_ORDER_NIC ? "NIC" :
	    caps.read_order == OMS_ORDER_RC ? "RC" : "RC-opt");
	if (json) {
		add(NULL, "nodes", 1, "%u", caps.max_nodes);
		add(NULL, "queue_depth", 1, "%u", caps.queue_depth);
	} else {
		add("nodes, queue depth:", NULL, 0, "%u, %u", caps.max_nodes,
		    caps.queue_depth);
	}
	add("max op length:", "max_op_length", 1, "%llu",
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
	if (json) {
		add(NULL, "round_trip", 0, "%s", err ? "FAILED" : "ok");
		add(NULL, err ? "error" : "read_back", 0, "%s",
		    err ? strerror(-err) : out);
	} else {
		add("round trip:", NULL, 0, "%s (%s)", err ? "FAILED" : "ok",
		    err ? strerror(-err) : out);
	}
	print_rows(json);
	oms_ctx_destroy(ctx);
	return err ? 1 : 0;
}
