// SPDX-License-Identifier: MIT
/* Zipf ranks for the benchmarks (bench/bench_zipf.h). */
#include <math.h>

#include "bench_zipf.h"

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int bu_zipf_init(struct bu_zipf *z, uint64_t n, double theta)
{
	double zeta2 = 0;

	if (!n || !(theta >= 0 && theta <= BU_ZIPF_THETA_MAX))
		return -1;
	z->n = n;
	z->theta = theta;
	z->zetan = (double)n;	/* theta 0: uniform, no sum needed */
	if (theta > 0) {
		z->zetan = 0;
		for (uint64_t i = 1; i <= n; i++)
			z->zetan += pow((double)i, -theta);
	}
	for (uint64_t i = 1; i <= 2 && i <= n; i++)
		zeta2 += pow((double)i, -theta);
	z->alpha = 1.0 / (1.0 - theta);
	z->half_pow = 1.0 + pow(0.5, theta);
	z->eta = n > 1 ? (1.0 - pow(2.0 / (double)n, 1.0 - theta)) /
			 (1.0 - zeta2 / z->zetan) : 0;
	/* a multiplier near the golden ratio of n, coprime with it */
	z->mult = (uint64_t)((double)n * 0.6180339887) | 1;
	while (gcd(z->mult, n) != 1)
		z->mult += 2;
	z->mult %= n;
	if (!z->mult)
		z->mult = 1;	/* n is 1 or 2 */
	return 0;
}

uint64_t bu_zipf_rank(const struct bu_zipf *z, double u)
{
	double uz;
	uint64_t r;

	if (z->theta == 0)
		return (uint64_t)(u * (double)z->n);
	uz = u * z->zetan;
	if (uz < 1.0)
		return 0;
	if (uz < z->half_pow)
		return z->n > 1;
	r = (uint64_t)((double)z->n *
		       pow(z->eta * u - z->eta + 1.0, z->alpha));
	return r < z->n ? r : z->n - 1;
}
