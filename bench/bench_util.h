/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the benchmarks: a monotonic clock, perftest-style
 * tables and one JSON object per result line (for --json).
 *
 * Benchmarks compare modes within one run, as ratios: these machines are
 * noisy, absolute figures are for the record only.
 */
#ifndef OMS_BENCH_UTIL_H
#define OMS_BENCH_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "oms.h"

static inline uint64_t bu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keep the compiler from discarding a computed value. */
#define bu_keep(v) __asm__ __volatile__("" : : "r"(v) : "memory")

#define BU_RULE \
	"---------------------------------------------------------------------------------------"

static inline void bu_rule(void)
{
	puts(BU_RULE);
}

/* printf into stdout only when @on; used to silence tables under --json. */
static inline void bu_printf(int on, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void bu_printf(int on, const char *fmt, ...)
{
	va_list ap;

	if (!on)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/*
 * The backend @ctx runs on, as records name it, and (*@model) whether the
 * emulated device's latency model is on, so figures are in model time.
 */
static inline const char *bu_backend_of(struct oms_ctx *ctx, int *model)
{
	static struct oms_caps caps;

	caps.size = sizeof(caps);
	if (oms_query_caps(ctx, &caps))
		return "?";
	*model = !!(caps.flags & OMS_CAP_LATENCY_MODEL);
	return caps.backend_name;
}

#endif
