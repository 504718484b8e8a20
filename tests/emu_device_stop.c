// SPDX-License-Identifier: MIT
/*
 * The device agent stopped or hung mid-run.  Stopped: the thread leaves
 * abruptly, abandoning everything it holds (taken commands, reads in the
 * RLSQ, unsent completions).  Hung: it stops executing and stops its
 * heartbeat.  Either way every pending operation of every initiator
 * completes with an error (-ENODEV, or -ETIMEDOUT after the context's
 * timeout) within a bound, quiet and fences return, and later calls fail
 * cleanly instead of hanging; so do setup calls (a region, a listener, a
 * connection) on a stopped device.  Through the public device object
 * (oms_emu.h): the rig makes a device of its own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

#define WORDS 4096

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct rig {
	struct oms_emu *emu;
	struct oms_ctx *ini[2], *tgt;
	struct oms_mr *mr;
	struct oms_rmr r;
	uint64_t *mem, *src, *dst;
};

/* A context on the rig's device. */
static int rig_ctx(struct rig *g, uint32_t node, uint32_t timeout_ms,
		   struct oms_ctx **c)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU |
		      OMS_CTX_ATTR_TIMEOUT;
	a.node = node;
	a.emu = g->emu;
	a.timeout_ms = timeout_ms;
	return oms_ctx_create(&a, c);
}

static int rig_open(struct rig *g, uint32_t timeout_ms)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
		.chaos_seed = 0x5709,
	};

	memset(g, 0, sizeof(*g));
	if (oms_emu_create(&ea, &g->emu))
		return -1;
	for (int i = 0; i < 2; i++)
		if (rig_ctx(g, 0, timeout_ms, &g->ini[i]))
			return -1;
	if (rig_ctx(g, 1, timeout_ms, &g->tgt))
		return -1;
	g->mem = calloc(WORDS, 8);
	g->src = calloc(WORDS, 8);
	g->dst = calloc(WORDS, 8);
	if (oms_mr_reg(g->tgt, g->mem, WORDS * 8, OMS_ACCESS_ALL, &g->mr))
		return -1;
	return oms_mr_remote(g->mr, &g->r);
}

static void rig_close(struct rig *g)
{
	oms_ctx_destroy(g->ini[0]);
	oms_ctx_destroy(g->ini[1]);
	oms_ctx_destroy(g->tgt);
	oms_emu_destroy(g->emu);
	free(g->mem);
	free(g->src);
	free(g->dst);
}

/* Fill both contexts with work of every kind: weak and strong puts (some
 * held), reads through the RLSQ, atomics, fences. */
static int load(struct rig *g, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct oms_ctx *c = g->ini[i & 1];
		uint64_t off = 8ull * (i % WORDS);

		if (oms_put(c, &g->r, off, &g->src[i % WORDS], 8,
			    (enum oms_store_class)(i % 3)) ||
		    oms_get(c, &g->dst[i % WORDS], &g->r, off, 8,
			    i & 2 ? OMS_READ_ACQUIRE : 0) ||
		    oms_atomic_fadd(c, &g->r, 0, 1, NULL))
			return -1;
		if (i % 64 == 63 && oms_fence(c, g->r.dest))
			return -1;
	}
	return 0;
}

TEST(stopped_mid_run)
{
	struct oms_stats st = { .size = sizeof(st) };
	struct rig g;
	uint64_t t0;
	int err;

	/* The contexts' liveness timeout is a minute: failing in far less
	 * (10 s, a bound for a loaded machine) shows the stop is seen, not
	 * waited out. */
	ASSERT_EQ(0, rig_open(&g, 60000));
	ASSERT_EQ(0, load(&g, 600));
	ASSERT_EQ(0, oms_emu_stop(g.emu));	/* abandons pending work */
	t0 = now_ms();
	ASSERT_EQ(0, oms_ctx_stats(g.ini[0], &st));
	TH_LOG("device stopped with %llu operations of context 0 pending",
	       (unsigned long long)st.outstanding);
	err = oms_quiet(g.ini[0]);
	ASSERT_EQ(-ENODEV, err);
	ASSERT_EQ(-ENODEV, oms_fence_local(g.ini[1]));
	ASSERT_EQ(-ENODEV, oms_quiet(g.ini[1]));
	TH_LOG("both contexts failed their pending operations in %llu ms",
	       (unsigned long long)(now_ms() - t0));
	ASSERT_LT(now_ms() - t0, 10000);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, oms_ctx_stats(g.ini[i], &st));
		ASSERT_EQ(0, st.outstanding);
	}
	/* later calls fail at once */
	ASSERT_EQ(-ENODEV, oms_put(g.ini[0], &g.r, 0, g.src, 8,
				   OMS_STORE_STRONG));
	ASSERT_EQ(-ENODEV, oms_fence(g.ini[0], 1));
	ASSERT_EQ(-ENODEV, oms_progress(g.ini[0]));
	ASSERT_EQ(-ENODEV, oms_quiet(g.ini[0]));
	rig_close(&g);
}

/*
 * Setup calls on a stopped device fail at once with -ENODEV, before any
 * data call of the context has noticed the stop: a region, a listener, a
 * connection (a region must not be added to a dead device's table).
 * Nothing is left to free but the rig.
 */
TEST(stopped_device_refuses_setup)
{
	struct oms_listener *l = (void *)0x1;
	struct oms_mr *mr = (void *)0x1;
	struct oms_rmr r;
	struct rig g;

	ASSERT_EQ(0, rig_open(&g, 60000));
	ASSERT_EQ(0, oms_listen(g.tgt, NULL, "7620", g.mr, &l));
	ASSERT_EQ(0, oms_connect(g.ini[0], "localhost", "7620", 0, &r));
	ASSERT_EQ(0, oms_listener_close(l));
	l = (void *)0x1;
	ASSERT_EQ(0, oms_emu_stop(g.emu));
	EXPECT_EQ(-ENODEV, oms_mr_reg(g.ini[1], g.src, 64, OMS_ACCESS_ALL,
				      &mr));
	EXPECT_EQ((void *)0x1, mr);
	EXPECT_EQ(-ENODEV, oms_listen(g.tgt, NULL, "7621", g.mr, &l));
	EXPECT_EQ((void *)0x1, l);
	EXPECT_EQ(-ENODEV, oms_connect(g.ini[1], "localhost", "7620", 0, &r));
	rig_close(&g);
}

TEST(hung_mid_run_times_out)
{
	struct oms_stats st = { .size = sizeof(st) };
	struct oms_ctx *fresh;
	struct rig g;
	uint64_t t0;

	ASSERT_EQ(0, rig_open(&g, 200));
	ASSERT_EQ(0, load(&g, 600));
	ASSERT_EQ(0, oms_emu_freeze(g.emu, 1));
	t0 = now_ms();
	ASSERT_EQ(-ETIMEDOUT, oms_quiet(g.ini[0]));
	ASSERT_EQ(-ETIMEDOUT, oms_quiet(g.ini[1]));
	TH_LOG("hung device: both contexts timed out in %llu ms (timeout "
	       "200 ms each)", (unsigned long long)(now_ms() - t0));
	/* a hang bound: it would be the test's own timeout otherwise */
	ASSERT_LT(now_ms() - t0, 20000);
	ASSERT_EQ(0, oms_ctx_stats(g.ini[0], &st));
	ASSERT_EQ(0, st.outstanding);
	ASSERT_EQ(-ETIMEDOUT, oms_get(g.ini[0], g.dst, &g.r, 0, 8, 0));
	/* the device comes back: the dead contexts stay dead, new ones work */
	ASSERT_EQ(0, oms_emu_freeze(g.emu, 0));
	ASSERT_EQ(-ETIMEDOUT, oms_quiet(g.ini[0]));
	ASSERT_EQ(0, rig_ctx(&g, 0, 2000, &fresh));
	ASSERT_EQ(0, oms_put(fresh, &g.r, 8, g.src, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(fresh));
	ASSERT_EQ(0, oms_ctx_destroy(fresh));
	rig_close(&g);
}

static int killed;	/* set once oms_emu_stop() has returned */

static void *killer(void *arg)
{
	usleep(30000);
	oms_emu_stop(arg);
	__atomic_store_n(&killed, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The initiator is inside quiet, busy, when another thread kills it. */
TEST(killed_while_waiting)
{
	struct rig g;
	pthread_t t;
	int err = 0, rounds = 0, was_killed;
	uint64_t t0;

	ASSERT_EQ(0, rig_open(&g, 60000));	/* see stopped_mid_run */
	ASSERT_EQ(0, pthread_create(&t, NULL, killer, g.emu));
	/* Bounded by the kill, not the clock: a round that starts after the
	 * device was stopped must fail, however slowly the machine runs. */
	do {
		was_killed = __atomic_load_n(&killed, __ATOMIC_ACQUIRE);
		err = load(&g, 256);
		if (!err)
			err = oms_quiet(g.ini[0]);
		if (!err)
			err = oms_quiet(g.ini[1]);
		rounds++;
	} while (!err && !was_killed);
	pthread_join(t, NULL);
	TH_LOG("stopped after %d rounds: %d", rounds, err);
	ASSERT_TRUE(err == -ENODEV || err == -1);
	/* A context with nothing pending may not have noticed yet: its next
	 * operation fails (at once, or in quiet). */
	t0 = now_ms();
	for (int i = 0; i < 2; i++) {
		err = oms_put(g.ini[i], &g.r, 0, g.src, 8, OMS_STORE_STRONG);
		ASSERT_TRUE(err == 0 || err == -ENODEV);
		ASSERT_EQ(-ENODEV, oms_quiet(g.ini[i]));
	}
	ASSERT_LT(now_ms() - t0, 10000);
	rig_close(&g);
}

TEST_HARNESS_MAIN
