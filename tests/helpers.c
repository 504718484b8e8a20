// SPDX-License-Identifier: MIT
#include <stdlib.h>

#include "helpers.h"

uint64_t t_seed(uint64_t dflt)
{
	const char *s = getenv("OMS_TEST_SEED");

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

void t_shuffle_u32(struct t_rng *r, uint32_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = t_rng_below(r, (uint32_t)i);
		uint32_t tmp = v[i - 1];

		v[i - 1] = v[j];
		v[j] = tmp;
	}
}

unsigned long t_trials(unsigned long dflt)
{
	const char *s = getenv("OMS_TEST_TRIALS");

	return s && *s ? strtoul(s, NULL, 0) : dflt;
}
