// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "oms.h"
#include "oms_emu.h"

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

int t_bench_bin(const char *name, char *bin, size_t len)
{
	char self[400];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = 0;
	snprintf(bin, len, "%s/../bench/%s", self, name);
	return access(bin, X_OK);
}

int t_next_perm(int *p, int n)
{
	int i = n - 2, j = n - 1, t;

	while (i >= 0 && p[i] >= p[i + 1])
		i--;
	if (i < 0)
		return 0;
	while (p[j] <= p[i])
		j--;
	t = p[i], p[i] = p[j], p[j] = t;
	for (int a = i + 1, b = n - 1; a < b; a++, b--)
		t = p[a], p[a] = p[b], p[b] = t;
	return 1;
}

int t_quick(void)
{
	const char *s = getenv("OMS_CHECK_TIER");

	return s && !strcmp(s, "quick");
}

unsigned long t_trials(unsigned long dflt)
{
	return t_trials_div(dflt, 100);
}

unsigned long t_trials_div(unsigned long dflt, unsigned long quick_div)
{
	const char *s = getenv("OMS_TEST_TRIALS");
	unsigned long q = quick_div ? dflt / quick_div : dflt;

	if (s && *s)
		return strtoul(s, NULL, 0);
	if (!t_quick())
		return dflt;
	if (q < 1000)
		q = dflt < 1000 ? dflt : 1000;
	return q;
}

unsigned long t_bound(unsigned long full, unsigned long quick)
{
	return t_quick() && quick < full ? quick : full;
}

struct oms_emu *t_chaos_emu(uint64_t seed)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
		.chaos_seed = seed,
	};
	struct oms_emu *emu;

	return oms_emu_create(&ea, &emu) ? NULL : emu;
}

struct oms_ctx *t_emu_ctx(uint32_t node)
{
	return t_emu_ctx_on(NULL, node);
}

struct oms_ctx *t_emu_ctx_on(struct oms_emu *emu, uint32_t node)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *ctx = NULL;

	/* 60 s, not the 2 s default: with four TCG guests and two builds
	 * beside it (two make checks on a 2-core machine) the device thread
	 * was seen starved past 2 s, and no caller of this helper is about
	 * timeouts. */
	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_NODE |
		      OMS_CTX_ATTR_TIMEOUT;
	a.backend = OMS_BACKEND_EMU;
	a.node = node;
	a.timeout_ms = 60000;
	if (emu) {
		a.comp_mask |= OMS_CTX_ATTR_EMU;
		a.emu = emu;
	}
	return oms_ctx_create(&a, &ctx) ? NULL : ctx;
}
