// SPDX-License-Identifier: MIT
/*
 * oms_probe on the emulated device: the same patterns as on verbs, through
 * liboms with the classes that add no ordering of their own (unordered
 * puts, relaxed gets), so that what shows is the device's order, not the
 * library's.  Where the pattern asks for an ordering (a fence, a wait for
 * completion), the liboms call that gives it.
 *
 * Three contexts on one device made here (oms_emu_create, its chaos seed
 * from --chaos): the responder (node 1, the region), the initiator (node
 * 0) and a second initiator (node 2) that plays "another QP".  The
 * observer of a flag is the device's own (oms_emu_set_observer: each put
 * with the memory as it is then); inside one put, a thread of the
 * responder's CPU watches, as on verbs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oms.h"
#include "oms_emu.h"
#include "probe.h"

#define SLOTS		64u	/* source buffers in flight */
#define SLOT_LEN	4096u
#define QUIET_EVERY	32u	/* < SLOTS: a slot is reused after a quiet */

struct emu_rig {
	struct oms_emu *emu;
	struct oms_ctx *resp, *init, *init2;
	struct oms_mr *mr;
	struct oms_listener *l;
	struct oms_rmr rmr, rmr2;	/* init's and init2's view */
	uint64_t *region;		/* the responder's memory */
	uint64_t *src;			/* SLOTS source buffers */
	uint8_t *land;			/* gets land here */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int ctx_on(struct emu_rig *g, uint32_t node, uint32_t tmo,
		  struct oms_ctx **ctx)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	a.comp_mask = OMS_CTX_ATTR_EMU | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_TIMEOUT;
	a.emu = g->emu;
	a.node = node;
	a.timeout_ms = tmo;
	return oms_ctx_create(&a, ctx);
}

static void rig_close(struct emu_rig *g)
{
	if (g->init2)
		oms_ctx_destroy(g->init2);
	if (g->init)
		oms_ctx_destroy(g->init);
	if (g->l)
		oms_listener_close(g->l);
	if (g->mr)
		oms_mr_dereg(g->mr);
	if (g->resp)
		oms_ctx_destroy(g->resp);
	if (g->emu)
		oms_emu_destroy(g->emu);
	free(g->region);
	free(g->src);
	free(g->land);
}

static int rig_open(struct emu_rig *g, const struct probe_opts *o)
{
	struct oms_emu_attr ea = { .size = sizeof(ea) };
	char port[16];
	int err;

	memset(g, 0, sizeof(*g));
	ea.comp_mask = OMS_EMU_ATTR_CHAOS;
	ea.chaos_seed = o->chaos;
	g->region = aligned_alloc(4096, PB_REGION);
	g->src = aligned_alloc(4096, SLOTS * SLOT_LEN);
	g->land = aligned_alloc(4096, 2 * PB_BIG_LEN);
	if (!g->region || !g->src || !g->land)
		return -ENOMEM;
	memset(g->region, 0, PB_REGION);
	snprintf(port, sizeof(port), "%u", o->port);
	err = oms_emu_create(&ea, &g->emu);
	if (!err)
		err = ctx_on(g, 1, o->timeout_ms, &g->resp);
	if (!err)
		err = ctx_on(g, 0, o->timeout_ms, &g->init);
	if (!err)
		err = ctx_on(g, 2, o->timeout_ms, &g->init2);
	if (!err)
		err = oms_mr_reg(g->resp, g->region, PB_REGION, OMS_ACCESS_ALL,
				 &g->mr);
	if (!err)
		err = oms_listen(g->resp, "127.0.0.1", port, g->mr, &g->l);
	if (!err)
		err = oms_connect(g->init, "127.0.0.1", port, 0, &g->rmr);
	if (!err)
		err = oms_connect(g->init2, "127.0.0.1", port, 0, &g->rmr2);
	return err;
}

static void *slot(struct emu_rig *g, uint64_t r)
{
	return (uint8_t *)g->src + (r % SLOTS) * SLOT_LEN;
}

static void stamp(void *buf, size_t len, uint64_t v)
{
	uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = v;
}

/*
 * The device's own observer: at each put that writes the flag, with the
 * memory as it is right then, is the data the flag covers there?  Exact
 * where a polling CPU would miss most flags on a busy machine.
 */
static void flag_event(void *arg, const struct oms_emu_event *ev)
{
	struct pb_observer *o = arg;
	uint64_t f, d0, d7;

	if (ev->kind != OMS_EMU_EV_PUT || ev->dest != 1 ||
	    ev->off > PB_FLAG_OFF || ev->off + ev->len <= PB_FLAG_OFF)
		return;
	f = o->base[PB_FLAG_OFF / 8];
	d0 = o->base[PB_DATA_OFF / 8];
	d7 = o->base[PB_DATA_OFF / 8 + 7];
	o->checks++;
	o->violations += d0 < f || d7 < f;
}

/* The write patterns, watched by the responder's CPU. */
static int write_probe(void *rig, const struct probe_opts *o, int arg,
		       struct probe_result *res)
{
	struct emu_rig *g = rig;
	enum wpat p = arg;
	struct pb_observer ob = { .base = g->region };
	pthread_t th;
	uint64_t r;
	int err = 0;

	memset(g->region, 0, PB_REGION);
	ob.watch = p == WP_WITHIN ? PW_LAST_FIRST : PW_FLAG_DATA;
	if (p != WP_WITHIN)
		err = oms_emu_set_observer(g->emu, flag_event, &ob);
	else if (pthread_create(&th, NULL, pb_observe, &ob))
		err = -EAGAIN;
	if (err)
		return err;
	for (r = 1; r <= o->rounds && !err; r++) {
		void *s = slot(g, r);

		if (p == WP_WITHIN) {
			stamp(s, PB_WIN_LEN, r);
			err = oms_put(g->init, &g->rmr, PB_WIN_OFF, s,
				      PB_WIN_LEN, OMS_STORE_UNORDERED);
		} else {
			/* data line, then the flag (in the same slot) */
			stamp(s, 72, r);
			err = oms_put(g->init, &g->rmr, PB_DATA_OFF, s, 64,
				      OMS_STORE_UNORDERED);
			if (!err && p == WP_COMPLETION)
				err = oms_quiet(g->init);
			if (!err)
				err = oms_put(p == WP_WRITE_WRITE ? g->init :
					      g->init2, p == WP_WRITE_WRITE ?
					      &g->rmr : &g->rmr2, PB_FLAG_OFF,
					      (uint64_t *)s + 8, 8,
					      OMS_STORE_UNORDERED);
		}
		if (!err && r % QUIET_EVERY == 0) {
			err = oms_quiet(g->init);
			if (!err)
				err = oms_quiet(g->init2);
		}
	}
	if (!err)
		err = oms_quiet(g->init);
	if (!err)
		err = oms_quiet(g->init2);
	if (p != WP_WITHIN) {
		oms_emu_set_observer(g->emu, NULL, NULL);
	} else {
		ob.stop = 1;
		pthread_join(th, NULL);
	}
	res->rounds = r - 1;
	res->checks = ob.checks;
	res->violations = ob.violations;
	res->measured = !err;
	return err;
}

/* Gets: spin on the landing buffer while the device places the lines.
 * @two: a 64 KiB get then a 64 B one; else one 64 KiB get. */
static int read_probe(void *rig, const struct probe_opts *o, int arg,
		      struct probe_result *res)
{
	struct emu_rig *g = rig;
	int two = arg;
	volatile uint64_t *a = (volatile uint64_t *)g->land;
	volatile uint64_t *b = (volatile uint64_t *)(g->land + PB_BIG_LEN);
	const unsigned last = PB_BIG_LEN / 8 - 1;
	uint64_t r, end;
	int err = 0, n;

	memset((uint8_t *)g->region + PB_BIG_OFF, 0xa5, PB_BIG_LEN);
	for (r = 1; r <= o->rounds && !err; r++) {
		int seen = 0;

		memset(g->land, 0, 2 * PB_BIG_LEN);
		err = oms_get(g->init, g->land, &g->rmr, PB_BIG_OFF,
			      PB_BIG_LEN, OMS_READ_RELAXED);
		if (!err && two)
			err = oms_get(g->init, g->land + PB_BIG_LEN, &g->rmr,
				      PB_BIG_OFF, 64, OMS_READ_RELAXED);
		end = now_ns() + (uint64_t)o->timeout_ms * 1000000u;
		do {
			n = err ? 0 : oms_progress(g->init);
			if (n > 0 && now_ns() > end)
				n = -ETIMEDOUT;	/* a device that stalls */
			if (!seen && (two ? b[0] : a[last])) {
				seen = 1;
				res->checks++;
				res->violations += two ? !a[last] : !a[0];
			}
		} while (n > 0);
		if (!err)
			err = n < 0 ? n : oms_quiet(g->init);
	}
	res->rounds = r - 1;
	res->measured = !err;
	return err;
}

/* get(X); put(X = r), with or without a fence between: the get must not
 * return r when fenced. */
static int war_probe(void *rig, const struct probe_opts *o, int arg,
		     struct probe_result *res)
{
	struct emu_rig *g = rig;
	int fence = arg;
	uint64_t *got = (uint64_t *)g->land, r, k;
	int err = 0;

	g->region[PB_X_OFF / 8] = 0;
	for (r = 1; r <= o->rounds && !err; r += QUIET_EVERY) {
		for (k = 0; k < QUIET_EVERY && !err; k++) {
			uint64_t *s = slot(g, r + k);

			*s = r + k;
			got[k] = ~0ull;
			err = oms_get(g->init, &got[k], &g->rmr, PB_X_OFF, 8,
				      OMS_READ_RELAXED);
			if (!err && fence)
				err = oms_fence(g->init, g->rmr.dest);
			if (!err)
				err = oms_put(g->init, &g->rmr, PB_X_OFF, s, 8,
					      fence ? OMS_STORE_WEAK :
					      OMS_STORE_UNORDERED);
		}
		if (!err)
			err = oms_quiet(g->init);
		if (!err)
			probe_war_count(res, got, QUIET_EVERY, r);
	}
	res->measured = !err;
	return err;
}

/* The median time of one pattern to its completion. */
static int cost_probe(void *rig, const struct probe_opts *o, int arg,
		      struct probe_result *res)
{
	struct emu_rig *g = rig;
	enum cpat p = arg;
	uint64_t *t = calloc(o->cost_rounds, sizeof(*t)), v = 1, got;
	unsigned i;
	int err = t ? 0 : -ENOMEM;

	for (i = 0; i < o->cost_rounds && !err; i++) {
		uint64_t t0 = now_ns();

		if (p != CP_READ && p != CP_READ_WRITE && p != CP_FENCE)
			err = oms_put(g->init, &g->rmr, PB_X_OFF, &v, 8,
				      OMS_STORE_UNORDERED);
		if (!err && p != CP_WRITE)
			err = oms_get(g->init, &got, &g->rmr, PB_X_OFF, 8,
				      OMS_READ_RELAXED);
		if (!err && p == CP_FENCE)
			err = oms_fence(g->init, g->rmr.dest);
		if (!err && (p == CP_READ_WRITE || p == CP_FENCE))
			err = oms_put(g->init, &g->rmr, PB_X_OFF, &v, 8,
				      p == CP_FENCE ? OMS_STORE_WEAK :
				      OMS_STORE_UNORDERED);
		if (!err)
			err = oms_quiet(g->init);
		t[i] = now_ns() - t0;
	}
	return probe_cost_done(res, t, o->cost_rounds, err);
}

static void caps_rows(struct emu_rig *g, const struct probe_opts *o,
		      struct probe_report *rep)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	struct probe_result *r;
	int ok = !oms_query_caps(g->init, &caps);

	r = probe_add(rep, "emu", "device", "", "oms_query_caps()", PR_INFO);
	if (r && ok) {
		snprintf(r->value, sizeof(r->value), "%s, chaos seed %llu",
			 caps.backend_name, (unsigned long long)o->chaos);
		snprintf(r->note, sizeof(r->note), "destination ordering %s",
			 caps.dest_ordering);
		r->measured = 1;
	}
	r = probe_add(rep, "emu", "read_order", "L30", "where acquire reads "
		      "are ordered", PR_INFO);
	if (r && ok) {
		snprintf(r->value, sizeof(r->value), "%s",
			 caps.read_order == OMS_ORDER_NIC ? "NIC" :
			 caps.read_order == OMS_ORDER_RC ? "RC" : "RC-opt");
		r->measured = 1;
	}
}

static const struct probe_def emu_probes[] = {
	{ "write_write", "L05", "put(data) put(flag), unordered",
	  PR_ALLOWED, PK_WRITE, WP_WRITE_WRITE },
	{ "write_within", "", "one 4 KiB put: last word before first (the "
	  "device copies with memcpy: the C library's order)", PR_ALLOWED,
	  PK_WRITE, WP_WITHIN },
	{ "completion", "L15", "put(data) quiet, put(flag) from "
	  "another initiator", PR_REQUIRED, PK_WRITE, WP_COMPLETION },
	{ "flag_other_qp", "L02", "put(data), put(flag) from another "
	  "initiator, no wait", PR_ALLOWED, PK_WRITE, WP_OTHER_QP },
	{ "read_within", "L30", "one 64 KiB relaxed get: last line "
	  "placed before first", PR_ALLOWED, PK_READ, 0 },
	{ "read_read", "", "get(64 KiB) get(64 B): second placed "
	  "before the first", PR_ALLOWED, PK_READ, 1 },
	{ "war_nofence", "L33", "get(X) put(X=r) unordered: get "
	  "returns r", PR_ALLOWED, PK_WAR, 0 },
	{ "war_fence", "L33", "get(X) fence put(X=r): get returns r",
	  PR_REQUIRED, PK_WAR, 1 },
	{ "cost_write", "", "8 B put, to completion", PR_INFO, PK_COST,
	  CP_WRITE },
	{ "cost_read", "", "8 B get, to completion", PR_INFO, PK_COST,
	  CP_READ },
	{ "cost_write_flush", "L10", "8 B put + 8 B get (flush read)",
	  PR_INFO, PK_COST, CP_WRITE_FLUSH },
	{ "cost_read_write", "", "8 B get + 8 B put", PR_INFO, PK_COST,
	  CP_READ_WRITE },
	{ "cost_read_fence_write", "L33", "8 B get, fence, 8 B put",
	  PR_INFO, PK_COST, CP_FENCE },
};

/* The probes take their rig as void * through the table, and their
 * pattern as an int: the kind's own enum. */
static const struct probe_ops ops = { .run = {
	[PK_WRITE] = write_probe, [PK_READ] = read_probe,
	[PK_WAR] = war_probe, [PK_COST] = cost_probe,
} };

int probe_emu(const struct probe_opts *o, struct probe_report *rep)
{
	struct emu_rig g;
	int err = rig_open(&g, o);

	if (err) {
		fprintf(stderr, "%s: emulated device: %s\n", probe_prog,
			strerror(-err));
		rig_close(&g);
		return err;
	}
	caps_rows(&g, o, rep);
	err = probe_run_all(rep, "emu", emu_probes,
			    sizeof(emu_probes) / sizeof(emu_probes[0]), &ops,
			    &g, o);
	rig_close(&g);
	return err;
}
