// SPDX-License-Identifier: MIT
/*
 * The built bench/kvs_get binary: bad flags exit 2 with a usage message,
 * an unreachable server exits 1 quickly, a short --local run of every
 * protocol prints one JSON object per protocol with 0 torn values from the
 * correct ones under a writer, and a server stops cleanly on SIGTERM.
 * Skips when the binary is not built.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"

static char g_bin[512];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run kvs_get @args; stdout into @out (may be NULL); the exit status. */
static int run(const char *args, char *out, size_t outlen)
{
	char cmd[8192];
	FILE *p;
	size_t n = 0;
	int st;

	snprintf(cmd, sizeof(cmd), "OMS_BACKEND=emu %s %s 2>&1", g_bin, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (out) {
		while (n + 1 < outlen && fgets(out + n, (int)(outlen - n), p))
			n += strlen(out + n);
		out[n] = 0;
	}
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(kvs_get_bad_flags_exit_2)
{
	/* not "": with no HOST kvs_get is the server (perftest's roles) */
	static const char *const bad[] = {
		"--bogus", "--local --size 12", "--local --size 0",
		"--local --proto nope", "--client", "--local --threads 0",
		"--local --batch 1000", "--local --duration x",
		"--server --local", "--local extra", "--local --backend ib",
	};
	char out[4096];

	if (t_bench_bin("kvs_get", g_bin, sizeof(g_bin)))
		SKIP(return, "bench/kvs_get not built");
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(2, run(bad[i], out, sizeof(out)));
		EXPECT_NE(NULL, strstr(out, "usage: kvs_get"));
	}
	EXPECT_EQ(0, run("--help", out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--client HOST"));
}

TEST(kvs_get_unreachable_exits_1)
{
	char out[4096];
	double t0;

	if (t_bench_bin("kvs_get", g_bin, sizeof(g_bin)))
		SKIP(return, "bench/kvs_get not built");
	t0 = now_s();
	EXPECT_EQ(1, run("--client localhost --port 7999 --duration 1", out,
			 sizeof(out)));
	EXPECT_LT(now_s() - t0, 5.0);
	EXPECT_NE(NULL, strstr(out, "cannot connect to localhost:7999"));
}

/* The value of "@key": in the JSON line @l, or -1. */
static double jnum(const char *l, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(l, k);
	return p ? atof(p + strlen(k)) : -1;
}

TEST(kvs_get_local_json_every_protocol)
{
	static const char *const protos[] = { "single", "validation", "farm",
					      "pessimistic", "broken" };
	static char out[16384];
	int seen = 0;

	if (t_bench_bin("kvs_get", g_bin, sizeof(g_bin)))
		SKIP(return, "bench/kvs_get not built");
	ASSERT_EQ(0, run("--local --proto all --duration 0.2 --threads 2 "
			 "--qps 2 --batch 8 --items 16 --writers 1 --scale 0 "
			 "--json --port 7998", out, sizeof(out)));
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
		if (l[0] != '{')
			continue;	/* progress lines */
		for (unsigned p = 0; p < 5; p++) {
			char want[64];

			snprintf(want, sizeof(want), "\"proto\":\"%s\"",
				 protos[p]);
			if (!strstr(l, want))
				continue;
			seen |= 1 << p;
			EXPECT_EQ(64, jnum(l, "size"));
			EXPECT_GT(jnum(l, "gets"), 0);
			EXPECT_GT(jnum(l, "mops"), 0);
			EXPECT_GT(jnum(l, "gbps"), 0);
			EXPECT_GT(jnum(l, "p99_us"), 0);
			EXPECT_GE(jnum(l, "p99_us"), jnum(l, "p50_us"));
			if (p < 4)
				EXPECT_EQ(0, jnum(l, "torn"));
			TH_LOG("%s", l);
		}
	}
	EXPECT_EQ(0x1f, seen);
}

TEST(kvs_get_server_stops_on_sigterm)
{
	char line[512] = "";
	FILE *p;
	int st, fd[2];
	pid_t pid;

	if (t_bench_bin("kvs_get", g_bin, sizeof(g_bin)))
		SKIP(return, "bench/kvs_get not built");
	ASSERT_EQ(0, pipe(fd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		dup2(fd[1], 1);
		close(fd[0]);
		execl(g_bin, "kvs_get", "--server", "--backend", "emu",
		      "--port", "7997", "--writers", "1", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	p = fdopen(fd[0], "r");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, fgets(line, sizeof(line), p));	/* it serves */
	EXPECT_NE(NULL, strstr(line, "listening on *:7997"));
	usleep(200000);
	kill(pid, SIGTERM);
	ASSERT_NE(NULL, fgets(line, sizeof(line), p));
	EXPECT_NE(NULL, strstr(line, "stopped by a signal"));
	fclose(p);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
