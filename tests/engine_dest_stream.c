// SPDX-License-Identifier: MIT
/*
 * oms_dseq, the destination stream machine (D1), driven exhaustively over
 * small windows (1, 2, 4, 8): four members, each fine, refused on arrival
 * or failing when performed, arriving in every order, numbered across the
 * 16-bit wrap, and an intruder - none, a duplicate of any member, a number
 * already taken, a number past the window - arriving at every position.
 * Each run is held against a reference model written apart from the
 * engine, member by member: performed, its own error, cancelled, or the
 * intruder's answer (-EEXIST, -ESTALE, -ENOSPC).  The three decisions
 * (docs/ordering.md, "The destination stream"): a duplicate and a number
 * out of the window stop the stream where it stands; a resume names the
 * next number, drops what was buffered and forgets the stop - every run
 * starts with one.  The control: the same model told that a duplicate
 * fails alone disagrees with the machine, so the check can fail.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile).
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "engine/dest_stream.h"

#define N 4
#define BASE 65534u	/* numbers 65534, 65535, 0, 1: across the wrap */
#define INTRUDER N	/* the intruder's cookie */

enum kind { FINE, REFUSED, FAILS };
enum seen { NONE, PERFORMED, OWN_ERROR, CANCELLED, E_EXIST, E_STALE,
	    E_NOSPC };
enum intruder { NO_INTRUDER, DUP0, STALE = DUP0 + N, BEYOND, NINTRUDERS };

struct run {
	enum kind k[N + 1];
	enum seen seen[N + 1];
	int twice;		/* a cookie completed more than once */
};

static uint16_t num(int i)
{
	return (uint16_t)(BASE + (unsigned)i);
}

static void see(struct run *r, uint64_t c, enum seen s)
{
	if (r->seen[c] != NONE)
		r->twice = 1;
	/* a refused member completes with its own error, whatever stops */
	r->seen[c] = r->k[c] == REFUSED && s != PERFORMED ? OWN_ERROR : s;
}

/* ---- the engine, driven as a destination drives it ---- */

static void take_dropped(struct oms_dseq *m, struct run *r)
{
	uint64_t c;

	while (oms_dseq_dropped(m, &c))
		see(r, c, CANCELLED);
}

static void drive_arrive(struct oms_dseq *m, struct run *r, uint64_t c,
			 uint16_t seq)
{
	enum oms_stream_verdict v;
	uint16_t at;
	int e = oms_dseq_arrive(m, 0, seq, c, r->k[c] == REFUSED);

	if (e)
		see(r, c, e == -ECANCELED ? CANCELLED : e == -EEXIST ? E_EXIST :
			  e == -ESTALE ? E_STALE : E_NOSPC);
	take_dropped(m, r);
	while (oms_dseq_pop(m, 0, &at, &c, &v) == 1) {
		if (v == OMS_STREAM_GO && r->k[c] == FAILS) {
			oms_dseq_failed(m, 0, at);
			see(r, c, OWN_ERROR);
		} else {
			see(r, c, v == OMS_STREAM_GO ? PERFORMED :
				  v == OMS_STREAM_STOP_HERE ? OWN_ERROR :
							      CANCELLED);
		}
		take_dropped(m, r);
	}
}

/* ---- the reference model: indices, no serial numbers, no engine ---- */

struct model {
	int next, stop, halted, w, dup_alone;
	int at[N + 1];		/* the cookie holding index i, or -1 */
	struct run r;
};

static void halt(struct model *md)
{
	md->halted = 1;
	for (int i = 0; i <= N; i++)
		if (md->at[i] >= 0 && md->r.seen[md->at[i]] == NONE)
			see(&md->r, (uint64_t)md->at[i], CANCELLED);
}

static void model_take(struct model *md)
{
	while (!md->halted && md->next <= N && md->at[md->next] >= 0) {
		int c = md->at[md->next];

		if (md->next == md->stop || md->r.k[c] == FAILS) {
			see(&md->r, (uint64_t)c, OWN_ERROR);
			md->next++;
			halt(md);
			return;
		}
		see(&md->r, (uint64_t)c, PERFORMED);
		md->next++;
	}
}

static void model_arrive(struct model *md, int c, int i)
{
	int d = i - md->next;

	if (md->halted) {
		see(&md->r, (uint64_t)c, CANCELLED);
	} else if (d < 0 || d >= md->w) {
		see(&md->r, (uint64_t)c, d < 0 ? E_STALE : E_NOSPC);
		halt(md);
	} else if (i > md->stop) {
		see(&md->r, (uint64_t)c, CANCELLED);
	} else if (md->at[i] >= 0) {
		see(&md->r, (uint64_t)c, E_EXIST);
		if (!md->dup_alone)
			halt(md);
	} else {
		md->at[i] = c;
		if (md->r.k[c] == REFUSED && i < md->stop)
			md->stop = i;
		model_take(md);
	}
}

/* ---- one run of both ---- */

static int intruder_index(enum intruder in, int w)
{
	return in == STALE ? -1 : in == BEYOND ? N + w : (int)in - DUP0;
}

/* Runs the engine and the model on one case; returns 1 if they agree. */
static int one_run(struct oms_dseq *m, int w, const enum kind *k,
		   const int *order, enum intruder in, int pos, int dup_alone)
{
	struct model md = { .next = 0, .stop = N + 1, .w = w,
			    .dup_alone = dup_alone };
	struct run r;

	memset(&r, 0, sizeof(r));
	memcpy(r.k, k, sizeof(r.k[0]) * N);
	r.k[INTRUDER] = FINE;
	md.r = r;
	for (int i = 0; i <= N; i++)
		md.at[i] = -1;
	/* a resume names the first number: what an earlier run left
	 * buffered is dropped, its stop forgotten */
	oms_dseq_resume(m, 0, num(0));
	while (oms_dseq_dropped(m, &(uint64_t){ 0 }))
		;
	for (int p = 0; p <= N; p++) {
		if (in != NO_INTRUDER && p == pos) {
			int ii = intruder_index(in, w);

			drive_arrive(m, &r, INTRUDER, num(ii));
			model_arrive(&md, INTRUDER, ii);
		}
		if (p < N) {
			drive_arrive(m, &r, (uint64_t)order[p], num(order[p]));
			model_arrive(&md, order[p], order[p]);
		}
	}
	/* a member that waits behind a gap the stream never fills is still
	 * buffered: both leave it NONE */
	return !r.twice && !md.r.twice &&
	       !memcmp(r.seen, md.r.seen, sizeof(r.seen));
}

/* Every window, outcome pattern, arrival order, intruder and its place;
 * returns the runs where engine and model disagree. */
static long explore(int dup_alone, long *runs, enum intruder only)
{
	static const int windows[] = { 1, 2, 4, 8 };
	long bad = 0;

	*runs = 0;
	for (size_t wi = 0; wi < sizeof(windows) / sizeof(windows[0]); wi++) {
		struct oms_dseq m;

		if (oms_dseq_init(&m, 1, (unsigned)windows[wi]))
			return -1;
		for (int code = 0; code < 81; code++) {	/* 3^4 */
			enum kind k[N];
			int p[N];

			for (int i = 0, c = code; i < N; i++, c /= 3)
				k[i] = (enum kind)(c % 3);
			for (int i = 0; i < N; i++)
				p[i] = i;
			do {
				for (int in = 0; in < NINTRUDERS; in++)
					for (int pos = 0; pos <= N; pos++) {
						if ((only && in != (int)only) ||
						    (!in && pos))
							continue;
						bad += !one_run(&m, windows[wi],
								k, p,
								(enum intruder)in,
								pos, dup_alone);
						(*runs)++;
					}
			} while (t_next_perm(p, N));
		}
		oms_dseq_destroy(&m);
	}
	return bad;
}

TEST(d1_dest_stream_matches_model_every_order_small_windows)
{
	long runs, bad = explore(0, &runs, NO_INTRUDER);

	TH_LOG("%ld runs (windows 1-8, 81 outcome patterns, 24 orders, 7 "
	       "intruders at 5 places), %ld disagree with the model",
	       runs, bad);
	EXPECT_EQ(4L * 81 * 24 * (1 + (NINTRUDERS - 1) * (N + 1)), runs);
	EXPECT_EQ(0, bad);
}

/* The control: a model where a duplicate fails alone is not the engine
 * (a duplicate of the last member: it is often buffered when it comes). */
TEST(d1_dest_stream_control_duplicate_failing_alone_disagrees)
{
	long runs, bad = explore(1, &runs, (enum intruder)(DUP0 + N - 1));

	TH_LOG("control: %ld of %ld runs with a duplicate disagree", bad, runs);
	EXPECT_GT(bad, 0);
}

/*
 * The three decisions on one stream, step by step, across the wrap: a
 * duplicate stops it where it stands (the buffered member is dropped, a
 * later one cancelled), a resume at the initiator's next number lets it
 * go on; a number past the window and one already taken do the same.
 */
TEST(d1_dest_stream_duplicate_window_restart)
{
	struct oms_dseq m;
	enum oms_stream_verdict v;
	uint64_t c;
	uint16_t at;

	ASSERT_EQ(0, oms_dseq_init(&m, 2, 4));
	ASSERT_EQ(0, oms_dseq_resume(&m, 1, 65535));
	EXPECT_EQ(0, oms_dseq_arrive(&m, 1, 0, 10, 0));	/* waits */
	EXPECT_EQ(0, oms_dseq_pop(&m, 1, &at, &c, &v));
	EXPECT_EQ(-EEXIST, oms_dseq_arrive(&m, 1, 0, 11, 0));
	EXPECT_EQ(1, oms_dseq_dropped(&m, &c));
	EXPECT_EQ(10u, c);
	EXPECT_EQ(0, oms_dseq_dropped(&m, &c));
	EXPECT_EQ(-ECANCELED, oms_dseq_arrive(&m, 1, 65535, 12, 0));
	EXPECT_EQ(1, oms_dseq_flush_cancelled(&m, 1, 0));
	/* the other stream goes on */
	EXPECT_EQ(0, oms_dseq_arrive(&m, 0, 0, 20, 0));
	EXPECT_EQ(1, oms_dseq_pop(&m, 0, &at, &c, &v));
	EXPECT_EQ(OMS_STREAM_GO, v);
	/* resume at the initiator's next number: the numbering goes on */
	ASSERT_EQ(0, oms_dseq_resume(&m, 1, 1));
	EXPECT_EQ(0, oms_dseq_flush_cancelled(&m, 1, 2));
	EXPECT_EQ(0, oms_dseq_arrive(&m, 1, 1, 13, 0));
	EXPECT_EQ(1, oms_dseq_pop(&m, 1, &at, &c, &v));
	EXPECT_EQ(OMS_STREAM_GO, v);
	EXPECT_EQ(1u, at);
	EXPECT_EQ(2, oms_dseq_next(&m, 1));
	/* past the window (next 2, window 4: 6), then a taken number */
	EXPECT_EQ(0, oms_dseq_arrive(&m, 1, 3, 14, 0));
	EXPECT_EQ(-ENOSPC, oms_dseq_arrive(&m, 1, 6, 15, 0));
	EXPECT_EQ(1, oms_dseq_dropped(&m, &c));
	EXPECT_EQ(14u, c);
	EXPECT_EQ(1, oms_dseq_flush_cancelled(&m, 1, 3));
	ASSERT_EQ(0, oms_dseq_resume(&m, 1, 7));
	EXPECT_EQ(-ESTALE, oms_dseq_arrive(&m, 1, 6, 16, 0));
	EXPECT_EQ(0, oms_dseq_dropped(&m, &c));
	EXPECT_EQ(-ECANCELED, oms_dseq_arrive(&m, 1, 7, 17, 0));
	oms_dseq_destroy(&m);
}

TEST_HARNESS_MAIN
