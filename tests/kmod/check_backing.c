// SPDX-License-Identifier: GPL-2.0
/*
 * check_backing.c - runs on the host after the guest powered off: reads the
 * file that backed the guest's ivshmem BAR and checks, byte for byte, what
 * the guest tests wrote through the WC mapping, ORDERED_STORE, DOORBELL
 * (plain and BlueFlame) and MMIO_BENCH.  Prints TAP.
 *
 * usage: check_backing FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oms_test.h"

static int n, failed;

static void report(int ok, const char *what)
{
	printf("%sok %d - host backing file: %s\n", ok ? "" : "not ", ++n, what);
	if (!ok)
		failed++;
}

/* First differing byte, for the log. */
static int same(const uint8_t *got, const uint8_t *want, size_t len,
		size_t base)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (got[i] != want[i]) {
			printf("# first difference at 0x%zx: got 0x%02x want 0x%02x\n",
			       base + i, got[i], want[i]);
			return 0;
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	static uint8_t want[LAY_MMAP_LEN];
	const uint8_t *bar;
	struct stat st;
	uint32_t rec;
	uint64_t db, q;
	size_t i;
	int fd, ok;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	printf("1..6\n");
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size != T_BAR_SIZE) {
		report(0, "open, size 4 MiB");
		return 1;
	}
	bar = mmap(NULL, T_BAR_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (bar == MAP_FAILED) {
		report(0, "mmap");
		return 1;
	}
	report(1, "open, size 4 MiB");

	t_fill(want, LAY_MMAP_LEN, 1);
	report(same(bar + LAY_MMAP, want, LAY_MMAP_LEN, LAY_MMAP),
	       "64 KiB written through the WC mmap");

	t_store_image(want);
	report(same(bar + LAY_STORE, want, LAY_STORE_LEN, LAY_STORE),
	       "ORDERED_STORE vector, overlaps resolved in program order");

	t_fill(want, LAY_DB_WQE_LEN, 5);
	memcpy(&rec, bar + LAY_DB_REC, 4);
	memcpy(&db, bar + LAY_DB_DB, 8);
	ok = same(bar + LAY_DB_WQE, want, LAY_DB_WQE_LEN, LAY_DB_WQE);
	if (rec != LAY_DB_REC_VAL || db != LAY_DB_DB_VAL) {
		printf("# dbrec 0x%x db 0x%llx\n", rec, (unsigned long long)db);
		ok = 0;
	}
	report(ok, "DOORBELL: WQE, doorbell record and 64-bit doorbell");

	t_fill(want, LAY_BF_WQE_LEN, 6);
	memcpy(&rec, bar + LAY_BF_REC, 4);
	ok = same(bar + LAY_BF_WQE, want, LAY_BF_WQE_LEN, LAY_BF_WQE) &&
	     same(bar + LAY_BF_REG, want, LAY_BF_WQE_LEN, LAY_BF_REG);
	if (rec != LAY_BF_REC_VAL) {
		printf("# BlueFlame dbrec 0x%x\n", rec);
		ok = 0;
	}
	report(ok, "DOORBELL BlueFlame: WQE, record and BF register copy");

	ok = 1;
	for (i = 0; i < LAY_BENCH_LEN && ok; i += 8) {
		memcpy(&q, bar + LAY_BENCH + i, 8);
		if (q != LAY_BENCH + i) {
			printf("# bench qword at 0x%zx: 0x%llx\n", LAY_BENCH + i,
			       (unsigned long long)q);
			ok = 0;
		}
	}
	report(ok, "MMIO_BENCH pattern (each qword holds its offset)");
	return failed ? 1 : 0;
}
