/* SPDX-License-Identifier: MIT */
/*
 * The library's clock for timeouts and latencies: CLOCK_MONOTONIC, which
 * neither jumps with the wall clock nor stops while the machine is busy
 * (a timeout must not fire early because NTP stepped the time).
 */
#ifndef OMS_UTIL_CLOCK_H
#define OMS_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t oms_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* OMS_UTIL_CLOCK_H */
