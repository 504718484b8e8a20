// SPDX-License-Identifier: MIT
/*
 * msg_verbs: two processes pass messages over RDMA with no wait between
 * the data and its flag.  The client puts each message weak and its number
 * (the flag) strong: the flag is never visible before the data it names.
 * The server's CPU watches the flag and checks that the data it then reads
 * is that message or a later one, never an older one.
 *
 * Its roles are perftest's: no HOST, the server; a HOST, the client.
 *
 *   server$ ./msg_verbs [--bind ADDRESS]     (an RDMA device: verbs)
 *   client$ ./msg_verbs SERVER_ADDRESS
 *   ./msg_verbs --local     both in one process, on the emulated device
 *
 *   cc msg_verbs.c $(pkg-config --cflags --libs liboms) -o msg_verbs
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <oms.h>

#define PORT	"18560"
#define NMSG	1000u
#define FLAG	256		/* the flag's offset; the data is at 0 */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int listening;

/* Watch the flag until the last message: each flag must find its data. */
static int serve(struct oms_ctx *ctx, const char *addr)
{
	static uint64_t region[512];	/* 4 KiB: data, then the flag */
	uint64_t flag = 0, last = 0, data[8], t0;
	unsigned seen = 0, stale = 0;
	struct oms_listener *l;
	struct oms_mr *mr;
	int err;

	err = oms_mr_reg(ctx, region, sizeof(region), OMS_ACCESS_ALL, &mr);
	if (!err)
		err = oms_listen(ctx, addr, PORT, mr, &l);
	if (err) {
		__atomic_store_n(&listening, -1, __ATOMIC_RELEASE);
		return err;
	}
	printf("msg_verbs: listening on %s:%s\n", addr ? addr : "*", PORT);
	fflush(stdout);
	__atomic_store_n(&listening, 1, __ATOMIC_RELEASE);
	for (t0 = now_ms(); last < NMSG && now_ms() - t0 < 120000;) {
		oms_mr_read(mr, FLAG, &flag, sizeof(flag));
		if (flag == last)
			continue;
		oms_mr_read(mr, 0, data, sizeof(data));
		stale += data[0] < flag;	/* older data than its flag */
		seen++;
		last = flag;
	}
	printf("msg_verbs: flag reached %llu (%u changes seen), data older "
	       "than its flag %u times\n", (unsigned long long)last, seen,
	       stale);
	/* The client's last put completes when its NIC has the server's
	 * acknowledgement: closing now could cut that off.  Let it leave. */
	while (oms_listener_peers(l) > 0 && now_ms() - t0 < 120000)
		;
	err = oms_listener_peers(l) ? -ETIMEDOUT : 0;
	if (!err)
		printf("msg_verbs: the client left\n");
	oms_listener_close(l);
	oms_mr_dereg(mr);
	if (err)
		return err;
	return last == NMSG && !stale ? 0 : -EPROTO;
}

/* Each message: the data weak, then its number strong, never waiting. */
static int send_all(struct oms_ctx *ctx, const char *host)
{
	uint64_t data[NMSG][8], flag[NMSG];
	struct oms_rmr dst;
	int err;

	err = oms_connect(ctx, host, PORT, 20000, &dst);
	if (err == -ECONNREFUSED)
		fprintf(stderr, "msg_verbs: no server listens at %s:%s "
			"(connection refused): start msg_verbs there, with no "
			"HOST\n", host, PORT);
	for (unsigned i = 0; i < NMSG && !err; i++) {
		for (int k = 0; k < 8; k++)
			data[i][k] = i + 1;
		flag[i] = i + 1;
		err = oms_put(ctx, &dst, 0, data[i], sizeof(data[i]),
			      OMS_STORE_WEAK);
		if (!err)
			err = oms_put(ctx, &dst, FLAG, &flag[i], sizeof(flag[i]),
				      OMS_STORE_STRONG);
	}
	if (!err)
		err = oms_quiet(ctx);	/* the buffers may go now */
	if (!err)
		printf("msg_verbs: %u messages sent to %s\n", NMSG, host);
	return err;
}

/* A context of node @node on @backend (0: the machine's choice), or why not. */
static struct oms_ctx *ctx_make(uint32_t node, uint32_t backend)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_caps caps = { .size = sizeof(caps) };
	struct oms_ctx *ctx;
	int err;

	a.comp_mask = OMS_CTX_ATTR_NODE | (backend ? OMS_CTX_ATTR_BACKEND : 0);
	a.node = node;
	a.backend = backend;
	err = oms_ctx_create(&a, &ctx);
	if (!err)
		return ctx;
	oms_query_caps(NULL, &caps);
	fprintf(stderr, "msg_verbs: %s: %s\n", strerror(-err),
		caps.backend_why);
	return NULL;
}

/*
 * The server or the client, each in a process of its own: on liboms's
 * emulated device (no RDMA device here) the other could never reach it.
 * Refused, unless OMS_BACKEND=emu asks for it.
 */
static int two_processes_ok(int server)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	const char *env = getenv("OMS_BACKEND");

	/* an RDMA device, or a failure the context will name */
	if (oms_query_caps(NULL, &caps) || caps.backend != OMS_BACKEND_EMU)
		return 1;
	if (env && !strcmp(env, "emu")) {
		fprintf(stderr, "msg_verbs: warning: on the emulated device "
			"(OMS_BACKEND=emu) this %s\n", server ? "server is "
			"reached from no other process" : "client reaches "
			"servers in this process only");
		return 1;
	}
	fprintf(stderr, "msg_verbs: %s: the emulated device would serve this "
		"process only; load the NIC's driver and install rdma-core, or "
		"make an RDMA device with Soft-RoCE (sudo modprobe rdma_rxe; "
		"sudo rdma link add rxe0 type rxe netdev IFACE); or run both "
		"sides here with --local\n", caps.backend_why);
	return 0;
}

static void *serve_local(void *ctx)
{
	return (void *)(intptr_t)serve(ctx, "127.0.0.1");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: msg_verbs [--server] [--bind ADDR]  the server: "
		"check one client's flags\n"
		"       msg_verbs [--client] HOST          a client: send %u "
		"messages to HOST\n"
		"       msg_verbs --local                  both sides in this "
		"process, emulated\n", NMSG);
}

/* What to be: 's'erver, 'c'lient or 'l'ocal, from @argv; 0 to stop with
 * *@rc (--help, or a mistake said). */
static int role_of(int argc, char **argv, const char **host,
		   const char **bind, int *rc)
{
	static const struct option lo[] = {
		{ "server", no_argument, NULL, 's' },
		{ "client", required_argument, NULL, 'c' },
		{ "local", no_argument, NULL, 'l' },
		{ "bind", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, server = 0, local = 0;

	*rc = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			*rc = 0;
			return 0;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "msg_verbs: %s '%s'\n", c == ':' ?
				"a value missing after" : "unknown option",
				argv[optind - 1]);
			usage(stderr);
			return 0;
		}
		server |= c == 's';
		local |= c == 'l';
		*host = c == 'c' ? optarg : *host;
		*bind = c == 'b' ? optarg : *bind;
	}
	if (optind < argc && !*host)
		*host = argv[optind++];
	if (optind < argc)
		fprintf(stderr, "msg_verbs: one HOST only\n");
	else if (server && *host)
		fprintf(stderr, "msg_verbs: a server takes no HOST (to listen "
			"on that address: --server --bind %s)\n", *host);
	else if (local && (*host || server || *bind))
		fprintf(stderr, "msg_verbs: --local is both sides: no HOST, "
			"--server or --bind\n");
	else if (*bind && *host)
		fprintf(stderr, "msg_verbs: --bind is the server's: a client "
			"(a HOST given) connects from where its route goes\n");
	else
		return local ? 'l' : *host ? 'c' : 's';
	usage(stderr);
	return 0;
}

int main(int argc, char **argv)
{
	const char *host = NULL, *bind = NULL;
	struct addrinfo *ai;
	struct oms_ctx *ctx, *sctx;
	pthread_t t;
	void *rc;
	int err, gai, role = role_of(argc, argv, &host, &bind, &err);

	if (!role)
		return err;
	if (role == 'c' && (gai = getaddrinfo(host, NULL, NULL, &ai))) {
		fprintf(stderr, "msg_verbs: cannot resolve %s: %s\n", host,
			gai_strerror(gai));
		return 1;
	}
	if (role == 'c')
		freeaddrinfo(ai);
	if (role != 'l' && !two_processes_ok(role == 's'))
		return 1;
	ctx = ctx_make(role == 's' ? 1 : 0, role == 'l' ? OMS_BACKEND_EMU : 0);
	if (!ctx)
		return 1;
	if (role == 's') {
		err = serve(ctx, bind);
	} else if (role == 'l') {
		/* the server's side on a thread of its own, node 1 */
		sctx = ctx_make(1, OMS_BACKEND_EMU);
		if (!sctx || pthread_create(&t, NULL, serve_local, sctx))
			return 1;
		while (!__atomic_load_n(&listening, __ATOMIC_ACQUIRE))
			;
		err = listening > 0 ? send_all(ctx, "127.0.0.1") : 0;
		oms_ctx_destroy(ctx);	/* the client leaves the server */
		ctx = NULL;
		pthread_join(t, &rc);
		err = err ? err : (int)(intptr_t)rc;
		oms_ctx_destroy(sctx);
	} else {
		err = send_all(ctx, host);
	}
	if (err)
		fprintf(stderr, "msg_verbs: %s\n", strerror(-err));
	if (ctx)
		oms_ctx_destroy(ctx);
	return err ? 1 : 0;
}
