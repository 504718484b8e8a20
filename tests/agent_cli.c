// SPDX-License-Identifier: MIT
/*
 * The built bench/agent binary's --threads: a thread count outside 1..64
 * exits 2 naming the flag and its range, with nothing measured and no
 * --out_json file; a tiny --threads 2 run reports every cell on 1 thread
 * and then on 2, as records and as a table, the 2-thread one with its rate
 * as a ratio of the 1-thread one's; --threads 1 keeps the records and the
 * table's columns of a run without the flag.  Skips when the binary is not
 * built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "helpers.h"

#define NCELLS	6	/* -s 64: 3 ops, unnumbered and numbered */

/* The binary beside this test's directory, and a scratch directory for
 * stderr and --out_json, removed after each test. */
FIXTURE(cli) {
	char bin[512];
	char dir[64];
	int built;
};

FIXTURE_SETUP(cli)
{
	self->built = !t_bench_bin("agent", self->bin, sizeof(self->bin));
	snprintf(self->dir, sizeof(self->dir), "/tmp/agent_cli.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(cli)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/err", self->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/j.json", self->dir);
	unlink(path);
	rmdir(self->dir);
}

/* Run agent @args: stdout into @out, stderr into @err; the exit status. */
static int run(const FIXTURE_DATA(cli) *self, const char *args, char *out,
	       size_t outlen, char *err, size_t errlen)
{
	char cmd[2048], path[128];
	size_t n = 0;
	FILE *p, *e;
	int st;

	snprintf(path, sizeof(path), "%s/err", self->dir);
	snprintf(cmd, sizeof(cmd), "%s %s 2>%s", self->bin, args, path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < outlen && fgets(out + n, (int)(outlen - n), p))
		n += strlen(out + n);
	out[n] = 0;
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	err[0] = 0;
	e = fopen(path, "r");
	if (e) {
		err[fread(err, 1, errlen - 1, e)] = 0;
		fclose(e);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
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

/* @r is @a / @b as the bench computed it before printing: each of the
 * three was printed rounded to @half (half a unit in the last printed
 * place), so the true rates lie within @half of @a and @b and the ratio
 * within @half of the true one.  A slow run prints small rates, where a
 * relative tolerance would not cover the rounding. */
static int ratio_near(double r, double a, double b, double half)
{
	double lo, hi;

	if (b - half <= 0)
		return r > 0;
	lo = (a - half) / (b + half) - half;
	hi = (a + half) / (b - half) + half;
	return r >= lo && r <= hi;
}

TEST_F(cli, agent_threads_out_of_range_refused)
{
	static const char *const bad[] = { "0", "65", "-1", "x", "" };
	char out[4096], err[4096], args[256], file[128];

	if (!self->built)
		SKIP(return, "bench/agent not built");
	snprintf(file, sizeof(file), "%s/j.json", self->dir);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "-s 64 -n 1000 --threads '%s' "
			 "--json --out_json %s", bad[i], file);
		EXPECT_EQ(2, run(self, args, out, sizeof(out), err,
				 sizeof(err)));
		EXPECT_STREQ("", out);	/* nothing measured */
		EXPECT_NE(NULL, strstr(err, "agent: --threads"));
		EXPECT_NE(NULL, strstr(err, "1..64"));
		EXPECT_NE(0, access(file, F_OK));
		TH_LOG("--threads '%s': %.*s", bad[i],
		       (int)strcspn(err, "\n"), err);
	}
}

/* Records of a --threads 2 run: each cell on 1 thread, then on 2, the
 * second's speedup its rate over the first's.  How many records. */
static int check_records(struct __test_metadata *_metadata, char *out)
{
	char *save, *l;
	double one = 0;
	int n = 0;

	for (l = strtok_r(out, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		EXPECT_EQ('{', l[0]);
		EXPECT_EQ('}', l[strlen(l) - 1]);
		EXPECT_EQ(n % 2 + 1, jnum(l, "threads"));
		EXPECT_GT(jnum(l, "cpus"), 0);
		EXPECT_EQ(2000, jnum(l, "iters"));
		EXPECT_GT(jnum(l, "mreqs"), 0);
		EXPECT_GT(jnum(l, "ns_per_req"), 0);
		if (n % 2 == 0) {
			one = jnum(l, "mreqs");
			EXPECT_EQ(1, jnum(l, "speedup"));
		} else {
			EXPECT_TRUE(ratio_near(jnum(l, "speedup"),
					       jnum(l, "mreqs"), one, 0.0005));
			TH_LOG("%.60s... speedup %.3f", l,
			       jnum(l, "speedup"));
		}
		n++;
	}
	return n;
}

/* The table of a --threads 2 run: the columns, then rows in pairs whose
 * last column is the ratio of their rates.  How many rows. */
static int check_table(struct __test_metadata *_metadata, char *out)
{
	char *save, *l;
	double one = 0;
	int n = 0;

	EXPECT_NE(NULL, strstr(out, " check   threads   M req/s"));
	EXPECT_NE(NULL, strstr(out, "rest  speedup\n"));
	for (l = strtok_r(out, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		unsigned size, thr;
		double v[6], sp;
		char op[16], num[16], chk[16];

		if (sscanf(l, "%u %15s %15s %15s %u "
			   "%lf %lf %lf %lf %lf %lf %lf", &size, op, num,
			   chk, &thr, &v[0], &v[1], &v[2], &v[3], &v[4],
			   &v[5], &sp) != 12)
			continue;	/* rules and the head */
		EXPECT_EQ(64, size);
		EXPECT_EQ((unsigned)(n % 2 + 1), thr);
		EXPECT_GT(v[0], 0);
		if (n % 2 == 0)
			one = v[0];
		else
			EXPECT_TRUE(ratio_near(sp, v[0], one, 0.005));
		n++;
	}
	return n;
}

TEST_F(cli, agent_threads_2_reports_ratio)
{
	static char out[65536];
	char err[4096];

	if (!self->built)
		SKIP(return, "bench/agent not built");
	ASSERT_EQ(0, run(self, "-s 64 -n 2000 --threads 2 --json", out,
			 sizeof(out), err, sizeof(err)));
	EXPECT_EQ(2 * NCELLS, check_records(_metadata, out));
	ASSERT_EQ(0, run(self, "-s 64 -n 2000 --threads 2", out, sizeof(out),
			 err, sizeof(err)));
	EXPECT_EQ(2 * NCELLS, check_table(_metadata, out));
}

/* --threads 1: the records and the table of a run without the flag. */
TEST_F(cli, agent_threads_1_as_before)
{
	static char out[65536];
	char err[4096];

	if (!self->built)
		SKIP(return, "bench/agent not built");
	ASSERT_EQ(0, run(self, "-s 64 -n 2000 --threads 1 --json", out,
			 sizeof(out), err, sizeof(err)));
	EXPECT_EQ(NULL, strstr(out, "\"threads\""));
	EXPECT_EQ(NULL, strstr(out, "\"speedup\""));
	EXPECT_NE(NULL, strstr(out, "\"check\":\"crc32c\",\"mreqs\":"));
	ASSERT_EQ(0, run(self, "-s 64 -n 2000 --threads 1", out, sizeof(out),
			 err, sizeof(err)));
	EXPECT_NE(NULL, strstr(out, " check     M req/s   ns/req"));
	EXPECT_EQ(NULL, strstr(out, "threads"));
	EXPECT_EQ(NULL, strstr(out, "speedup"));
}

TEST_HARNESS_MAIN
