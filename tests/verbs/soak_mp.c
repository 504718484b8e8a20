// SPDX-License-Identifier: MIT
/*
 * soak_mp: the fault soak's message-passing client (tests/vm/rxe-soak.sh).
 * A producer of `msg_pass --server`'s consumer (msg_pass_layout.h) that
 * goes on through faults as a long-running RDMA service must: it puts a
 * message to D1 (weak), then its flag to D2 (strong: performed only after
 * the message), a window at a time, then quiet; the server's consumer
 * counts every flag it saw before its message ("late").  When an operation
 * fails it does what oms_ctx_resume(3) and oms_connect(3) prescribe:
 *
 *   - resume the context; if the context itself is dead (the call returns
 *     -ENODEV or -ETIMEDOUT), destroy it and make a new one;
 *   - find out which connection is gone (an 8-byte get and a quiet on
 *     each: -ENOTCONN, -ECONNRESET... on the dead one) and connect that
 *     one again in the same context (a dead connection's destination is
 *     reused once nothing is pending on it), retrying while the server is
 *     away;
 *   - announce the message size again (a restarted server forgot it),
 *     read the consumer's last flag of this slot, and go on above it.
 *
 * Every error is counted by call and errno name; one that no page of the
 * calls names for these faults is "unexpected" and fails the run.
 *
 *   soak_mp HOST PORT SLOT SECONDS STATEFILE [seq]
 *
 * PORT is D1's (D2 is PORT + 1); SLOT the producer slot (0..15) of the
 * server, one per concurrent client; "seq" numbers the context's
 * operations (OMS_CTX_F_DEST_SEQ: the listeners' agents order them).
 * STATEFILE is rewritten after every round: "pid P msgs M rounds R
 * reconnects C contexts X late L unexpected U" (late: the consumer's count, over every
 * client of the server).  Ends after SECONDS or on SIGTERM; prints the
 * counts and one JSON line.  Exit 0, 1 when an unexpected error came or a
 * flag was seen late, 2 for bad arguments.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msg_pass_layout.h"
#include "oms.h"

#define MSG_SIZE	256	/* every soak client announces the same */
#define WINDOW		16
#define TIMEOUT_MS	10000
#define RETRY_US	200000

enum call { C_CONNECT, C_PUT, C_QUIET, C_GET, C_RESUME, C_CREATE, C_NCALL };
static const char *const call_names[C_NCALL] = {
	"connect", "put", "quiet", "get", "resume", "ctx_create",
};

/* The errors the pages of these calls give for a peer, a link or a
 * server that goes away (oms_listen(3), oms_quiet(3), oms_put(3),
 * oms_ctx_resume(3), docs/verbs.md). */
static const struct { int err; const char *name; } named[] = {
	{ ECONNRESET, "ECONNRESET" }, { ENOTCONN, "ENOTCONN" },
	{ ETIMEDOUT, "ETIMEDOUT" }, { ECANCELED, "ECANCELED" },
	{ ECONNREFUSED, "ECONNREFUSED" }, { EHOSTUNREACH, "EHOSTUNREACH" },
	{ ENODEV, "ENODEV" }, { EUSERS, "EUSERS" }, { EREMOTEIO, "EREMOTEIO" },
	{ EIO, "EIO" },
};
#define NNAMED	(sizeof(named) / sizeof(named[0]))

struct soak {
	const char *host, *statefile;
	char port1[8], port2[8];
	uint32_t slot;
	int seq;
	struct oms_ctx *ctx;
	struct oms_rmr data, flag;
	int data_up, flag_up, announced, ever_up;
	uint64_t next;			/* the next flag value */
	uint64_t msgs, rounds, reconnects, contexts, late, unexpected;
	uint64_t count[C_NCALL][NNAMED];
	int other_err;			/* the last unexpected one */
	uint8_t buf[WINDOW][MSG_SIZE];
	uint64_t flags[WINDOW];
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Count @err (< 0) of @c; 1 if it is one the pages name for faults. */
static int note_err(struct soak *s, enum call c, int err)
{
	for (size_t i = 0; i < NNAMED; i++) {
		if (named[i].err == -err) {
			s->count[c][i]++;
			return 1;
		}
	}
	s->unexpected++;
	s->other_err = err;
	fprintf(stderr, "soak_mp: %s: unexpected %d (%s)\n", call_names[c],
		err, strerror(-err));
	return 0;
}

static void write_state(const struct soak *s)
{
	char tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", s->statefile);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "pid %d msgs %llu rounds %llu reconnects %llu contexts "
		"%llu late %llu unexpected %llu\n", (int)getpid(),
		(unsigned long long)s->msgs,
		(unsigned long long)s->rounds,
		(unsigned long long)s->reconnects,
		(unsigned long long)s->contexts, (unsigned long long)s->late,
		(unsigned long long)s->unexpected);
	fclose(f);
	rename(tmp, s->statefile);
}

static int ctx_new(struct soak *s)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	int err;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_TIMEOUT |
		      OMS_CTX_ATTR_FLAGS;
	a.backend = OMS_BACKEND_VERBS;
	a.timeout_ms = TIMEOUT_MS;
	a.flags = s->seq ? OMS_CTX_F_DEST_SEQ : 0;
	err = oms_ctx_create(&a, &s->ctx);
	if (err) {
		s->ctx = NULL;
		note_err(s, C_CREATE, err);
		return err;
	}
	s->contexts++;
	s->data_up = s->flag_up = s->announced = 0;
	return 0;
}

static void ctx_drop(struct soak *s)
{
	if (s->ctx)
		oms_ctx_destroy(s->ctx);
	s->ctx = NULL;
	s->data_up = s->flag_up = s->announced = 0;
}

/* Is the connection of @r still there?  A get and a quiet tell. */
static int conn_alive(struct soak *s, const struct oms_rmr *r)
{
	uint64_t w;
	int err = oms_get(s->ctx, &w, r, 0, sizeof(w), OMS_READ_ACQUIRE);

	if (err)
		note_err(s, C_GET, err);
	else if ((err = oms_quiet(s->ctx)))
		note_err(s, C_QUIET, err);
	if (err)	/* what that cancelled is forgotten too */
		oms_ctx_resume(s->ctx);
	return !err;
}

/*
 * After a failed operation: resume; a dead context is replaced, a dead
 * connection is marked for connecting again.  Returns 0 or the context's
 * death.
 */
static int recover(struct soak *s)
{
	int err = oms_ctx_resume(s->ctx);

	if (err) {
		note_err(s, C_RESUME, err);
		if (err == -ENODEV || err == -ETIMEDOUT) {
			ctx_drop(s);
			return err;
		}
	}
	if (s->data_up && !conn_alive(s, &s->data))
		s->data_up = 0;
	if (s->flag_up && !conn_alive(s, &s->flag))
		s->flag_up = 0;
	s->announced = 0;
	return 0;
}

/* A connect that failed: a dead context is replaced. */
static int connect_failed(struct soak *s, int err)
{
	note_err(s, C_CONNECT, err);
	if (err == -ENODEV)
		ctx_drop(s);
	return -1;
}

/* Everything the next round needs: a context, both connections, the
 * size announced and the slot's last flag read.  0, or wait and retry. */
static int set_up(struct soak *s)
{
	uint64_t w[MP_COUNTS_OFF / 8 + 2], cell[2] = { MSG_SIZE, 1 };
	int err, lost = !s->ctx || !s->data_up || !s->flag_up;

	if (!s->ctx && ctx_new(s))
		return -1;
	if (!s->data_up) {
		err = oms_connect(s->ctx, s->host, s->port1, TIMEOUT_MS,
				  &s->data);
		if (err)
			return connect_failed(s, err);
		s->data_up = 1;
	}
	if (!s->flag_up) {
		err = oms_connect(s->ctx, s->host, s->port2, TIMEOUT_MS,
				  &s->flag);
		if (err)
			return connect_failed(s, err);
		s->flag_up = 1;
	}
	if (lost && s->ever_up)
		s->reconnects++;	/* not the first connection */
	s->ever_up = 1;
	if (s->announced)
		return 0;
	/* the size before any flag of it: a restarted server has none */
	err = oms_put(s->ctx, &s->flag, MP_CELL_OFF, cell, sizeof(cell),
		      OMS_STORE_WEAK);
	if (err)
		return note_err(s, C_PUT, err), recover(s), -1;
	err = oms_get(s->ctx, w, &s->flag, 0, sizeof(w), OMS_READ_ACQUIRE);
	if (err)
		return note_err(s, C_GET, err), recover(s), -1;
	err = oms_quiet(s->ctx);
	if (err)
		return note_err(s, C_QUIET, err), recover(s), -1;
	/* above what the consumer holds for this slot, whoever wrote it */
	if (w[MP_FLAG_OFF / 8 + s->slot] >= s->next)
		s->next = w[MP_FLAG_OFF / 8 + s->slot] + 1;
	if (w[MP_COUNTS_OFF / 8 + 1] > s->late)
		s->late = w[MP_COUNTS_OFF / 8 + 1];
	s->announced = 1;
	return 0;
}

/* A window of messages, each's flag strong after it, then quiet. */
static int round_once(struct soak *s)
{
	uint64_t doff = (uint64_t)s->slot * MP_DATA_MAX;
	uint64_t foff = MP_FLAG_OFF + 8ull * s->slot;
	uint64_t late = 0;
	int err = 0;

	for (int k = 0; k < WINDOW && !err; k++) {
		uint64_t n = s->next + (uint64_t)k;

		memcpy(s->buf[k], &n, 8);
		memcpy(s->buf[k] + MSG_SIZE - 8, &n, 8);
		s->flags[k] = n;
		err = oms_put(s->ctx, &s->data, doff, s->buf[k], MSG_SIZE,
			      OMS_STORE_WEAK);
		if (!err)
			err = oms_put(s->ctx, &s->flag, foff, &s->flags[k], 8,
				      OMS_STORE_STRONG);
		if (err)
			note_err(s, C_PUT, err);
	}
	if (!err) {
		err = oms_get(s->ctx, &late, &s->flag, MP_COUNTS_OFF + 8,
			      sizeof(late), OMS_READ_ACQUIRE);
		if (err)
			note_err(s, C_GET, err);
	}
	if (!err && (err = oms_quiet(s->ctx)))
		note_err(s, C_QUIET, err);
	if (err) {
		/* some of its flags may have landed: go on above them */
		s->next += WINDOW;
		recover(s);
		return err;
	}
	s->next += WINDOW;
	s->msgs += WINDOW;
	s->rounds++;
	if (late > s->late)
		s->late = late;
	return 0;
}

static void report(const struct soak *s)
{
	printf("soak_mp slot %u%s: %llu msgs in %llu rounds, %llu reconnects, "
	       "%llu contexts, late %llu, unexpected %llu\n", s->slot,
	       s->seq ? " (seq)" : "", (unsigned long long)s->msgs,
	       (unsigned long long)s->rounds,
	       (unsigned long long)s->reconnects,
	       (unsigned long long)s->contexts, (unsigned long long)s->late,
	       (unsigned long long)s->unexpected);
	printf("{\"slot\":%u,\"seq\":%d,\"msgs\":%llu,\"reconnects\":%llu,"
	       "\"contexts\":%llu,\"late\":%llu,\"unexpected\":%llu,"
	       "\"errors\":{", s->slot, s->seq, (unsigned long long)s->msgs,
	       (unsigned long long)s->reconnects,
	       (unsigned long long)s->contexts, (unsigned long long)s->late,
	       (unsigned long long)s->unexpected);
	for (int c = 0, first = 1; c < C_NCALL; c++) {
		for (size_t i = 0; i < NNAMED; i++) {
			if (!s->count[c][i])
				continue;
			printf("%s\"%s:%s\":%llu", first ? "" : ",",
			       call_names[c], named[i].name,
			       (unsigned long long)s->count[c][i]);
			first = 0;
		}
	}
	printf("}}\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct soak s;
	struct sigaction sa = { .sa_handler = on_term };
	unsigned long port, slot, secs;
	uint64_t end;
	char *e1, *e2, *e3;

	if (argc < 6 || argc > 7 || (argc == 7 && strcmp(argv[6], "seq"))) {
		fprintf(stderr, "usage: %s HOST PORT SLOT SECONDS STATEFILE "
			"[seq]\n", argv[0]);
		return 2;
	}
	port = strtoul(argv[2], &e1, 10);
	slot = strtoul(argv[3], &e2, 10);
	secs = strtoul(argv[4], &e3, 10);
	if (*e1 || *e2 || *e3 || !port || port > 65534 ||
	    slot >= MP_MAX_THREADS || !secs) {
		fprintf(stderr, "%s: PORT 1..65534, SLOT 0..%u, SECONDS > 0\n",
			argv[0], MP_MAX_THREADS - 1);
		return 2;
	}
	s.host = argv[1];
	snprintf(s.port1, sizeof(s.port1), "%lu", port);
	snprintf(s.port2, sizeof(s.port2), "%lu", port + 1);
	s.slot = (uint32_t)slot;
	s.statefile = argv[5];
	s.seq = argc == 7;
	s.next = 1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	end = now_ms() + secs * 1000;
	write_state(&s);
	while (!stop && now_ms() < end) {
		if (set_up(&s) || round_once(&s))
			usleep(RETRY_US);	/* the server or link is away */
		write_state(&s);
	}
	report(&s);
	ctx_drop(&s);
	return s.unexpected || s.late ? 1 : 0;
}
