// SPDX-License-Identifier: MIT
/*
 * oms_probe: what does this device order?  Users of RDMA NICs keep asking
 * whether READ data is placed in order, what IBV_SEND_FENCE does, whether
 * a write's completion means a responder can see it, and what each fence
 * and flush costs.  This tool answers by measurement, on three targets:
 *
 *   verbs  a live RDMA device (ConnectX, Soft-RoCE) between this host and
 *          the `oms_probe --server` at HOST, with plain verbs
 *   emu    liboms's emulated device, through the classes that add no
 *          ordering of their own (--chaos: with its reordering on)
 *   kmod   an oms.ko window (mapped, and through the module's ioctl):
 *          the cost of each fence and flush
 *
 * Its roles are perftest's: `oms_probe HOST` is the client, which probes
 * the verbs device to HOST (and emu and kmod here); `oms_probe` with no
 * HOST (or --server; --listen of old) is the verbs responder for one
 * client; `oms_probe --local` probes this machine's targets alone.
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
	int server, local;
} args = {
	.p = { .rounds = 2048, .cost_rounds = 200, .port = 18540,
	       .timeout_ms = 20000 },
};

static const struct ba_opt opts[] = {
	{ 0, "server", "listen", BA_FLAG, NULL, "be the server (as with no "
	  "HOST): the verbs responder for one client, then exit",
	  &args.server, .group = 1, .roles = BA_SERVER },
	{ 0, "client", NULL, BA_STRING, "HOST", "be a client of the server "
	  "at HOST (as HOST alone)", &args.p.host, .group = 1,
	  .roles = BA_CLIENT },
	{ 0, "local", NULL, BA_FLAG, NULL, "probe this machine's emulated "
	  "device and oms.ko window", &args.local, .group = 1,
	  .roles = BA_LOCAL },
	{ 0, "bind", NULL, BA_STRING, "ADDR", "the local address to listen "
	  "on (its RDMA device is the one probed)", &args.p.bind,
	  .dflt = "every one", .roles = BA_SERVER },
	{ 'p', "port", NULL, BA_UINT, "PORT", "the server's port", &args.p.port,
	  .min = 1, .max = 65535, .roles = BA_SERVER | BA_CLIENT },
	{ 0, "targets", NULL, BA_SET, "SET", "what to probe: verbs (to HOST), "
	  "emu, kmod", &args.targets, .names = target_names,
	  .dflt = "a client: all; --local: emu,kmod",
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 'n', "rounds", "iters", BA_UINT, "N", "patterns per ordering probe "
	  "(verbs, emu)", &args.p.rounds, .min = 32, .max = 100000000,
	  .step = 32, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "cost-rounds", NULL, BA_UINT, "N", "samples per cost (median)",
	  &args.p.cost_rounds, .min = 1, .max = 10000000,
	  .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "chaos", NULL, BA_UINT, "SEED", "emu: the device reorders all it "
	  "may, from SEED (0: in order)", &args.p.chaos, .flags = BA_U64,
	  .min = 0, .max = UINT64_MAX, .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "dev", NULL, BA_STRING, "PATH", "kmod: the device node",
	  &args.p.dev, .dflt = "/dev/oms", .roles = BA_CLIENT | BA_LOCAL },
	{ 0, "timeout-ms", NULL, BA_UINT, "MS", "a completion or a peer "
	  "that takes longer is a failure (verbs, emu)", &args.p.timeout_ms,
	  .min = 100, .max = 3600000 },
};

static struct ba ba = {
	.name = "oms_probe", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.positional = "client",
	.role_help = {
		"the server: the verbs responder for one client, then exit",
		"a client: probe the verbs device to the server at HOST, and "
		"this machine's targets",
		"probe this machine's targets: the emulated device and an "
		"oms.ko window",
	},
	.record_roles = BA_CLIENT | BA_LOCAL,
	.about = "What does this device order?  Litmus patterns on a live "
		 "RDMA device, the\nemulated device and an oms.ko window; "
		 "violations counted, fences and flushes timed.",
	.epilog = "Exit status: 0; 1 a required order was violated or a "
		  "target failed; 2 bad flags.",
};

static struct probe_report rep;

const char *probe_prog = "oms_probe";

/*
 * oms_probe's spellings before perftest's roles: --server HOST was the
 * client, --listen the server.  --listen is still the server; the old
 * client is refused with the new spelling, --server being the server now.
 */
static int old_client(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--server=", 9) ||
		    (!strcmp(argv[i], "--server") && i + 1 < argc &&
		     argv[i + 1][0] != '-'))
			return ba_fail(&ba, "--server HOST was the client's "
				       "spelling: the client is now '%s "
				       "HOST' (or --client HOST), and "
				       "--server (--listen of old) the "
				       "server, which takes no HOST", ba.prog);
	return 0;
}

/* The targets of a client or a local run, and the options each needs. */
static int settle_targets(void)
{
	const uint32_t verbs = 1u << T_VERBS, emu = 1u << T_EMU;
	const uint32_t kmod = 1u << T_KMOD;
	int r;

	if (!ba_seen(&ba, "targets"))
		args.targets = ba.role == BA_CLIENT ? verbs | emu | kmod :
			       emu | kmod;
	if (ba.role == BA_CLIENT && !(args.targets & verbs))
		return ba_fail(&ba, "--targets without verbs probes nothing at "
			       "the HOST: this machine's targets alone are "
			       "--local's");
	if (ba.role == BA_LOCAL && args.targets & verbs)
		return ba_fail(&ba, "--targets verbs probes the device to a "
			       "HOST, the one that runs '%s --server': give "
			       "it, not --local", ba.prog);
	r = ba_only_if(&ba, (const char *const[]){ "chaos", NULL },
		       args.targets & emu, "is the emulated device's, and "
		       "--targets has no emu");
	if (r == BA_GO_ON)
		r = ba_only_if(&ba, (const char *const[]){ "dev", NULL },
			       args.targets & kmod, "is oms.ko's device node, "
			       "and --targets has no kmod");
	if (r == BA_GO_ON)
		r = ba_only_if(&ba, (const char *const[]){ "rounds",
			       "timeout-ms", NULL },
			       args.targets & (verbs | emu), "is the verbs "
			       "and emu targets', and --targets kmod only "
			       "times its costs");
	return r;
}

/* No RDMA device here: nothing for a verbs probe to run on. */
static int no_rdma(void)
{
	if (ba_rdma_present())
		return 0;
	ba_err(&ba, "no RDMA device in /sys/class/infiniband: %s runs the "
	       "verbs probe over one; %s; to probe this machine's emulated "
	       "device and oms.ko window, '%s --local'",
	       ba.role == BA_SERVER ? "the server" : "a client",
	       ba_rdma_hint, ba.prog);
	return 1;
}

int main(int argc, char **argv)
{
	struct probe_opts *o = &args.p;
	int rc, fail = 0, connected, err;
	unsigned bad;

	ba_set_prog(&ba, argc > 0 ? argv[0] : NULL);
	rc = old_client(argc, argv);
	if (!rc)
		rc = ba_parse(&ba, argc, argv);
	if (rc != BA_GO_ON)
		return rc;
	probe_prog = ba.prog;
	if (ba.role == BA_SERVER) {
		if (no_rdma())
			return 1;
		return probe_verbs_server(o) ? 1 : 0;
	}
	rc = settle_targets();
	if (rc != BA_GO_ON)
		return rc;
	if (ba.role == BA_CLIENT && (ba_resolve(&ba, o->host) || no_rdma()))
		return 1;
	ba_set_backend(&ba, args.targets & 1u << T_VERBS ? "verbs" : "emu");
	if (args.targets & 1u << T_VERBS) {
		char port[16];

		err = probe_verbs_client(o, &rep, &connected);
		fail |= err != 0;
		/* the peer was the point: no other target without it */
		if (!connected) {
			snprintf(port, sizeof(port), "%u", o->port);
			ba_connect_failed(&ba, o->host, port, err, "verbs");
			return 1;
		}
	}
	if (args.targets & 1u << T_EMU) {
		err = probe_emu(o, &rep);
		fail |= err != 0;
	}
	if (args.targets & 1u << T_KMOD)
		fail |= probe_kmod(o, &rep) != 0;
	if (!ba.json)
		printf("# %s: %u rounds per ordering probe, %u samples "
		       "per cost (median ns)\n", ba.prog, o->rounds,
		       o->cost_rounds);
	probe_print(&rep, &ba, ba.json);
	bad = probe_failures(&rep);
	if (bad)
		ba_err(&ba, "%u required order(s) violated", bad);
	rc = ba_close(&ba);
	return bad || fail || rc ? 1 : 0;
}
