// SPDX-License-Identifier: MIT
/*
 * Litmus L32 on the emulated device: KVS gets under a concurrent writer.
 * A writer thread (the server's CPU) keeps rewriting a few items through
 * oms_mr_write while the initiator gets them through the device (chaos on:
 * the lines of a relaxed read land in any order).  Four get protocols must
 * return 0 torn values to the caller:
 *   single read   header and footer versions, the writer updates footer,
 *                 data, header (back to front); one acquire read;
 *   validation    seqlock version (odd while writing); acquire read of
 *                 version + item, then an acquire re-read of the version;
 *   farm          a version in every cache line, stripped into a
 *                 contiguous buffer; one relaxed read;
 *   pessimistic   fetch-and-add a reader count, the writer takes a lock
 *                 bit with compare-and-swap; read; release.
 * The broken baseline (single read, relaxed) must return torn values,
 * which proves the detector works.  Trials: >= 1 000 000 gets in total
 * over the four protocols in the plain build (100 000 under ASan).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "helpers.h"
#include "oms.h"

#ifdef __SANITIZE_ADDRESS__
#define DEFAULT_TRIALS 100000ul
#else
#define DEFAULT_TRIALS 1000000ul
#endif
#define ITEMS	8u
#define LINES	4u
#define ITEM	(LINES * 64u)
#define BATCH	256u
#define WRITER	(1ull << 63)

enum proto { SINGLE, VALIDATION, FARM, PESSIMISTIC, BROKEN };

struct kv {
	struct oms_ctx *ini, *srv;
	struct oms_mr *mr, *lk;
	struct oms_rmr r, rl;
	uint64_t *mem;		/* ITEMS x ITEM */
	uint64_t *locks;	/* ITEMS words (pessimistic) */
	enum proto p;
	int stop;
	pthread_t writer;
};

static void fill(uint64_t *line, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		line[i] = v;
}

static void *writer(void *arg)
{
	struct kv *k = arg;
	uint64_t v = 2, line[8];

	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
		for (uint32_t it = 0; it < ITEMS; it++) {
			uint64_t base = (uint64_t)it * ITEM;
			uint64_t zero = 0;

			switch (k->p) {
			case SINGLE:
			case BROKEN:
				/* footer, data, header: back to front */
				for (int n = LINES - 1; n >= 0; n--) {
					fill(line, v);
					oms_mr_write(k->mr, base + 64u * n,
						     line, 64);
				}
				break;
			case VALIDATION:
				/* seqlock: odd while writing */
				oms_mr_write(k->mr, base, &(uint64_t){ v - 1 }, 8);
				for (uint32_t n = 1; n < LINES; n++) {
					fill(line, v);
					oms_mr_write(k->mr, base + 64u * n,
						     line, 64);
				}
				oms_mr_write(k->mr, base, &v, 8);
				break;
			case FARM:
				/* each line whole, with its version, any order */
				for (uint32_t n = 0; n < LINES; n++) {
					fill(line, v);
					oms_mr_write(k->mr,
						     base + 64u * ((n + it) % LINES),
						     line, 64);
				}
				break;
			case PESSIMISTIC:
				if (!__atomic_compare_exchange_n(&k->locks[8 * it],
						&zero, WRITER, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
					continue;	/* readers in: skip */
				for (uint32_t n = 0; n < LINES; n++) {
					fill(line, v);
					oms_mr_write(k->mr, base + 64u * n,
						     line, 64);
				}
				__atomic_fetch_and(&k->locks[8 * it], ~WRITER,
						   __ATOMIC_RELEASE);
				break;
			}
		}
		v += 2;
		if (!(v & 15))
			sched_yield();
	}
	return NULL;
}

static int kv_open(struct kv *k, enum proto p, uint64_t seed)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();

	memset(k, 0, sizeof(*k));
	k->p = p;
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU_CHAOS;
	a.chaos_seed = seed;
	if (oms_ctx_create(&a, &k->ini))
		return -1;
	a.node = 1;
	k->mem = aligned_alloc(64, (size_t)ITEMS * ITEM);
	k->locks = aligned_alloc(64, 64 * ITEMS);
	memset(k->mem, 0, (size_t)ITEMS * ITEM);
	memset(k->locks, 0, 64 * ITEMS);
	if (oms_ctx_create(&a, &k->srv) ||
	    oms_mr_reg(k->srv, k->mem, (size_t)ITEMS * ITEM, OMS_ACCESS_ALL,
		       &k->mr) ||
	    oms_mr_reg(k->srv, k->locks, 64 * ITEMS, OMS_ACCESS_ALL, &k->lk) ||
	    oms_mr_remote(k->mr, &k->r) || oms_mr_remote(k->lk, &k->rl))
		return -1;
	return pthread_create(&k->writer, NULL, writer, k);
}

static void kv_close(struct kv *k)
{
	__atomic_store_n(&k->stop, 1, __ATOMIC_RELEASE);
	pthread_join(k->writer, NULL);
	oms_ctx_destroy(k->ini);
	oms_ctx_destroy(k->srv);
	free(k->mem);
	free(k->locks);
}

struct res {
	unsigned long gets, returned, torn, errors;
};

/* Every data word of an item returned to the caller must be @v. */
static int torn(const uint64_t *item, uint32_t from, uint32_t to, uint64_t v)
{
	for (uint32_t w = from; w < to; w++)
		if (item[w] != v)
			return 1;
	return 0;
}

static struct res run(enum proto p, uint64_t seed, unsigned long trials,
		      int stop_on_torn)
{
	static uint64_t buf[BATCH][ITEM / 8], ver[BATCH], old[BATCH];
	struct res r = { 0 };
	struct kv k;

	if (kv_open(&k, p, seed)) {
		r.errors++;
		return r;
	}
	while (r.gets < trials && !(stop_on_torn && r.torn)) {
		int hold[BATCH];

		if (p == PESSIMISTIC) {
			for (uint32_t i = 0; i < BATCH; i++)
				r.errors += oms_atomic_fadd(k.ini, &k.rl,
						64ull * (i % ITEMS), 1,
						&old[i]) != 0;
			r.errors += oms_quiet(k.ini) != 0;
		}
		for (uint32_t i = 0; i < BATCH; i++) {
			uint64_t off = (uint64_t)(i % ITEMS) * ITEM;

			hold[i] = p != PESSIMISTIC || !(old[i] & WRITER);
			if (!hold[i])
				continue;
			r.errors += oms_get(k.ini, buf[i], &k.r, off, ITEM,
					    p == FARM || p == BROKEN ?
					    OMS_READ_RELAXED :
					    OMS_READ_ACQUIRE) != 0;
			if (p == VALIDATION)
				r.errors += oms_get(k.ini, &ver[i], &k.r, off,
						    8, OMS_READ_ACQUIRE) != 0;
		}
		r.errors += oms_quiet(k.ini) != 0;
		if (p == PESSIMISTIC) {
			for (uint32_t i = 0; i < BATCH; i++)
				r.errors += oms_atomic_fadd(k.ini, &k.rl,
						64ull * (i % ITEMS),
						(uint64_t)-1, NULL) != 0;
			r.errors += oms_quiet(k.ini) != 0;
		}
		for (uint32_t i = 0; i < BATCH; i++) {
			const uint64_t *it = buf[i];
			uint64_t v = it[0];
			int ok = hold[i], bad = 0;

			switch (p) {
			case SINGLE:
			case BROKEN:
				ok = it[ITEM / 8 - 1] == v;
				bad = torn(it, 0, ITEM / 8, v);
				break;
			case VALIDATION:
				ok = v == ver[i] && !(v & 1);
				bad = torn(it, 8, ITEM / 8, v);	/* data lines */
				break;
			case FARM:
				for (uint32_t n = 1; n < LINES; n++)
					ok &= it[8 * n] == v;
				bad = torn(it, 0, ITEM / 8, v);
				break;
			case PESSIMISTIC:
				bad = ok && torn(it, 0, ITEM / 8, v);
				break;
			}
			r.gets++;
			r.returned += ok;
			r.torn += ok && bad;
		}
	}
	kv_close(&k);
	return r;
}

TEST(litmus_L32_kvs_gets_under_writer)
{
	static const char *const name[] = { "single read", "validation",
					    "farm", "pessimistic" };
	uint64_t seed = t_seed(0x2001);
	unsigned long n = t_trials(DEFAULT_TRIALS) / 4, total = 0;
	struct res r;

	for (int p = SINGLE; p <= PESSIMISTIC; p++) {
		r = run((enum proto)p, seed, n, 0);
		TH_LOG("L32 %-11s: %lu gets, %lu returned, %lu torn returned "
		       "(chaos seed %#llx)", name[p], r.gets, r.returned,
		       r.torn, (unsigned long long)seed);
		ASSERT_EQ(0, r.errors);
		ASSERT_EQ(0, r.torn);
		ASSERT_GT(r.returned, 0);
		total += r.gets;
	}
	TH_LOG("L32: %lu gets in total, 0 torn", total);
	r = run(BROKEN, seed, 400000, 1);
	TH_LOG("L32 broken baseline (single read, no ordering): %lu torn "
	       "returned in %lu gets", r.torn, r.gets);
	ASSERT_EQ(0, r.errors);
	ASSERT_GT(r.torn, 0);
}

TEST_HARNESS_MAIN
