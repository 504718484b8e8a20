/* SPDX-License-Identifier: MIT */
/*
 * One way to take arguments for every benchmark: each describes its options
 * in a table (names, type, range, help); ba_parse() reads argv with
 * getopt_long, checks every value against the table and fills the
 * benchmark's variables, so that all of them answer --help alike and refuse
 * a bad value alike (exit 2, the flag and its range on stderr, nothing
 * measured).  perftest's short names where they mean the same thing: -s
 * size, -a all sizes, -D duration (s), -n iterations, -q QPs, -p port.
 *
 * The layer also owns the JSON records: --json writes them on stdout,
 * --out_json FILE into FILE, and ba_json() adds to every one the metadata
 * a figure needs to be compared later (liboms version, host, kernel,
 * backend, UTC time).
 *
 * A program with a peer has perftest's roles: given a HOST it is a client
 * of the server there; given none, the server (--server says it too);
 * --local runs both sides in this process.  Each option names the roles
 * that take it, and ba_parse() refuses it in any other, naming them: no
 * flag is taken and then ignored.
 *
 * The implementation is bench/common/bench_args.c: each .c file in bench/ is a
 * program of its own.
 */
#ifndef OMS_BENCH_ARGS_H
#define OMS_BENCH_ARGS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ba_type {
	BA_FLAG,	/* no value: *(int *)dst = 1; dst may be NULL */
	BA_UINT,	/* whole number, decimal, in min..max */
	BA_SIZE,	/* bytes: a BA_UINT that may end in K, M, G */
	BA_SIZES,	/* comma list of BA_SIZE into uint32_t dst[] */
	BA_UINTS,	/* comma list of BA_UINT into uint32_t dst[] */
	BA_DOUBLE,	/* real in dmin..dmax; dst = it * scale */
	BA_STRING,	/* text, not empty nor "-...": const char *dst */
	BA_CHOICE,	/* one of names[]: uint32_t dst = its index */
	BA_SET,		/* comma set of names[] or "all": bit i each */
};

/* The roles (ba_opt.roles, struct ba's role). */
#define BA_SERVER	1u	/* no HOST: serve */
#define BA_CLIENT	2u	/* a HOST: measure against its server */
#define BA_LOCAL	4u	/* --local: both sides in this process */
#define BA_NROLES	3

/* ba_opt.flags */
#define BA_U64		1u	/* BA_UINT, BA_SIZE: a uint64_t dst */
#define BA_POW2		2u	/* BA_UINT, BA_SIZE(S): a power of 2 */

struct ba_opt {
	char short_name;	/* 0: long name only */
	const char *long_name;
	const char *alias;	/* an older long name, still taken */
	enum ba_type type;
	const char *metavar;	/* "N", "SEC", "HOST"... */
	const char *help;
	void *dst;
	/* BA_UINT(S), BA_SIZE(S): the range, and a multiple of step */
	uint64_t min, max;
	uint32_t step;		/* 0: any */
	unsigned flags;
	double dmin, dmax;	/* BA_DOUBLE: the range in its own unit, */
	double scale;		/* and dst = value * scale (0: 1) */
	const char *const *names;	/* BA_CHOICE, BA_SET; NULL-ended */
	uint32_t *count;	/* BA_SIZES, BA_UINTS: how many were given */
	uint32_t max_items;	/* BA_SIZES, BA_UINTS: room in dst */
	int group;		/* > 0: at most one option of a group */
	const char *dflt;	/* default as --help says it; NULL: dst's */
	unsigned roles;		/* BA_SERVER...: the roles that take it;
				 * 0: every one */
};

/* perftest's --report_gbits: the table's bandwidth in Gb/s, not MB/s
 * (2^20 bytes, as perftest's), in the roles @r that print one; --json
 * records always carry Gb/s (so --json refuses it). */
#define BA_OPT_REPORT_GBITS(p, r) { .long_name = "report_gbits", \
	.type = BA_FLAG, .dst = (p), .roles = (r), \
	.help = "bandwidth in the table in Gb/s (default MB/s)" }

/* A bandwidth in Gb/s as the table shows it, and the column's unit. */
static inline double ba_bw(double gbps, int gbits)
{
	return gbits ? gbps : gbps * 1e9 / 8 / (1u << 20);
}

static inline const char *ba_bw_unit(int gbits)
{
	return gbits ? "Gb/s" : "MB/s";
}


struct ba {
	/* set by the benchmark */
	const char *name;	/* its name in the records ("bench") */
	const char *synopsis;	/* after "usage: prog "; NULL: [options] */
	const char *about;	/* what it measures, a line or two */
	const char *epilog;	/* after the options (exit codes), or NULL */
	const struct ba_opt *opts;
	unsigned nopts;
	const char *positional;	/* a lone argument is this option's value
				 * (perftest's "ib_write_bw HOST": "client"),
				 * or NULL: no argument but options */
	/* A program with a peer: what it does in each role, for --help, by
	 * the role's bit (BA_SERVER first); NULL: no such role.  The
	 * positional option given makes the client, an option named
	 * "local" the local run, neither the server. */
	const char *role_help[BA_NROLES];
	unsigned record_roles;	/* the roles that write records (--json,
				 * --out_json); 0: every one */
	/* set by ba_parse() */
	const char *prog;	/* the name it was run as (argv[0]'s last
				 * part: oms_kvs_get installed, kvs_get in
				 * the tree), for --help and every message */
	unsigned role;		/* BA_SERVER, BA_CLIENT or BA_LOCAL; 0: a
				 * program without roles */
	int json;		/* --json */
	const char *out_json;	/* --out_json FILE */
	/* private */
	FILE *jf;
	const char *backend;
	uint64_t seen;		/* bit i: opts[i] given */
	char meta[1024];
};

/* ba_parse(): go on and measure; anything else is the exit status. */
#define BA_GO_ON	(-1)

/*
 * Parse @argv by @ba's table.  --help prints the usage on stdout and
 * returns 0; a bad value, an unknown flag, a missing value, a stray
 * argument, two options of one group, an option its role does not take
 * or --report_gbits with --json print why on stderr and return 2.
 * Otherwise sets the role, opens --out_json and returns BA_GO_ON.
 */
int ba_parse(struct ba *ba, int argc, char **argv);

/* ba->prog from @argv0 (ba_parse() does it), for a refusal before it. */
void ba_set_prog(struct ba *ba, const char *argv0);

/* True if the option named @long_name was on the command line. */
int ba_seen(const struct ba *ba, const char *long_name);

/* After ba_parse(): BA_GO_ON, or when @ok is false and one of @names
 * (long names, NULL-ended) was given, refuse it with @why ("--scale
 * @why") and return 2. */
int ba_only_if(const struct ba *ba, const char *const *names, int ok,
	       const char *why);

/* Refuse the command line after ba_parse(): prints "prog: why", removes
 * the --out_json file it opened, returns 2. */
int ba_fail(const struct ba *ba, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A run that failed (not its command line): "prog: why" on stderr. */
void ba_err(const struct ba *ba, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The backend the records name ("emu", "verbs", "mem"...). */
void ba_set_backend(struct ba *ba, const char *backend);

/*
 * One JSON record: @fmt gives its fields without the braces
 * ("\"op\":\"%s\",\"ns\":%.2f"); the record goes to stdout under --json
 * and to the --out_json file, with "bench" first and the metadata
 * ("liboms", "host", "kernel", "backend", "timestamp") last.
 */
void ba_json(struct ba *ba, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* @s as a JSON string into @buf, quotes included, escaped; cut short if
 * @len is (for text a record carries: names, notes). */
void ba_json_string(char *buf, size_t len, const char *s);

/* True if records go anywhere (--json or --out_json). */
static inline int ba_json_on(const struct ba *ba)
{
	return ba->json || ba->out_json;
}

/* Close --out_json; 1 (with a message) if it could not all be written. */
int ba_close(struct ba *ba);

/*
 * Why a run with a peer cannot go on, named as the user meets it: a HOST
 * that does not resolve, no RDMA device (and what to install or load), no
 * server listening at HOST:PORT, the emulated device that nothing outside
 * this process reaches.  Each says it on stderr as "prog: ...".
 */

/* True when /sys/class/infiniband lists an RDMA device. */
int ba_rdma_present(void);

/* What to do without an RDMA device: a clause, no final stop. */
extern const char ba_rdma_hint[];

/* A client's @host: 0 when it resolves; else 1, having said "cannot
 * resolve HOST" and why. */
int ba_resolve(const struct ba *ba, const char *host);

/*
 * Before the server or a client starts (after ba_parse(); nothing to do
 * for --local), on @backend (enum oms_backend as asked; AUTO: liboms's
 * choice): 0 to go on; 1, having said why, when a client's @host does not
 * resolve, or when the run would land on the emulated device unasked (no
 * RDMA device here, or rdma-core not loadable), which nothing outside
 * this process reaches.  Asked for (--backend emu, OMS_BACKEND=emu): a
 * warning, and 0.
 */
int ba_peer_ready(const struct ba *ba, const char *host, uint32_t backend);

/* After a failed oms_ctx_create() asking for @backend: the error, why,
 * and without an RDMA device what to do. */
void ba_ctx_failed(const struct ba *ba, int err, uint32_t backend);

/* After a failed connect to @host:@port from a context on @backend
 * ("emu", "verbs"): the error and its cause. */
void ba_connect_failed(const struct ba *ba, const char *host,
		       const char *port, int err, const char *backend);

/*
 * perftest's -d, -i and -x, for the programs that run over verbs: the RDMA
 * device, its port and the GID index (whose address, on RoCE, the program
 * connects from and listens on).  ba_rdma_apply() hands them to liboms as
 * OMS_DEVICE, OMS_PORT and OMS_GID_INDEX, which liboms(7) describes.
 */
struct ba_rdma {
	const char *dev;
	uint32_t port;
	uint32_t gid_index;
};

#define BA_OPTS_RDMA(r)							\
	{ .short_name = 'd', .long_name = "ib-dev", .type = BA_STRING,	\
	  .metavar = "DEV", .dst = &(r)->dev, .help = "the RDMA device",	\
	  .dflt = "OMS_DEVICE, else the first" },			\
	{ .short_name = 'i', .long_name = "ib-port", .type = BA_UINT,	\
	  .metavar = "PORT", .dst = &(r)->port, .min = 1, .max = 255,	\
	  .help = "its port", .dflt = "the route's" },			\
	{ .short_name = 'x', .long_name = "gid-index", .type = BA_UINT,	\
	  .metavar = "N", .dst = &(r)->gid_index, .max = 65535,		\
	  .help = "connect from and listen on the address of its GID N "	\
	  "(RoCE)", .dflt = "the address decides" }

/* Is environment variable @name set to @val? */
static inline int ba_env_is(const char *name, const char *val)
{
	const char *v = getenv(name);

	return v && !strcmp(v, val);
}

/*
 * After ba_parse(): -d, -i and -x into the environment liboms reads;
 * refused (2, with why) when the run is on the emulated device
 * (@emulated: --local, --backend emu), which has no RDMA device to name.
 * BA_GO_ON otherwise.
 */
int ba_rdma_apply(struct ba *ba, const struct ba_rdma *r, int emulated);

#endif
