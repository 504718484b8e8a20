// SPDX-License-Identifier: MIT
/*
 * oms_probe: what does this device order?  Users of RDMA NICs keep asking
 * whether READ data is placed in order, what IBV_SEND_FENCE does, whether
 * a write's completion means a responder can see it, and what each fence
 * and flush costs.  This tool answers by measurement, on three targets:
 *
 *   verbs  a live RDMA device (ConnectX, Soft-RoCE) between this host and
 *          an `oms_probe --listen` on the peer, with plain verbs
 *   emu    liboms's emulated device, through the classes that add no
 *          ordering of their own (--chaos: with its reordering on)
 *   kmod   an oms.ko window (mapped, and through the module's ioctl):
 *          the cost of each fence and flush
 *
 * Each ordering probe runs an access pattern --rounds times and counts the
 * outcomes an ordering would forbid ("violated") out of the chances an
 * observer had to see one ("checks"); the litmus id (../docs/ordering.md)
 * is beside it.  "allowed" rows are measured only; a violation of a
 * "required" row (IBV_SEND_FENCE, quiet on the emulated device) is a
 * device bug and the exit status is 1.  Capability rows say what the
 * driver claims (ibv_query_qp_data_in_order, relaxed ordering).  The table
 * goes to stdout, one JSON record per row with --json (the capability
 * report).  Exit: 0; 1 a required order was violated or a target failed;
 * 2 bad flags.
 */
#include <stdio.h>
#include <string.h>

#include "bench_args.h"
#include "probe/probe.h"

enum target { T_EMU, T_VERBS, T_KMOD, T_COUNT };

static const char *const target_names[] = { "emu", "verbs", "kmod", NULL };

static struct {
	struct probe_opts p;
	uint32_t targets;
	int listen;
} args = {
	.p = { .rounds = 2048, .cost_rounds = 200, .port = 18540,
	       .timeout_ms = 20000 },
	.targets = 1u << T_EMU | 1u << T_KMOD,
};

static struct ba_rdma rdma;

static const struct ba_opt opts[] = {
	{ 0, "server", NULL, BA_STRING, "HOST", "probe the verbs device "
	  "between here and HOST (which runs oms_probe --listen)",
	  &args.p.server, .group = 1 },
	{ 0, "listen", NULL, BA_FLAG, NULL, "be the verbs responder for one "
	  "client, then exit", &args.listen, .group = 1 },
	{ 0, "bind", NULL, BA_STRING, "ADDR", "--listen: the local address "
	  "(default: every one)", &args.p.bind, .group = 0 },
	{ 'p', "port", NULL, BA_UINT, "PORT", "the verbs port", &args.p.port,
	  .min = 1, .max = 65535 },
	{ 0, "targets", NULL, BA_SET, "SET", "what to probe (default emu,kmod;"
	  " verbs too with --server)", &args.targets, .names = target_names },
	{ 'n', "rounds", "iters", BA_UINT, "N", "patterns per ordering probe",
	  &args.p.rounds, .min = 32, .max = 100000000, .step = 32 },
	{ 0, "cost-rounds", NULL, BA_UINT, "N", "samples per cost (median)",
	  &args.p.cost_rounds, .min = 1, .max = 10000000 },
	{ 0, "chaos", NULL, BA_UINT, "SEED", "emu: the device reorders all it "
	  "may, from SEED (0: in order)", &args.p.chaos, .flags = BA_U64,
	  .min = 0, .max = UINT64_MAX },
	{ 0, "dev", NULL, BA_STRING, "PATH", "kmod: the device node "
	  "(default /dev/oms)", &args.p.dev, .group = 0 },
	{ 0, "timeout-ms", NULL, BA_UINT, "MS", "a completion or a peer "
	  "that takes longer is a failure", &args.p.timeout_ms, .min = 100,
	  .max = 3600000 },
	BA_OPTS_RDMA(&rdma),
};

static struct ba ba = {
	.name = "oms_probe", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.about = "What does this device order?  Litmus patterns on a live "
		 "RDMA device, the emulated device and an oms.ko window; "
		 "violations counted, fences and flushes timed.",
	.epilog = "Exit status: 0; 1 a required order was violated or a "
		  "target failed; 2 bad flags.",
};

static struct probe_report rep;

const char *probe_prog = "oms_probe";

int main(int argc, char **argv)
{
	struct probe_opts *o = &args.p;
	int rc = ba_parse(&ba, argc, argv), fail = 0, err;
	unsigned bad;

	if (rc != BA_GO_ON)
		return rc;
	probe_prog = ba.prog;
	if (args.listen) {
		if (ba_seen(&ba, "targets"))
			return ba_fail(&ba, "--listen serves verbs only: "
				       "--targets does not apply");
		rc = ba_rdma_apply(&ba, &rdma, 0);
		if (rc != BA_GO_ON)
			return rc;
		ba_close(&ba);
		return probe_verbs_server(o) ? 1 : 0;
	}
	if (o->server && !ba_seen(&ba, "targets"))
		args.targets |= 1u << T_VERBS;
	if ((args.targets & 1u << T_VERBS) && !o->server)
		return ba_fail(&ba, "--targets verbs needs --server HOST");
	if (o->bind)
		return ba_fail(&ba, "--bind applies to --listen only");
	rc = ba_rdma_apply(&ba, &rdma, !(args.targets & 1u << T_VERBS));
	if (rc != BA_GO_ON)
		return rc;
	ba_set_backend(&ba, args.targets & 1u << T_VERBS ? "verbs" : "emu");
	if (args.targets & 1u << T_VERBS) {
		err = probe_verbs_client(o, &rep);
		fail |= err != 0;
	}
	if (args.targets & 1u << T_EMU) {
		err = probe_emu(o, &rep);
		fail |= err != 0;
	}
	if (args.targets & 1u << T_KMOD)
		fail |= probe_kmod(o, &rep) != 0;
	if (!ba.json)
		printf("# oms_probe: %u rounds per ordering probe, %u samples "
		       "per cost (median ns)\n", o->rounds, o->cost_rounds);
	probe_print(&rep, &ba, ba.json);
	bad = probe_failures(&rep);
	if (bad)
		ba_err(&ba, "%u required order(s) violated", bad);
	rc = ba_close(&ba);
	return bad || fail || rc ? 1 : 0;
}
