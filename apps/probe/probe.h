/* SPDX-License-Identifier: MIT */
/*
 * oms_probe's pieces: what one measurement found, and the three targets
 * that produce them (verbs.c, emu.c, kmod.c).  report.c prints them as a
 * table and as JSON records.
 *
 * A probe runs an access pattern many times and counts how often an
 * observer saw an outcome that an ordering would forbid ("violations")
 * out of how many chances it had to see it ("checks").  0 violations is
 * evidence, not proof: the verdict says "in order (observed)" and the
 * checks say how much was looked at.  Where the pattern is one the
 * device is required to order, a violation is a device bug and the
 * program exits 1.
 */
#ifndef OMS_PROBE_H
#define OMS_PROBE_H

#include <stdint.h>

#include "bench_args.h"

/* What the seed, RC or the device's contract says of the outcome. */
enum probe_rule {
	PR_ALLOWED = 0,		/* the outcome may happen: measured only */
	PR_REQUIRED = 1,	/* forbidden by the contract: a violation is
				 * a device (or emulator) bug */
	PR_INFO = 2,		/* a capability or a cost, no outcome */
};

struct probe_result {
	const char *target;	/* "verbs", "emu", "kmod" */
	const char *name;	/* "read_within", ... */
	const char *litmus;	/* "L30", or "" */
	const char *pattern;	/* the operations, one line */
	enum probe_rule rule;
	uint64_t rounds;	/* patterns issued */
	uint64_t checks;	/* observations that could catch it */
	uint64_t violations;	/* outcomes the ordering would forbid */
	double cost_ns;		/* median ns per pattern, 0: not timed */
	char value[96];		/* capability: the answer, as text */
	char note[160];		/* why n/a, what it means */
	int measured;		/* 0: not applicable here (note says why) */
};

/* The name oms_probe was run as, for its messages (main() sets it). */
extern const char *probe_prog;

/* What the command line asked for, as the targets need it. */
struct probe_opts {
	uint32_t rounds;	/* patterns per ordering probe */
	uint32_t cost_rounds;	/* samples per cost */
	uint64_t chaos;		/* emu: the device's reordering seed */
	uint32_t port;
	uint32_t timeout_ms;
	const char *host;	/* verbs client: the server's host */
	const char *bind;	/* verbs server: local address */
	const char *dev;	/* kmod: the device node */
};

/* The patterns each target runs, as the def's @arg. */
enum wpat { WP_WRITE_WRITE, WP_WITHIN, WP_COMPLETION, WP_OTHER_QP };
enum cpat { CP_WRITE, CP_READ, CP_WRITE_FLUSH, CP_READ_WRITE, CP_FENCE };

/* A batch of @n READ(X); WRITE(X = first + k) pairs came back with @got:
 * a READ that returned its own round's value (or later) saw the WRITE
 * posted after it. */
void probe_war_count(struct probe_result *r, const uint64_t *got,
		     unsigned n, uint64_t first);

/* A cost probe's end: the median of its @n samples in @t when @err is
 * 0; frees @t; returns @err. */
int probe_cost_done(struct probe_result *r, uint64_t *t, unsigned n,
		    int err);

/* One probe of a target: its names, its rule, and what the target's
 * runner does for it (@kind, and @arg within the kind). */
enum probe_kind { PK_WRITE, PK_READ, PK_WAR, PK_COST };

struct probe_def {
	const char *name, *litmus, *pattern;
	enum probe_rule rule;
	enum probe_kind kind;
	int arg;
};

/* What a target does for each kind of probe, on its rig, with the def's
 * @arg: 0, or a negative errno when the probe could not run. */
typedef int (*probe_fn)(void *rig, const struct probe_opts *o, int arg,
			struct probe_result *r);

struct probe_ops {
	probe_fn run[PK_COST + 1];	/* by enum probe_kind */
};

struct probe_report;

/* Run @n probes of @defs on @rig in order, a result each in @rep; stop at
 * the first that fails (a message on stderr) and return its error. */
int probe_run_all(struct probe_report *rep, const char *target,
		  const struct probe_def *defs, unsigned n,
		  const struct probe_ops *ops, void *rig,
		  const struct probe_opts *o);

/* The report: results in the order they were made. */
#define PROBE_MAX_RESULTS 48

struct probe_report {
	struct probe_result r[PROBE_MAX_RESULTS];
	unsigned n;
};

/* A new result of @rep with its names set, or NULL when full. */
struct probe_result *probe_add(struct probe_report *rep, const char *target,
			       const char *name, const char *litmus,
			       const char *pattern, enum probe_rule rule);

/* The verdict of @r in a few words ("in order (observed)", ...). */
const char *probe_verdict(const struct probe_result *r);

/* Print @rep as a table; write a JSON record per result through @ba. */
void probe_print(const struct probe_report *rep, struct ba *ba, int quiet);

/* How many results broke a PR_REQUIRED rule. */
unsigned probe_failures(const struct probe_report *rep);

/* Median of @n samples (sorts them). */
double probe_median(uint64_t *v, unsigned n);

/*
 * The targets.  Each appends its results to @rep and returns 0, or a
 * negative errno when it could not run at all (a message on stderr).
 */
int probe_emu(const struct probe_opts *o, struct probe_report *rep);
int probe_kmod(const struct probe_opts *o, struct probe_report *rep);
/* The verbs client: -errno without a connection to o->host (*@connected
 * 0, nothing said: the caller names the cause), or of a failed probe. */
int probe_verbs_client(const struct probe_opts *o, struct probe_report *rep,
		       int *connected);
int probe_verbs_server(const struct probe_opts *o);

/* The patterns both ends of the verbs probe and the emu probe share:
 * where in the responder's region each probe writes and reads. */
#define PB_REGION	(1u << 20)	/* the responder's region */
#define PB_DATA_OFF	0u		/* a data line (stamps) */
#define PB_FLAG_OFF	4096u		/* a flag word, its own page */
#define PB_BIG_OFF	65536u		/* a 64 KiB block */
#define PB_BIG_LEN	65536u
#define PB_WIN_OFF	(2u * 65536u)	/* one 4 KiB WRITE's bytes */
#define PB_WIN_LEN	4096u
#define PB_X_OFF	8192u		/* write-after-read word */

/* Server-side observers (verbs.c and emu.c): the responder's CPU watches
 * its own memory while the initiator runs a probe. */
enum pb_watch {
	PW_FLAG_DATA = 1,	/* flag word, then the data word it covers */
	PW_LAST_FIRST = 2,	/* last word of a WRITE, then its first */
};

struct pb_observer {
	volatile uint64_t *base;	/* the responder's region */
	enum pb_watch watch;
	volatile int stop;
	uint64_t checks, violations;
};

/* Watch until o->stop: a thread body (pthread). */
void *pb_observe(void *o);

#endif
