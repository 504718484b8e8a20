/* SPDX-License-Identifier: MIT */
/*
 * What every client of rxe_server needs: a clock in milliseconds and a
 * connect that retries while the server guest comes up (bounded).  The
 * server's address is OMS_RXE_SERVER.
 */
#ifndef OMS_RXE_CLIENT_H
#define OMS_RXE_CLIENT_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "oms.h"

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Connect to @port of @host, retrying for up to 90 s while nobody
 * listens there yet. */
static inline int connect_host(struct oms_ctx *ctx, const char *host,
			       const char *port, struct oms_rmr *r)
{
	uint64_t end = now_ms() + 90000;
	int err;

	do {
		err = oms_connect(ctx, host, port, 3000, r);
		if (err != -ECONNREFUSED && err != -ETIMEDOUT &&
		    err != -EHOSTUNREACH)
			break;
		usleep(200000);
	} while (now_ms() < end);
	return err;
}

/* The same to the server (OMS_RXE_SERVER). */
static inline int connect_port(struct oms_ctx *ctx, const char *port,
			       struct oms_rmr *r)
{
	return connect_host(ctx, getenv("OMS_RXE_SERVER"), port, r);
}

#endif
