/* SPDX-License-Identifier: MIT */
/*
 * Zipf-distributed ranks for key-value workloads: rank r in [0, n) is
 * drawn with probability proportional to 1 / (r + 1)^theta.  theta = 0 is
 * uniform; 0.99 is the skew YCSB uses by default.  The generator is the
 * closed-form one of Gray et al. ("Quickly generating billion-record
 * synthetic databases", SIGMOD 1994), as YCSB's: one zeta sum over n at
 * set-up, then O(1) per draw.  It needs theta < 1.
 *
 * Rank 0 is the hottest.  bu_zipf_key() spreads the ranks over the keys
 * with a bijection, so the hot items are not the first items of a table.
 */
#ifndef OMS_BENCH_ZIPF_H
#define OMS_BENCH_ZIPF_H

#include <stdint.h>

#define BU_ZIPF_THETA_MAX	0.999

struct bu_zipf {
	uint64_t n;
	double theta;
	double alpha, zetan, eta, half_pow;	/* Gray et al.'s constants */
	uint64_t mult;				/* the key bijection */
};

/* 0, or -1 for n 0 or theta outside [0, BU_ZIPF_THETA_MAX]. */
int bu_zipf_init(struct bu_zipf *z, uint64_t n, double theta);

/* The rank for a uniform @u in [0, 1). */
uint64_t bu_zipf_rank(const struct bu_zipf *z, double u);

/* The key of rank @r: (r * mult) mod n, mult coprime with n. */
static inline uint64_t bu_zipf_key(const struct bu_zipf *z, uint64_t r)
{
	return (uint64_t)(((unsigned __int128)r * z->mult) % z->n);
}

/* A uniform double in [0, 1) from a 64-bit random word. */
static inline double bu_unit(uint64_t x)
{
	return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* OMS_BENCH_ZIPF_H */
