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

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oms.h"
#include "oms_emu.h"

static inline uint64_t bu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Where --local runs connect: the loopback address itself, not the name
 * "localhost", which does not resolve on a machine without /etc/hosts
 * (a minimal container or chroot). */
#define BU_LOOPBACK "127.0.0.1"

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

/* Why an option of the emulated device is refused on --local over verbs
 * (ba_only_if()). */
#define BU_EMU_ONLY	"is the emulated device's, and this --local run is " \
			"on verbs (--backend verbs or OMS_BACKEND=verbs)"

/* Whether contexts asking for @backend run on the emulated device: named,
 * or AUTO with OMS_BACKEND=emu (AUTO otherwise may find an RDMA device). */
static inline int bu_backend_is_emu(uint32_t backend)
{
	const char *env = getenv("OMS_BACKEND");

	return backend == OMS_BACKEND_EMU ||
	       (backend == OMS_BACKEND_AUTO && env && !strcmp(env, "emu"));
}

/*
 * An emulated device of the benchmark's own: the paper's Table 2 latency
 * model (bus 200 ns, root complex 17 ns, memory 50 ns a line, a 100 Gb/s
 * link) at @scale wall ns per model ns (0: no model), reads ordered at
 * @order (enum oms_read_order), reordering from @chaos (0: none).  Every
 * context of the run names it (OMS_CTX_ATTR_EMU); destroy it after them.
 */
static inline int bu_emu_table2(uint32_t scale, uint32_t order,
				uint64_t chaos, struct oms_emu **emu)
{
	struct oms_emu_attr ea = {
		.size = sizeof(ea),
		.comp_mask = OMS_EMU_ATTR_LATENCY | OMS_EMU_ATTR_READ_ORDER |
			     OMS_EMU_ATTR_CHAOS,
		.chaos_seed = chaos,
		.lat_bus_ns = 200, .lat_rc_ns = 17, .lat_mem_ns = 50,
		.link_gbps = 100, .time_scale = scale,
		.read_order = order, .rlsq_entries = 256,
	};

	return oms_emu_create(&ea, emu);
}

#endif
