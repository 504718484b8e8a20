// SPDX-License-Identifier: MIT
/*
 * oms_stream, the stop rule of a sequence-numbered stream (D1), driven
 * exhaustively: five members, each fine, refused on arrival or failing
 * when performed, arriving in every order, numbered across the 16-bit
 * wrap.  A small in-order buffer stands for the reorder buffer, as the
 * agent drives it.  The rule: every member before the first bad one (in
 * number order) is performed, that one completes with its own error,
 * every later one is cancelled unperformed, and a flush is cancelled
 * exactly when it counts past the bad one.  Beside it the control: the
 * same driver told no stops shows the forbidden outcome (a member after a
 * failure performed), so the check can fail.  And the serial-number
 * compare every side of the engine uses (engine/serial.h), over every
 * distance from numbers on both sides of the wrap.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile).
 */
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "engine/serial.h"
#include "engine/stream.h"

#define N 5
#define BASE 65533u	/* numbers 65533..65535, 0, 1: across the wrap */

enum kind { FINE, REFUSED, FAILS };
enum seen { NONE, PERFORMED, OWN_ERROR, CANCELLED };

struct run {
	struct oms_stream s;
	uint8_t arrived[N];
	enum seen seen[N];
	int stops;		/* 0: the control, which never stops */
};

static uint16_t num(int i)
{
	return (uint16_t)(BASE + (unsigned)i);
}

static void take_ready(struct run *r, const enum kind *k)
{
	int i;

	while (!r->s.reached) {
		i = (uint16_t)(r->s.next - BASE);
		if (i >= N || !r->arrived[i])
			return;
		switch (oms_stream_take(&r->s, num(i))) {
		case OMS_STREAM_GO:
			if (k[i] == FAILS && r->stops) {
				oms_stream_stop(&r->s, num(i));
				r->seen[i] = OWN_ERROR;
			} else {
				r->seen[i] = k[i] == FINE ? PERFORMED : OWN_ERROR;
			}
			break;
		case OMS_STREAM_STOP_HERE:
			r->seen[i] = OWN_ERROR;
			break;
		case OMS_STREAM_CANCEL:
			r->seen[i] = CANCELLED;
			break;
		}
	}
	/* reached: what was buffered is dropped, cancelled */
	for (i = 0; i < N; i++)
		if (r->arrived[i] && r->seen[i] == NONE)
			r->seen[i] = CANCELLED;
}

static void arrive(struct run *r, const enum kind *k, int i)
{
	if (r->s.reached || oms_stream_after_stop(&r->s, num(i))) {
		r->seen[i] = CANCELLED;	/* never buffered */
		return;
	}
	r->arrived[i] = 1;
	if (k[i] == REFUSED && r->stops)
		oms_stream_stop(&r->s, num(i));
	take_ready(r, k);
}

/* Does the run keep the rule?  Flushes are checked too when stopping. */
static int keeps_rule(const struct run *r, const enum kind *k)
{
	int first = N;

	for (int i = 0; i < N; i++)
		if (k[i] != FINE) {
			first = i;
			break;
		}
	for (int i = 0; i < N; i++) {
		enum seen want = i < first ? PERFORMED :
				 i == first ? OWN_ERROR : CANCELLED;

		if (r->seen[i] != want)
			return 0;
	}
	for (int c = 0; c <= N && r->stops; c++)
		if (oms_stream_flush_cancelled(&r->s, num(c)) != (c > first))
			return 0;
	return 1;
}

/* Every outcome pattern in every arrival order; returns the runs that
 * break the rule. */
static long explore(int stops, long *runs)
{
	enum kind k[N];
	long bad = 0;

	*runs = 0;
	for (int code = 0; code < 243; code++) {	/* 3^5 */
		int c = code, p[N];

		for (int i = 0; i < N; i++, c /= 3)
			k[i] = (enum kind)(c % 3);
		for (int i = 0; i < N; i++)
			p[i] = i;
		do {
			struct run r;

			memset(&r, 0, sizeof(r));
			oms_stream_start(&r.s, BASE);
			r.stops = stops;
			for (int i = 0; i < N; i++)
				arrive(&r, k, p[i]);
			bad += !keeps_rule(&r, k);
			(*runs)++;
		} while (t_next_perm(p, N));
	}
	return bad;
}

TEST(d1_stream_stops_at_first_failure_every_order)
{
	long runs, bad = explore(1, &runs);

	TH_LOG("%ld runs (243 outcome patterns x 120 arrival orders), %ld "
	       "break the rule", runs, bad);
	EXPECT_EQ(243L * 120, runs);
	EXPECT_EQ(0, bad);
}

/* The control: with no stops, members after a failure are performed. */
TEST(d1_stream_control_without_stops_performs_after_failure)
{
	long runs, bad = explore(0, &runs);

	TH_LOG("control: %ld of %ld runs perform after a failure", bad, runs);
	EXPECT_GT(bad, 0);
}

TEST(d1_stream_earliest_stop_stands_and_stop_all)
{
	struct oms_stream s;

	oms_stream_start(&s, 65534);
	oms_stream_stop(&s, 1);		/* after the wrap */
	oms_stream_stop(&s, 65535);	/* earlier: it stands */
	oms_stream_stop(&s, 0);		/* later: ignored */
	EXPECT_EQ(65535, s.stop_at);
	EXPECT_EQ(OMS_STREAM_GO, oms_stream_take(&s, 65534));
	EXPECT_EQ(0, oms_stream_cancels(&s, 65534));
	EXPECT_EQ(1, oms_stream_cancels(&s, 0));
	EXPECT_EQ(0, oms_stream_after_stop(&s, 65535));
	EXPECT_EQ(1, oms_stream_after_stop(&s, 0));
	EXPECT_EQ(OMS_STREAM_STOP_HERE, oms_stream_take(&s, 65535));
	EXPECT_EQ(OMS_STREAM_CANCEL, oms_stream_take(&s, 0));
	/* a resume forgets it; stop_all cancels everything not yet taken */
	oms_stream_start(&s, 7);
	EXPECT_EQ(OMS_STREAM_GO, oms_stream_take(&s, 7));
	oms_stream_stop_all(&s);
	EXPECT_EQ(1, oms_stream_cancels(&s, 8));
	EXPECT_EQ(8, s.stop_at);
	EXPECT_EQ(OMS_STREAM_CANCEL, oms_stream_take(&s, 8));
	EXPECT_EQ(0, oms_stream_flush_cancelled(&s, 8));
	EXPECT_EQ(1, oms_stream_flush_cancelled(&s, 9));
	/* a resume names the next number: the stop goes */
	oms_stream_start(&s, 9);
	EXPECT_EQ(OMS_STREAM_GO, oms_stream_take(&s, 9));
}

/* a + d is at or after a exactly when d < 2^15, from any a, across the
 * wrap; ahead() gives d back. */
TEST(serial_compare_every_distance)
{
	static const uint16_t from[] = { 0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff,
					 BASE, 12345 };
	unsigned bad = 0;

	for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++)
		for (uint32_t d = 0; d < 0x10000u; d++) {
			uint16_t a = from[i], b = (uint16_t)(a + d);

			bad += oms_serial_ahead(b, a) != d;
			bad += oms_serial_at_or_after(b, a) != (d < 0x8000u);
			/* the other way round: a is at or after b when
			 * equal or more than half the space ahead of it */
			bad += oms_serial_at_or_after(a, b) !=
			       (d == 0 || d > 0x8000u);
		}
	EXPECT_EQ(0, bad);
}

TEST_HARNESS_MAIN
