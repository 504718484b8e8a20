// SPDX-License-Identifier: GPL-2.0
/*
 * mmio_sweep.c - the MMIO transmit experiment: MMIO_BENCH over message
 * sizes 64..8192 B with a WC drain after every message (ordered) and
 * without (unordered), on the attached window.  Not a test: prints a table.
 *
 * usage: mmio_sweep [-t TOTAL_MiB] [-w WIDTH] [-r REPEATS]
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "oms_uapi.h"

static int run(int fd, uint32_t size, int fence, uint64_t total,
	       uint32_t width, int repeats, struct oms_bench *best)
{
	int r;

	memset(best, 0, sizeof(*best));
	for (r = 0; r < repeats; r++) {
		struct oms_bench b = {
			.flags = fence ? OMS_BENCH_FENCE : 0,
			.msg_size = size, .width = width,
			.total_bytes = total,
		};

		if (ioctl(fd, OMS_IOC_MMIO_BENCH, &b))
			return -errno;
		if (!best->ns || b.ns < best->ns)
			*best = b;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t total = 256ull << 20;
	uint32_t width = 8, size;
	int repeats = 3, opt, fd, ret;
	unsigned long long tsc_khz = 0;
	struct oms_info info;

	while ((opt = getopt(argc, argv, "t:w:r:")) != -1) {
		switch (opt) {
		case 't': total = strtoull(optarg, NULL, 0) << 20; break;
		case 'w': width = strtoul(optarg, NULL, 0); break;
		case 'r': repeats = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-t MiB] [-w 4|8] [-r N]\n",
				argv[0]);
			return 2;
		}
	}
	fd = open("/dev/" OMS_DEVICE_NAME, O_RDWR);
	if (fd < 0 || ioctl(fd, OMS_IOC_INFO, &info)) {
		perror("/dev/oms");
		return 1;
	}
	printf("window: %s, %llu bytes, %s; %llu MiB per point, %u-byte stores, best of %d\n",
	       info.kind == OMS_WINDOW_PCI ? "PCI BAR" :
	       info.kind == OMS_WINDOW_EMULATED ? "emulated" : "none",
	       (unsigned long long)info.length,
	       info.flags & OMS_INFO_WC ? "write-combining" : "uncached",
	       (unsigned long long)(total >> 20), width, repeats);
	printf("%6s %12s %12s %8s %10s %10s\n", "size", "nofence_Gbps",
	       "fence_Gbps", "ratio", "ns/msg", "fence_ns");
	for (size = OMS_BENCH_MIN_MSG; size <= OMS_BENCH_MAX_MSG; size *= 2) {
		struct oms_bench nf, f;
		double g0, g1;

		ret = run(fd, size, 0, total, width, repeats, &nf);
		if (!ret)
			ret = run(fd, size, 1, total, width, repeats, &f);
		if (ret) {
			fprintf(stderr, "MMIO_BENCH %u: %s\n", size, strerror(-ret));
			return 1;
		}
		tsc_khz = f.tsc_khz;
		g0 = nf.bytes * 8.0 / nf.ns;
		g1 = f.bytes * 8.0 / f.ns;
		printf("%6u %12.2f %12.2f %8.2f %10.1f %10.1f\n", size, g0, g1,
		       g1 / g0, (double)nf.ns / (nf.bytes / size),
		       (double)f.ns / (f.bytes / size));
	}
	printf("timed with ktime; TSC %llu kHz (kernel-calibrated)\n",
	       (unsigned long long)tsc_khz);
	close(fd);
	return 0;
}
