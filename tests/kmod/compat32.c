// SPDX-License-Identifier: GPL-2.0
/*
 * compat32.c - the uapi from a 32-bit process (compat_ioctl): the same
 * structs, the same command numbers, 32-bit pointers carried in __u64.
 * Freestanding i386 code (int $0x80 system calls, no libc), so it builds
 * with gcc -m32 without 32-bit libraries.  Prints TAP.
 */
#define OMS_TEST_LAYOUT_ONLY
#include "oms_test.h"

#define NR_exit		1
#define NR_write	4
#define NR_open		5
#define NR_ioctl	54

static long sys3(long n, long a, long b, long c)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(n), "b"(a), "c"(b), "d"(c)
			 : "memory");
	return r;
}

static int n, failed;

static unsigned int slen(const char *s)
{
	unsigned int i = 0;

	while (s[i])
		i++;
	return i;
}

static void put(const char *s)
{
	sys3(NR_write, 1, (long)s, slen(s));
}

static void tap(int ok, const char *what)
{
	char num[12];
	int i = sizeof(num) - 1, v = ++n;

	num[i] = 0;
	do {
		num[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	if (!ok)
		failed = 1;
	put(ok ? "ok " : "not ok ");
	put(num + i);
	put(" - compat32: ");
	put(what);
	put("\n");
}

static long io(int fd, unsigned long cmd, void *arg)
{
	return sys3(NR_ioctl, fd, (long)cmd, (long)arg);
}

void _start(void);
void _start(void)
{
	static uint64_t vals[2] = { 0x1111222233334444ull, 0x5555666677778888ull };
	static uint8_t wqe[64];
	struct oms_store_op ops[2] = {
		{ .offset = T_SCRATCH_LIVE, .length = 8,
		  .cls = OMS_STORE_WEAK, .buf = (uintptr_t)&vals[0] },
		{ .offset = T_SCRATCH_LIVE + 8, .length = 8,
		  .cls = OMS_STORE_STRONG, .buf = (uintptr_t)&vals[1] },
	};
	struct oms_ordered_store s = { .count = 2, .ops = (uintptr_t)ops };
	struct oms_doorbell d = { .wqe_len = 64, .wqe = (uintptr_t)wqe,
				  .wqe_offset = T_SCRATCH_LIVE + 0x100,
				  .dbrec_offset = T_SCRATCH_LIVE + 0x200,
				  .db_offset = T_SCRATCH_LIVE + 0x208,
				  .dbrec = 0xabcd, .db = 7 };
	struct oms_bench b = { .msg_size = 64, .width = 8,
			       .total_bytes = 65536,
			       .offset = T_SCRATCH_BENCH };
	struct oms_flush f = { .offset = T_SCRATCH_LIVE + 8 };
	struct oms_info info = { 0 };
	static char big[128];
	int fd;

	fd = sys3(NR_open, (long)"/dev/" OMS_DEVICE_NAME, 2, 0);
	tap(fd >= 0, "open /dev/oms");
	tap(io(fd, OMS_IOC_INFO, &info) == 0 && info.kind != OMS_WINDOW_NONE &&
	    info.length == T_BAR_SIZE, "INFO");
	tap(io(fd, OMS_IOC_ORDERED_STORE, &s) == 0 && s.barriers == 1,
	    "ORDERED_STORE weak+strong, 1 barrier");
	tap(io(fd, OMS_IOC_FLUSH, &f) == 0 && f.value == 0x77778888u,
	    "FLUSH reads the strong store back");
	tap(io(fd, OMS_IOC_DOORBELL, &d) == 0 && d.barriers == 3, "DOORBELL");
	tap(io(fd, OMS_IOC_MMIO_BENCH, &b) == 0 && b.bytes == 65536 &&
	    b.fences == 1 && b.span == 256 * 1024, "MMIO_BENCH");
	tap(io(fd, _IOWR(OMS_IOC_MAGIC, 4, char[36]), big) == -22,
	    "wrong struct size: EINVAL");
	tap(io(fd, _IO(OMS_IOC_MAGIC, 0x55), big) == -25, "unknown: ENOTTY");
	tap(io(fd, OMS_IOC_INFO, (void *)0) == -14, "NULL argument: EFAULT");
	sys3(NR_exit, failed, 0, 0);
	for (;;)
		;
}
