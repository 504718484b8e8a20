// SPDX-License-Identifier: GPL-2.0
/*
 * killable.c - a long MMIO_BENCH blocks nobody and stops when asked:
 * - while one process runs 4 GiB benches, another keeps opening the
 *   device, asking INFO, storing and faulting pages of a fresh mapping;
 *   SIGKILL reaps it within 1 s, and then the bench too;
 * - a handled signal stops a bench early: it returns 0 with
 *   bytes < total_bytes (SIGALRM after 50 ms);
 * - DETACH stops a running bench (ENODEV) within 1 s.
 * On the emulated window, in scratch space.
 */
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "harness.h"
#include "oms_guest.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct oms_bench long_bench(void)
{
	/* The slowest legal run: 64-byte messages, 4-byte stores, fences. */
	struct oms_bench b = { .flags = OMS_BENCH_FENCE, .msg_size = 64,
			       .width = 4, .total_bytes = OMS_BENCH_MAX_TOTAL,
			       .offset = T_SCRATCH_BENCH, .span = 65536 };
	return b;
}

/*
 * Fork a process that runs 4 GiB benches back to back until one fails;
 * returns once it is in the first.
 */
static pid_t start_bench(int fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct oms_bench b = long_bench();
		int ret;

		close(p[0]);
		if (write(p[1], "x", 1) != 1)
			_exit(3);
		do
			ret = t_ioctl(fd, OMS_IOC_MMIO_BENCH, &b);
		while (!ret);
		_exit(ret == -ENODEV ? 10 : 2);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		pid = -1;
	close(p[0]);
	usleep(200000);		/* well inside the ioctl */
	return pid;
}

/* Seconds from SIGKILL to reaping @pid. */
static double kill_and_reap(pid_t pid, int *status)
{
	double t0 = now();

	kill(pid, SIGKILL);
	if (waitpid(pid, status, 0) != pid)
		return 1e9;
	return now() - t0;
}

TEST(waiters_behind_bench_are_killable)
{
	volatile unsigned long *progress;
	int fd, status;
	pid_t bench, user;
	unsigned long seen;
	double dt;

	progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, progress);
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	bench = start_bench(fd);
	ASSERT_LT(0, bench);

	user = fork();
	ASSERT_LE(0, user);
	if (user == 0) {
		uint64_t v = 1;

		for (;;) {
			struct oms_info info;
			int fd2 = open(T_DEV, O_RDWR);
			volatile uint32_t *m;

			if (fd2 < 0 || t_info(fd2, &info))
				_exit(2);
			if (t_store1(fd2, T_SCRATCH_LIVE, &v, 8,
				     OMS_STORE_STRONG, 0))
				_exit(3);
			m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd2, T_SCRATCH_LIVE);
			if (m == MAP_FAILED)
				_exit(4);
			m[1024] = (uint32_t)v++;	/* a fault */
			munmap((void *)m, 8192);
			close(fd2);
			progress[0]++;
		}
	}
	/* the benches run back to back until killed: a round that is not
	 * blocked behind them comes however slow the guest (a busy host,
	 * a debug kernel), and one that is blocked never does */
	for (double t0 = now(); !progress[0] && now() - t0 < 20.0;)
		usleep(10000);
	usleep(100000);
	seen = progress[0];
	EXPECT_LT(0, seen) TH_LOG("open/INFO/store/fault blocked behind the bench");
	EXPECT_EQ(0, waitpid(bench, &status, WNOHANG)) TH_LOG("bench failed");

	dt = kill_and_reap(user, &status);
	TH_LOG("user process: %lu rounds during the bench, reaped %.3f s after SIGKILL",
	       seen, dt);
	EXPECT_GT(1.0, dt);
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	dt = kill_and_reap(bench, &status);
	TH_LOG("bench reaped %.3f s after SIGKILL", dt);
	EXPECT_GT(1.0, dt);
	close(fd);
}

static void on_alarm(int sig)
{
}

TEST(handled_signal_stops_bench)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct oms_bench b = long_bench();
	struct itimerval it = { .it_value = { .tv_usec = 50000 } };
	double t0, dt;
	int fd;

	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	t0 = now();
	EXPECT_EQ(0, t_ioctl(fd, OMS_IOC_MMIO_BENCH, &b));
	dt = now() - t0;
	TH_LOG("bench returned after %.3f s with %llu of %llu bytes", dt,
	       (unsigned long long)b.bytes, (unsigned long long)b.total_bytes);
	EXPECT_GT(1.5, dt);
	EXPECT_LT(0, b.bytes);
	EXPECT_GT(b.total_bytes, b.bytes);
	EXPECT_EQ(0, b.bytes % b.msg_size);
	EXPECT_LT(0, b.ns);
	close(fd);
}

TEST(detach_stops_bench)
{
	struct oms_info info;
	double t0, dt;
	int fd, status;
	pid_t bench;

	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	bench = start_bench(fd);
	ASSERT_LT(0, bench);
	t0 = now();
	EXPECT_EQ(0, t_detach(fd));
	ASSERT_EQ(bench, waitpid(bench, &status, 0));
	dt = now() - t0;
	TH_LOG("detach and bench exit took %.3f s", dt);
	EXPECT_GT(1.0, dt);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 10)
		TH_LOG("bench status 0x%x (10: ENODEV)", status);
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	close(fd);
}

TEST_HARNESS_MAIN
