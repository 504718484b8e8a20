/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for liboms tests.  Every symbol carries the t_ prefix.
 *
 * Randomised tests are seeded: the seed comes from OMS_TEST_SEED when set,
 * otherwise a fixed default, so a failure is reproducible by exporting the
 * seed it printed.
 */
#ifndef OMS_TESTS_HELPERS_H
#define OMS_TESTS_HELPERS_H

#include <stdint.h>
#include <stddef.h>

struct t_rng {
	uint64_t s;
};

/* Seed from OMS_TEST_SEED, or @dflt if unset. */
uint64_t t_seed(uint64_t dflt);

static inline void t_rng_init(struct t_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

/* splitmix64: fast, full period, good enough to schedule events. */
static inline uint64_t t_rng_next(struct t_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
/* Little-endian @n bytes at @p, read by the test, not by the library's
 * codec: wire layouts checked against their documentation. */
static inline uint64_t t_le_at(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static inline uint32_t t_rng_below(struct t_rng *r, uint32_t n)
{
	return (uint32_t)(((t_rng_next(r) >> 32) * n) >> 32);
}

/* Fisher-Yates shuffle of @n uint32_t values. */
void t_shuffle_u32(struct t_rng *r, uint32_t *v, size_t n);

/* The bench program @name built beside this test (build/tests[-asan]/T
 * -> build/bench/@name) into @bin: 0 when it is there to run. */
int t_bench_bin(const char *name, char *bin, size_t len);

/* The next permutation of @p[0..n) in lexicographic order (start from
 * 0, 1, ..., n - 1 to visit them all); 0 after the last. */
int t_next_perm(int *p, int n);

/* 1 under `make check` (OMS_CHECK_TIER=quick), 0 under `make check-full`
 * and when a test is run by hand. */
int t_quick(void);

/*
 * Instances of a forbidden outcome to run: @dflt (the full tier), a
 * hundredth of it under `make check` (at least 1000, at most @dflt:
 * HACKING.md gives the rule and the odds), or OMS_TEST_TRIALS if set (a
 * long soak run).
 */
unsigned long t_trials(unsigned long dflt);

/* The same, a @quick_div-th under `make check`: for a test whose control
 * shows its outcome too rarely for a hundredth (HACKING.md). */
unsigned long t_trials_div(unsigned long dflt, unsigned long quick_div);

/* @full under `make check-full` and when run by hand, @quick under `make
 * check`: for the guests' tests, whose instances cost milliseconds each
 * under TCG, so that a hundredth would be too few (HACKING.md). */
unsigned long t_bound(unsigned long full, unsigned long quick);

struct oms_ctx;
struct oms_emu;

/* A context on the emulated device at @node, every other attribute at
 * its default (a 60 s timeout); NULL if it cannot be created.  _on: on
 * device @emu (oms_emu_create()), or the default device if NULL. */
struct oms_ctx *t_emu_ctx(uint32_t node);
struct oms_ctx *t_emu_ctx_on(struct oms_emu *emu, uint32_t node);

/* An emulated device of the test's own that reorders all it may from
 * @seed (0: in order), or NULL; oms_emu_destroy() it after its
 * contexts. */
struct oms_emu *t_chaos_emu(uint64_t seed);

#endif
