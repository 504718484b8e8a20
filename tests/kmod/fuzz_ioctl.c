// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ioctl.c - random ioctls on /dev/oms: at least FUZZ_CALLS calls mixing
 * valid and invalid command numbers, sizes, flags, offsets, lengths, counts
 * and pointers (NULL, unmapped, read-only, inside the device's own mapping,
 * which the module must copy from without deadlocking).  Attach requests
 * only name the ivshmem device or nonexistent ones (bus >= 0x80, checked
 * after the random bit flips), so no other guest device is written.  Passes if every call returns, the module still works, and the
 * guest's dmesg stays clean (checked by boot.sh).  The third test makes the
 * same calls from a read-only descriptor, from a writable one without
 * CAP_SYS_ADMIN and as nobody: none of them may attach or detach, and the
 * read-only one may not write the window.
 */
#include <linux/capability.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "harness.h"
#include "oms_guest.h"

#define FUZZ_PROCS 3		/* concurrent fuzzers in the second test */
/*
 * Call counts, divided by OMS_FUZZ_DIV (default 1): the debug guest kernel
 * (KASAN, lockdep, under TCG) runs each call about ten times slower, and
 * its run divides the counts rather than timing out.
 */
#define FUZZ_CALLS (500000 / fuzz_div())
#define FUZZ_PROC_CALLS (60000 / fuzz_div())
#define FUZZ_RESTRICTED_CALLS (40000 / fuzz_div())	/* per restricted mode */

static int fuzz_div(void)
{
	const char *s = getenv("OMS_FUZZ_DIV");
	int d = s ? atoi(s) : 1;

	return d >= 1 && d <= 1000 ? d : 1;
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t pick(const uint64_t *v, size_t n)
{
	return v[rnd() % n];
}

#define PICK(...) ({ static const uint64_t __v[] = { __VA_ARGS__ }; \
		     pick(__v, sizeof(__v) / sizeof(__v[0])); })

struct fuzz {
	int fd;
	struct t_pci ivshmem;
	int have_ivshmem;
	uint8_t *buf;		/* 2 MiB of valid memory */
	uint8_t *rdonly;	/* read-only page, then a PROT_NONE page */
	uint8_t *map;		/* the device's own mapping, or NULL */
	size_t map_len;
	uint64_t win_len;
	unsigned long calls, ok, err[160];
};

static uint64_t rand_offset(struct fuzz *f)
{
	uint64_t len = f->win_len ? f->win_len : 4096;

	switch (rnd() % 6) {
	case 0: return rnd();
	case 1: return len - (rnd() % 128);
	case 2: return (rnd() % len) & ~7ull;
	case 3: return ~0ull - (rnd() % 64);
	default: return (rnd() % 65536) & ~7ull;
	}
}

static uint32_t rand_len(void)
{
	switch (rnd() % 6) {
	case 0: return (uint32_t)rnd();
	case 1: return rnd() % 32;
	case 2: return OMS_STORE_MAX_BYTES + 8 * (rnd() % 3) - 8;
	default: return 8 * (1 + rnd() % 32);
	}
}

static uint64_t rand_ptr(struct fuzz *f, size_t need)
{
	switch (rnd() % 8) {
	case 0: return 0;
	case 1: return 0x1000;
	case 2: return (uintptr_t)(f->rdonly + 4096 - (rnd() % 64));
	case 3: return rnd();
	case 4:
		if (f->map && need <= f->map_len)
			return (uintptr_t)f->map + (rnd() % (f->map_len - need + 1));
		/* fall through */
	default:
		return (uintptr_t)f->buf + (rnd() % 4096);
	}
}

static void rand_bytes(void *p, size_t n)
{
	uint8_t *b = p;

	while (n--)
		*b++ = rnd();
}

/* Sometimes mutate a reserved field or a flag. */
static void maybe_corrupt(void *p, size_t n)
{
	if (rnd() % 8 == 0)
		((uint8_t *)p)[rnd() % n] ^= 1u << (rnd() % 8);
}

static unsigned long one_call(struct fuzz *f, void **argp)
{
	static union {
		struct oms_attach a;
		struct oms_info i;
		struct oms_ordered_store s;
		struct oms_doorbell d;
		struct oms_flush fl;
		struct oms_bench b;
		uint8_t raw[512];
	} arg;
	static struct oms_store_op ops[OMS_STORE_MAX_OPS + 2];
	unsigned long cmd;
	uint32_t k, n;

	memset(&arg, 0, sizeof(arg));
	*argp = &arg;
	switch (rnd() % 16) {
	case 0:		/* attach: emulated, ivshmem, or no such device */
		cmd = OMS_IOC_ATTACH;
		arg.a.flags = PICK(OMS_ATTACH_EMULATED, 0, OMS_ATTACH_UC,
				   OMS_ATTACH_EMULATED | OMS_ATTACH_UC);
		if (arg.a.flags & OMS_ATTACH_EMULATED) {
			arg.a.length = PICK(0, 4096, 65536, 1 << 20, 12345,
					    OMS_EMU_MAX_LEN * 2);
		} else if (f->have_ivshmem && rnd() % 2) {
			arg.a.domain = f->ivshmem.domain;
			arg.a.bus = f->ivshmem.bus;
			arg.a.slot = f->ivshmem.slot;
			arg.a.func = f->ivshmem.func;
			arg.a.bar = rnd() % 8;
		} else {
			arg.a.bus = 0x80 + rnd() % 0x80;	/* none there */
			arg.a.slot = rnd();
			arg.a.func = rnd();
			arg.a.bar = rnd();
		}
		maybe_corrupt(&arg.a, sizeof(arg.a));
		/*
		 * A flipped bit may now name another guest device (the 9p
		 * root's virtio BARs!): move such requests to a bus that
		 * does not exist.
		 */
		if (!(arg.a.flags & OMS_ATTACH_EMULATED) &&
		    !(f->have_ivshmem && arg.a.domain == f->ivshmem.domain &&
		      arg.a.bus == f->ivshmem.bus &&
		      arg.a.slot == f->ivshmem.slot &&
		      arg.a.func == f->ivshmem.func))
			arg.a.bus |= 0x80;
		break;
	case 1:
		cmd = OMS_IOC_DETACH;
		break;
	case 2:
	case 3:
		cmd = OMS_IOC_INFO;
		break;
	case 4: case 5: case 6: case 7:
		cmd = OMS_IOC_ORDERED_STORE;
		switch (rnd() % 16) {
		case 0: n = 0; break;
		case 1: n = OMS_STORE_MAX_OPS; break;
		case 2: n = OMS_STORE_MAX_OPS + 1; break;
		case 3: n = rnd(); break;
		default: n = 1 + rnd() % 8; break;
		}
		for (k = 0; k < n && k < OMS_STORE_MAX_OPS + 2; k++) {
			ops[k].offset = rand_offset(f);
			ops[k].length = rand_len();
			ops[k].cls = rnd() % 8 ? rnd() % 3 : (uint32_t)rnd();
			ops[k].buf = rand_ptr(f, ops[k].length);
			ops[k].reserved = rnd() % 16 == 0;
		}
		arg.s.count = n;
		arg.s.ops = rnd() % 16 ? (uintptr_t)ops : rand_ptr(f, 32);
		arg.s.flags = rnd() % 2;
		maybe_corrupt(&arg.s, sizeof(arg.s));
		break;
	case 8: case 9: case 10:
		cmd = OMS_IOC_DOORBELL;
		arg.d.flags = rnd() % 2;
		arg.d.wqe_len = rnd() % 4 ? 64 * (1 + rnd() % 5) : rand_len();
		arg.d.wqe = rand_ptr(f, arg.d.wqe_len);
		arg.d.wqe_offset = rand_offset(f) & ~63ull;
		arg.d.dbrec_offset = rand_offset(f) & ~3ull;
		arg.d.db_offset = rand_offset(f) & ~63ull;
		arg.d.dbrec = rnd();
		arg.d.db = arg.d.flags ? 0 : rnd();
		maybe_corrupt(&arg.d, sizeof(arg.d));
		break;
	case 11: case 12:
		cmd = OMS_IOC_FLUSH;
		arg.fl.offset = rand_offset(f) & ~(uint64_t)(rnd() % 4 ? 3 : 0);
		maybe_corrupt(&arg.fl, sizeof(arg.fl));
		break;
	case 13:
		cmd = OMS_IOC_MMIO_BENCH;
		arg.b.flags = rnd() % 2;
		arg.b.msg_size = PICK(64, 128, 4096, 8192, 32, 100, 16384);
		arg.b.width = PICK(4, 8, 2, 16);
		/* Keep valid runs short: at most 64 KiB per call. */
		arg.b.total_bytes = arg.b.msg_size * (rnd() % 8) +
				    (rnd() % 8 == 0 ? rnd() % 64 : 0);
		arg.b.offset = rand_offset(f) & ~8191ull;
		arg.b.span = PICK(0, 8192, 65536, 1ull << 40);
		maybe_corrupt(&arg.b, sizeof(arg.b));
		if (arg.b.total_bytes > 65536)
			arg.b.total_bytes = 65536;
		break;
	case 14:	/* known numbers with wrong sizes/directions */
		cmd = _IOC(rnd() % 4, OMS_IOC_MAGIC, 1 + rnd() % 7,
			   PICK(0, 8, 16, 40, 56, 80, 104, 128, 511));
		rand_bytes(&arg, sizeof(arg));
		break;
	default:	/* anything at all */
		cmd = rnd() % 2 ? (uint32_t)rnd() :
		      _IOC(rnd() % 4, OMS_IOC_MAGIC, rnd() % 256, rnd() % 512);
		rand_bytes(&arg, sizeof(arg));
		break;
	}
	if (rnd() % 32 == 0)
		*argp = (void *)(uintptr_t)rand_ptr(f, 128);
	return cmd;
}

static void refresh(struct fuzz *f)
{
	struct oms_info info;

	if (f->map)
		munmap(f->map, f->map_len);
	f->map = NULL;
	if (t_info(f->fd, &info) || info.kind == OMS_WINDOW_NONE) {
		f->win_len = 0;
		return;
	}
	f->win_len = info.length;
	f->map_len = info.length < 65536 ? info.length : 65536;
	f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      f->fd, 0);
	if (f->map == MAP_FAILED)
		f->map = NULL;
}

FIXTURE(fz) {
	int unused;
};

FIXTURE_SETUP(fz)
{
}

FIXTURE_TEARDOWN(fz)
{
}

TEST_F_TIMEOUT(fz, random_ioctls, 600)
{
	struct fuzz f = { 0 };
	const char *seed = getenv("OMS_FUZZ_SEED");
	struct timespec t0, t1;
	unsigned long i;
	uint64_t v = 0x0123456789abcdefull, back = 0;
	void *arg;
	int e;

	rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL);
	if (!rng_state)
		rng_state = 1;
	TH_LOG("seed %llu (set OMS_FUZZ_SEED to replay)",
	       (unsigned long long)rng_state);
	/* Random pointers into the own mapping may hit a detached window. */
	signal(SIGBUS, SIG_IGN);
	f.fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, f.fd);
	f.have_ivshmem = !t_find_ivshmem(&f.ivshmem);
	f.buf = malloc(2 << 20);
	ASSERT_NE(NULL, f.buf);
	rand_bytes(f.buf, 2 << 20);
	f.rdonly = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	ASSERT_NE(MAP_FAILED, f.rdonly);
	ASSERT_EQ(0, mprotect(f.rdonly, 4096, PROT_READ));
	ASSERT_EQ(0, t_setup_window(f.fd, f.have_ivshmem));
	refresh(&f);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < FUZZ_CALLS; i++) {
		unsigned long cmd = one_call(&f, &arg);

		f.calls++;
		if (ioctl(f.fd, cmd, arg) == 0) {
			f.ok++;
		} else {
			e = errno;
			f.err[e < 160 ? e : 0]++;
		}
		if (cmd == OMS_IOC_ATTACH || cmd == OMS_IOC_DETACH)
			refresh(&f);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (f.map)
		munmap(f.map, f.map_len);

	printf("# fuzz: %lu ioctl calls in %.1f s, %lu succeeded\n", f.calls,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, f.ok);
	for (e = 0; e < 160; e++)
		if (f.err[e])
			printf("#   errno %d (%s): %lu\n", e, strerror(e), f.err[e]);
	fflush(stdout);	/* the harness ends the test child with _exit() */
	EXPECT_LE(FUZZ_CALLS / 5, f.calls);
	/* Only documented errnos came back. */
	for (e = 0; e < 160; e++) {
		if (!f.err[e])
			continue;
		EXPECT_TRUE(e == EINVAL || e == EFAULT || e == ENODEV ||
			    e == ENOTTY || e == ERANGE || e == E2BIG ||
			    e == EBUSY || e == ENODATA || e == EOPNOTSUPP ||
			    e == ENOMEM) TH_LOG("undocumented errno %d", e);
	}

	/* The module still works. */
	ASSERT_EQ(0, t_setup_window(f.fd, f.have_ivshmem));
	EXPECT_EQ(0, t_store1(f.fd, T_SCRATCH_LIVE, &v, 8, OMS_STORE_STRONG, 0));
	EXPECT_EQ(0, t_read_window(f.fd, T_SCRATCH_LIVE, &back, 8));
	EXPECT_EQ(v, back);
	free(f.buf);
	close(f.fd);
}

static sigjmp_buf touch_env;

static void on_sigbus(int sig)
{
	siglongjmp(touch_env, 1);
}

/*
 * One of FUZZ_PROCS processes, each with its own fd and mapping, racing
 * attach/detach of the others with ioctls and with page faults on their
 * possibly stale mappings (SIGBUS is expected and caught).
 */
static int fuzz_proc(unsigned int seed, unsigned long *faults_ok,
		     unsigned long *sigbus)
{
	struct fuzz f = { 0 };
	unsigned long i;
	void *arg;

	rng_state = seed;
	signal(SIGBUS, on_sigbus);
	f.fd = open(T_DEV, O_RDWR);
	if (f.fd < 0)
		return 1;
	f.have_ivshmem = !t_find_ivshmem(&f.ivshmem);
	f.buf = malloc(2 << 20);
	f.rdonly = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (!f.buf || f.rdonly == MAP_FAILED ||
	    mprotect(f.rdonly, 4096, PROT_READ))
		return 1;
	refresh(&f);
	for (i = 0; i < FUZZ_PROC_CALLS; i++) {
		unsigned long cmd = one_call(&f, &arg);

		ioctl(f.fd, cmd, arg);
		if (cmd == OMS_IOC_ATTACH || cmd == OMS_IOC_DETACH ||
		    rnd() % 64 == 0)
			refresh(&f);
		if (f.map && rnd() % 4 == 0) {
			volatile uint32_t *p = (volatile uint32_t *)
				(f.map + (rnd() % f.map_len & ~3ul));

			if (sigsetjmp(touch_env, 1) == 0) {
				if (rnd() % 2)
					*p = (uint32_t)i;
				else
					(void)*p;
				(*faults_ok)++;
			} else {
				(*sigbus)++;
			}
		}
	}
	close(f.fd);
	return 0;
}

TEST_F_TIMEOUT(fz, concurrent_ioctls_and_faults, 600)
{
	unsigned long counts[FUZZ_PROCS][2];
	unsigned long ok_touch = 0, bus = 0;
	uint64_t v = 0x0fedcba987654321ull, back = 0;
	int pipes[FUZZ_PROCS][2], k, status, fd;
	unsigned int seed = (unsigned int)time(NULL);
	pid_t pids[FUZZ_PROCS];

	TH_LOG("seed %u", seed);
	for (k = 0; k < FUZZ_PROCS; k++) {
		ASSERT_EQ(0, pipe(pipes[k]));
		pids[k] = fork();
		ASSERT_LE(0, pids[k]);
		if (pids[k] == 0) {
			unsigned long c[2] = { 0, 0 };
			int r = fuzz_proc(seed * 31 + k + 1, &c[0], &c[1]);

			if (write(pipes[k][1], c, sizeof(c)) != sizeof(c))
				r = 1;
			_exit(r);
		}
		close(pipes[k][1]);
	}
	for (k = 0; k < FUZZ_PROCS; k++) {
		ASSERT_EQ(pids[k], waitpid(pids[k], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("fuzzer %d: status 0x%x", k, status);
		ASSERT_EQ(sizeof(counts[k]), read(pipes[k][0], counts[k],
						  sizeof(counts[k])));
		close(pipes[k][0]);
		ok_touch += counts[k][0];
		bus += counts[k][1];
	}
	printf("# concurrent fuzz: %d processes x %d ioctl calls, %lu mapped accesses, %lu SIGBUS on stale mappings\n",
	       FUZZ_PROCS, FUZZ_PROC_CALLS, ok_touch, bus);
	fflush(stdout);

	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	EXPECT_EQ(0, t_store1(fd, T_SCRATCH_LIVE, &v, 8, OMS_STORE_STRONG, 0));
	EXPECT_EQ(0, t_read_window(fd, T_SCRATCH_LIVE, &back, 8));
	EXPECT_EQ(v, back);
	close(fd);
}

enum { R_RDONLY, R_NOCAP, R_NOBODY, R_MODES };
static const char *const r_names[R_MODES] = {
	"O_RDONLY descriptor", "no CAP_SYS_ADMIN (capset)",
	"uid nobody (setuid, fd opened before)",
};

static int drop_cap_sys_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	d[CAP_SYS_ADMIN / 32].permitted &= ~(1u << (CAP_SYS_ADMIN % 32));
	d[CAP_SYS_ADMIN / 32].inheritable &= ~(1u << (CAP_SYS_ADMIN % 32));
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

static int is_write_cmd(unsigned long cmd)
{
	return cmd == OMS_IOC_ORDERED_STORE || cmd == OMS_IOC_DOORBELL ||
	       cmd == OMS_IOC_MMIO_BENCH;
}

/*
 * In a child: FUZZ_RESTRICTED_CALLS random calls in restricted @mode.
 * c[0] calls, c[1] forbidden calls that succeeded, c[2] undocumented
 * errnos, c[3] the errno of the first one.
 */
static int fuzz_restricted(int mode, unsigned int seed, unsigned long *c)
{
	struct fuzz f = { 0 };
	unsigned long i;
	void *arg;
	int e;

	rng_state = seed;
	signal(SIGBUS, SIG_IGN);
	f.fd = open(T_DEV, mode == R_RDONLY ? O_RDONLY : O_RDWR);
	if (f.fd < 0)
		return 1;
	if (mode == R_NOCAP && drop_cap_sys_admin())
		return 2;
	if (mode == R_NOBODY) {
		if (setgid(65534) || setuid(65534))
			return 3;
		if (open(T_DEV, O_RDWR) >= 0 || errno != EACCES)
			return 4;
	}
	f.have_ivshmem = !t_find_ivshmem(&f.ivshmem);
	f.buf = malloc(2 << 20);
	f.rdonly = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (!f.buf || f.rdonly == MAP_FAILED ||
	    mprotect(f.rdonly, 4096, PROT_READ))
		return 5;
	rand_bytes(f.buf, 2 << 20);
	refresh(&f);
	if (mode == R_RDONLY && f.map)
		return 6;	/* a writable mapping of a read-only fd */
	for (i = 0; i < FUZZ_RESTRICTED_CALLS; i++) {
		unsigned long cmd = one_call(&f, &arg);

		c[0]++;
		if (ioctl(f.fd, cmd, arg) == 0) {
			if (cmd == OMS_IOC_ATTACH || cmd == OMS_IOC_DETACH ||
			    (mode == R_RDONLY && is_write_cmd(cmd)))
				c[1]++;
			continue;
		}
		e = errno;
		if (e != EINVAL && e != EFAULT && e != ENODEV && e != ENOTTY &&
		    e != ERANGE && e != E2BIG && e != EBADF && e != EPERM &&
		    e != ENOMEM) {
			if (!c[2]++)
				c[3] = e;
		}
	}
	close(f.fd);
	return 0;
}

TEST_F_TIMEOUT(fz, read_only_and_unprivileged, 600)
{
	static uint8_t before[65536], after[65536];
	unsigned int seed = (unsigned int)time(NULL);
	struct oms_info i0, i1;
	int fd, mode, p[2], status;

	TH_LOG("seed %u", seed);
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	for (mode = 0; mode < R_MODES; mode++) {
		unsigned long c[4] = { 0, 0, 0, 0 };
		pid_t pid;

		ASSERT_EQ(0, t_info(fd, &i0));
		ASSERT_EQ(0, t_read_window(fd, 0, before, sizeof(before)));
		ASSERT_EQ(0, pipe(p));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			int r = fuzz_restricted(mode, seed + mode, c);

			if (write(p[1], c, sizeof(c)) != sizeof(c))
				r = 7;
			_exit(r);
		}
		close(p[1]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(sizeof(c), read(p[0], c, sizeof(c)));
		close(p[0]);
		printf("# restricted fuzz, %s: %lu calls, %lu forbidden calls succeeded, %lu undocumented errnos\n",
		       r_names[mode], c[0], c[1], c[2]);
		fflush(stdout);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("%s: status 0x%x", r_names[mode], status);
		EXPECT_EQ(0, c[1]);
		EXPECT_EQ(0, c[2]) TH_LOG("errno %lu", c[3]);
		/* Nothing attached or detached, the same window. */
		ASSERT_EQ(0, t_info(fd, &i1));
		EXPECT_EQ(0, memcmp(&i0, &i1, sizeof(i1)));
		if (mode == R_RDONLY) {
			ASSERT_EQ(0, t_read_window(fd, 0, after, sizeof(after)));
			EXPECT_EQ(0, memcmp(before, after, sizeof(after)));
		}
	}
	close(fd);
}

TEST_HARNESS_MAIN
