// SPDX-License-Identifier: MIT
/*
 * The write-combining channel (lib/engine/wc_chan.h), exhaustively: every
 * program of up to 7 steps over the store classes and explicit drains,
 * from both start states, run through the machine and then through the
 * epoch model of a write-combining buffer (stores between two drains
 * reach the device in any order; epochs in order).  Checked per program:
 *   - no strong store can arrive before an earlier ordered store (L01,
 *     L03), no release before any earlier store (R1), nor either before
 *     a store an earlier call may have left (the UNKNOWN start);
 *   - every drain the machine asks for is needed: without it a forbidden
 *     arrival order would exist (so weak stores are never drained apart,
 *     L05, and a strong store never waits for an unordered one, L06);
 *   - the machine's count is the number of drains.
 * Next to it, the control: the same programs with the machine's drains
 * left out reach the forbidden orders, counted, and a randomised buffer
 * shows one as memory contents (F=1 read while A=0).
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "engine/wc_chan.h"

#define MAX_STEPS	7
#define DRAIN_STEP	5	/* program step: the driver's own drain */
#define NSTEP_KINDS	6	/* the five classes and DRAIN_STEP */
#define EARLIER		(-1)	/* the store an UNKNOWN start stands for */

/* One store as issued, with the epoch it went out in. */
struct issued {
	int step;		/* program step, or EARLIER */
	unsigned int cls;
	unsigned int epoch;
};

struct run {
	struct issued st[MAX_STEPS + 1];
	unsigned int nst;
	unsigned int drains;		/* drains the driver did */
	unsigned int asked;		/* of them, asked for by the machine */
	uint64_t counted;		/* the machine's count */
	/* per machine-asked drain: the store it was issued before */
	unsigned int asked_before[MAX_STEPS];
};

static int ordered(unsigned int cls)
{
	return cls != OMS_STORE_UNORDERED;
}

/*
 * Drive the machine as a driver does: ask before each store, drain where
 * it says (unless @drop_asked: the control), drain on DRAIN_STEP.
 */
static void drive(const unsigned int *prog, unsigned int n, int unknown,
		  int drop_asked, struct run *r)
{
	struct oms_wc_chan c = unknown ? OMS_WC_CHAN_UNKNOWN :
					 OMS_WC_CHAN_EMPTY;
	unsigned int epoch = 0;

	memset(r, 0, sizeof(*r));
	if (unknown)
		r->st[r->nst++] = (struct issued){ EARLIER, OMS_STORE_WEAK, 0 };
	for (unsigned int i = 0; i < n; i++) {
		if (prog[i] == DRAIN_STEP) {
			oms_wc_chan_drain(&c);
			r->drains++;
			epoch++;
			continue;
		}
		if (oms_wc_chan_store(&c, prog[i])) {
			r->asked_before[r->asked++] = r->nst;
			if (!drop_asked) {
				r->drains++;
				epoch++;
			}
		}
		r->st[r->nst++] = (struct issued){ (int)i, prog[i], epoch };
	}
	r->counted = c.drains;
}

/*
 * Can store @b arrive before the earlier store @a?  In the epoch model,
 * exactly when both went out in one epoch.
 */
static int may_pass(const struct run *r, unsigned int a, unsigned int b)
{
	return r->st[a].epoch == r->st[b].epoch;
}

/*
 * Must @a (earlier) be visible before @b?  A strong store follows every
 * earlier ordered store (L01, L03); a release every earlier store, an
 * unordered one too (R1).
 */
static int must_follow(const struct run *r, unsigned int a, unsigned int b)
{
	if (r->st[b].cls == OMS_STORE_RELEASE)
		return 1;
	return r->st[b].cls == OMS_STORE_STRONG && ordered(r->st[a].cls);
}

/* Forbidden: a store that may arrive before one it must follow. */
static unsigned int forbidden_pairs(const struct run *r)
{
	unsigned int bad = 0;

	for (unsigned int b = 0; b < r->nst; b++)
		for (unsigned int a = 0; a < b; a++)
			if (must_follow(r, a, b) && may_pass(r, a, b))
				bad++;
	return bad;
}

/*
 * Is the machine's drain before store @b needed?  It is when the epoch
 * it closed holds a store @b must follow: without the drain @b could
 * pass it.
 */
static int drain_needed(const struct run *r, unsigned int b)
{
	for (unsigned int a = 0; a < b; a++)
		if (must_follow(r, a, b) &&
		    r->st[a].epoch + 1 == r->st[b].epoch)
			return 1;
	return 0;
}

struct sweep {
	unsigned long programs;
	unsigned long forbidden;	/* programs with a forbidden order */
	unsigned long needless;		/* drains asked for and not needed */
	unsigned long miscounted;	/* machine's count != drains done */
	unsigned long asked;
};

/* Every program of 1..MAX_STEPS steps: sum of 6^n = 335922 programs. */
#define NPROGRAMS	335922ul

static void sweep(int unknown, int drop_asked, struct sweep *s)
{
	unsigned int prog[MAX_STEPS];

	memset(s, 0, sizeof(*s));
	for (unsigned int n = 1; n <= MAX_STEPS; n++) {
		unsigned long total = 1;

		for (unsigned int i = 0; i < n; i++)
			total *= NSTEP_KINDS;
		for (unsigned long code = 0; code < total; code++) {
			unsigned long c = code;
			struct run r;

			for (unsigned int i = 0; i < n; i++, c /= NSTEP_KINDS)
				prog[i] = (unsigned int)(c % NSTEP_KINDS);
			drive(prog, n, unknown, drop_asked, &r);
			s->programs++;
			s->asked += r.asked;
			if (forbidden_pairs(&r))
				s->forbidden++;
			if (drop_asked)
				continue;
			if (r.counted != r.drains)
				s->miscounted++;
			for (unsigned int k = 0; k < r.asked; k++)
				if (!drain_needed(&r, r.asked_before[k]))
					s->needless++;
		}
	}
}

TEST(L01_L03_strong_after_every_earlier_ordered_store_exhaustive)
{
	for (int unknown = 0; unknown <= 1; unknown++) {
		struct sweep s;

		sweep(unknown, 0, &s);
		ASSERT_EQ(NPROGRAMS, s.programs);
		EXPECT_EQ(0ul, s.forbidden);
		EXPECT_EQ(0ul, s.needless);
		EXPECT_EQ(0ul, s.miscounted);
		EXPECT_LT(0ul, s.asked);
		TH_LOG("%s start: %lu programs, %lu drains asked, %lu forbidden",
		       unknown ? "unknown" : "empty", s.programs, s.asked,
		       s.forbidden);
	}
}

/* The control: the same programs without the machine's drains. */
TEST(L01_L03_control_without_drains_strong_passes)
{
	for (int unknown = 0; unknown <= 1; unknown++) {
		struct sweep s;

		sweep(unknown, 1, &s);
		ASSERT_EQ(NPROGRAMS, s.programs);
		EXPECT_LT(0ul, s.forbidden);
		TH_LOG("%s start, drains left out: %lu of %lu programs reach a forbidden order",
		       unknown ? "unknown" : "empty", s.forbidden, s.programs);
	}
}

static void run_prog(const char *text, int unknown, struct run *r)
{
	unsigned int prog[MAX_STEPS], n = 0;

	for (; *text && n < MAX_STEPS; text++) {
		switch (*text) {
		case 'U': prog[n++] = OMS_STORE_UNORDERED; break;
		case 'W': prog[n++] = OMS_STORE_WEAK; break;
		case 'S': prog[n++] = OMS_STORE_STRONG; break;
		case 'R': prog[n++] = OMS_STORE_RELEASE; break;
		case 'Q': prog[n++] = OMS_STORE_SEQUENCED; break;
		case 'D': prog[n++] = DRAIN_STEP; break;
		default: break;
		}
	}
	drive(prog, n, unknown, 0, r);
}

/* L05: weak stores are never drained apart; L06: U then S needs none. */
TEST(L05_L06_weak_and_unordered_are_never_drained_for)
{
	static const char *const none[] = {
		"W W W W W W W", "Q Q W Q", "U U U", "U S", "U U S",
		"S U", "D W D W", "W D S", "U D S",
	};
	struct run r;

	for (unsigned int i = 0; i < ARRAY_SIZE(none); i++) {
		run_prog(none[i], 0, &r);
		EXPECT_EQ(0u, r.asked) TH_LOG("%s", none[i]);
	}
	/* the weak stores share one epoch: either may arrive first */
	run_prog("W W", 0, &r);
	EXPECT_TRUE(may_pass(&r, 0, 1));
	/* the unordered store may arrive after the strong one */
	run_prog("U S", 0, &r);
	EXPECT_TRUE(may_pass(&r, 0, 1));
}

/* Where the drains go for the shapes the drivers issue. */
TEST(L01_L03_drain_placement)
{
	static const struct {
		const char *prog;
		int unknown;
		unsigned int asked;
	} cases[] = {
		{ "S", 0, 0 }, { "S", 1, 1 }, { "S S", 1, 2 }, { "U S", 1, 1 },
		{ "S W W W S", 1, 2 }, { "W S", 0, 1 }, { "W R", 0, 1 },
		{ "W D S", 1, 0 }, { "S S S S S S S", 0, 6 },
		{ "Q S", 0, 1 }, { "U U S", 1, 1 },
		/* a release follows unordered stores too (R1) */
		{ "U R", 0, 1 }, { "U S", 0, 0 }, { "U D R", 0, 0 },
		{ "R U R", 0, 1 }, { "S U S", 0, 1 },
	};
	struct run r;

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		run_prog(cases[i].prog, cases[i].unknown, &r);
		EXPECT_EQ(cases[i].asked, r.asked)
			TH_LOG("%s from %s", cases[i].prog,
			       cases[i].unknown ? "unknown" : "empty");
	}
}

/*
 * L04: the doorbell chain WO(data) WO(wqe) SO(dbrec) SO(db), twice.  No
 * db before its data, WQE and record; db2 not before db1.
 */
TEST(L04_doorbell_chain)
{
	{
		unsigned int prog[8] = {
			OMS_STORE_WEAK, OMS_STORE_WEAK, OMS_STORE_STRONG,
			OMS_STORE_STRONG, OMS_STORE_WEAK, OMS_STORE_WEAK,
			OMS_STORE_STRONG, OMS_STORE_STRONG,
		};
		struct oms_wc_chan c = OMS_WC_CHAN_EMPTY;
		unsigned int epoch[8], e = 0;

		for (unsigned int i = 0; i < 8; i++) {
			e += (unsigned int)oms_wc_chan_store(&c, prog[i]);
			epoch[i] = e;
		}
		EXPECT_EQ(4u, c.drains);
		/* db1 (3) after data1, wqe1, dbrec1; db2 (7) after all */
		for (unsigned int i = 0; i < 3; i++)
			EXPECT_LT(epoch[i], epoch[3]);
		for (unsigned int i = 0; i < 7; i++)
			EXPECT_LT(epoch[i], epoch[7]);
		EXPECT_EQ(epoch[0], epoch[1]);	/* data and WQE combine */
	}
}

/*
 * A randomised write-combining buffer: each epoch's stores reach memory in
 * a shuffled order, and an observer reads memory after every arrival.
 * With the machine's drains it never reads F=1 with A or B still 0; with
 * them left out it does (L01 as memory contents).
 */
static unsigned int l01_trials(int drop, unsigned int trials)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	unsigned int seen = 0;

	for (unsigned int t = 0; t < trials; t++) {
		/* WO(A=1) WO(B=1) SO(F=1) from an unknown start */
		const unsigned int cls[3] = {
			OMS_STORE_WEAK, OMS_STORE_WEAK, OMS_STORE_STRONG
		};
		struct oms_wc_chan c = OMS_WC_CHAN_UNKNOWN;
		unsigned int buf[3], nbuf = 0, mem[3] = { 0 }, bad = 0;

		for (unsigned int i = 0; i <= 3; i++) {
			int drain = i == 3 ||
				    (oms_wc_chan_store(&c, cls[i]) && !drop);

			/* a drain: the buffer reaches memory, shuffled */
			while (drain && nbuf) {
				unsigned int k;

				rng = rng * 6364136223846793005ull +
				      1442695040888963407ull;
				k = (unsigned int)(rng >> 33) % nbuf;
				mem[buf[k]] = 1;
				buf[k] = buf[--nbuf];
				if (mem[2] && (!mem[0] || !mem[1]))
					bad = 1;
			}
			if (i < 3)
				buf[nbuf++] = i;
		}
		seen += bad;
	}
	return seen;
}

TEST(L01_randomised_buffer_reads_no_flag_before_data)
{
	unsigned int ordered_seen = l01_trials(0, 20000);
	unsigned int control_seen = l01_trials(1, 20000);

	EXPECT_EQ(0u, ordered_seen);
	EXPECT_LT(0u, control_seen);
	TH_LOG("F=1 read before A or B: %u of 20000 with the drains, %u without",
	       ordered_seen, control_seen);
}

TEST(unknown_class_is_drained_as_strong)
{
	struct oms_wc_chan c = OMS_WC_CHAN_EMPTY;

	EXPECT_EQ(0, oms_wc_chan_store(&c, OMS_STORE_WEAK));
	EXPECT_EQ(1, oms_wc_chan_store(&c, 77));
	EXPECT_EQ(1u, c.drains);
	EXPECT_EQ(1, c.pending);
	oms_wc_chan_drain(&c);
	EXPECT_EQ(0, c.pending);
	EXPECT_EQ(0, oms_wc_chan_store(&c, 77));
	EXPECT_EQ(2u, c.drains);
}

TEST_HARNESS_MAIN
