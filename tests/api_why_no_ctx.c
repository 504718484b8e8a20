// SPDX-License-Identifier: MIT
/*
 * Why a context cannot be made, with no context: oms_query_caps(NULL, caps)
 * says what oms_ctx_create(NULL) would choose now and why, or why it would
 * fail, with the error the create gives (the harness forks each test, so
 * each sets OMS_BACKEND for itself).  And oms_info, the tool a user runs
 * first, prints that reason, not only strerror().
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "oms.h"

static int rdma_device_here(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

TEST(unknown_backend_named)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	struct oms_ctx *ctx = NULL;

	ASSERT_EQ(0, setenv("OMS_BACKEND", "foo", 1));
	EXPECT_EQ(-EINVAL, oms_ctx_create(NULL, &ctx));
	EXPECT_EQ(NULL, ctx);
	EXPECT_EQ(-EINVAL, oms_query_caps(NULL, &caps));
	EXPECT_NE(NULL, strstr(caps.backend_why, "OMS_BACKEND=foo"));
	EXPECT_NE(NULL, strstr(caps.backend_why, "emu or verbs"));
	EXPECT_EQ(sizeof(caps), caps.size);
}

TEST(emu_chosen_and_why)
{
	struct oms_caps caps = { .size = sizeof(caps) };

	ASSERT_EQ(0, setenv("OMS_BACKEND", "emu", 1));
	EXPECT_EQ(0, oms_query_caps(NULL, &caps));
	EXPECT_EQ(OMS_BACKEND_EMU, caps.backend);
	EXPECT_STREQ("emu", caps.backend_name);
	EXPECT_STREQ("OMS_BACKEND=emu", caps.backend_why);
	/* nothing else is claimed without a context */
	EXPECT_EQ(0, caps.flags);
	EXPECT_EQ(0, caps.queue_depth);
}

TEST(verbs_without_device_says_what_to_do)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	struct oms_ctx *ctx = NULL;
	int err, cerr;

	ASSERT_EQ(0, setenv("OMS_BACKEND", "verbs", 1));
	err = oms_query_caps(NULL, &caps);
	cerr = oms_ctx_create(NULL, &ctx);
	if (!cerr)
		oms_ctx_destroy(ctx);
	if (rdma_device_here()) {
		TH_LOG("an RDMA device is here: %d (%s)", err, caps.backend_why);
		EXPECT_TRUE(err == 0 || err == -ELIBACC);
		return;
	}
	EXPECT_EQ(-ENODEV, err);
	EXPECT_EQ(-ENODEV, cerr);
	EXPECT_EQ(OMS_BACKEND_VERBS, caps.backend);
	EXPECT_NE(NULL, strstr(caps.backend_why, "no RDMA device"));
	EXPECT_NE(NULL, strstr(caps.backend_why, "OMS_BACKEND=emu"));
}

/* OMS_DEVICE names a device: verbs, never the emulated device in its
 * place; one that is not there is refused with the devices present. */
TEST(device_named_picks_verbs)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	struct oms_ctx *ctx = NULL;
	int err;

	ASSERT_EQ(0, unsetenv("OMS_BACKEND"));
	ASSERT_EQ(0, setenv("OMS_DEVICE", "nosuchdev0", 1));
	err = oms_query_caps(NULL, &caps);
	EXPECT_EQ(OMS_BACKEND_VERBS, caps.backend);
	if (err == -ELIBACC) {
		TH_LOG("rdma-core is not loadable: %s", caps.backend_why);
		return;
	}
	EXPECT_EQ(-ENODEV, err);
	EXPECT_NE(NULL, strstr(caps.backend_why,
			       "OMS_DEVICE=nosuchdev0: no such RDMA device"));
	EXPECT_NE(NULL, strstr(caps.backend_why, "present: "));
	EXPECT_EQ(-ENODEV, oms_ctx_create(NULL, &ctx));
	EXPECT_EQ(NULL, ctx);
	ASSERT_EQ(0, setenv("OMS_DEVICE", "../rxe0", 1));
	EXPECT_EQ(-EINVAL, oms_query_caps(NULL, &caps));
	EXPECT_NE(NULL, strstr(caps.backend_why, "not a device name"));
}

/* A backend named outright wins over OMS_DEVICE (a variable a user sets
 * for every verbs program of a shell). */
TEST(device_named_backend_named_wins)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_caps caps = { .size = sizeof(caps) };
	struct oms_ctx *ctx = NULL;

	ASSERT_EQ(0, setenv("OMS_DEVICE", "nosuchdev0", 1));
	ASSERT_EQ(0, setenv("OMS_BACKEND", "emu", 1));
	EXPECT_EQ(0, oms_query_caps(NULL, &caps));
	EXPECT_EQ(OMS_BACKEND_EMU, caps.backend);
	ASSERT_EQ(0, unsetenv("OMS_BACKEND"));
	a.comp_mask = OMS_CTX_ATTR_BACKEND;
	a.backend = OMS_BACKEND_EMU;
	ASSERT_EQ(0, oms_ctx_create(&a, &ctx));
	oms_ctx_destroy(ctx);
}

/* A short struct gets its own bytes only, the why left out. */
TEST(short_struct_and_bad_args)
{
	struct oms_caps caps;
	size_t head = offsetof(struct oms_caps, backend_why);

	ASSERT_EQ(0, setenv("OMS_BACKEND", "emu", 1));
	memset(&caps, 0x5a, sizeof(caps));
	caps.size = (uint32_t)head;
	EXPECT_EQ(0, oms_query_caps(NULL, &caps));
	EXPECT_EQ(head, caps.size);
	EXPECT_EQ(0x5a, (unsigned char)caps.backend_why[0]);
	EXPECT_EQ(-EINVAL, oms_query_caps(NULL, NULL));
	caps.size = 4;
	EXPECT_EQ(-EINVAL, oms_query_caps(NULL, &caps));
}

/* oms_info prints the reason (make check runs from the top of the tree). */
TEST(oms_info_prints_the_reason)
{
	char out[512] = "";
	FILE *p;

	if (access("build/apps/oms_info", X_OK))
		SKIP(return, "build/apps/oms_info not built here");
	p = popen("OMS_BACKEND=foo build/apps/oms_info 2>&1 >/dev/null", "r");
	ASSERT_NE(NULL, p);
	if (!fgets(out, sizeof(out), p))
		out[0] = 0;
	EXPECT_NE(-1, pclose(p));
	TH_LOG("oms_info said: %s", out);
	EXPECT_NE(NULL, strstr(out, "OMS_BACKEND=foo: expected emu or verbs"));
}

TEST_HARNESS_MAIN
