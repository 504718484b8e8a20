// SPDX-License-Identifier: GPL-2.0
/*
 * directmap.c - attach/detach cycles of emulated windows do not split the
 * kernel's direct map: DirectMap4k in /proc/meminfo grows by less than
 * 2 MiB over 50 cycles of WC and UC windows of 1 to 4 MiB.  Between the
 * cycles the test takes 4 MiB of fresh memory, so a module that took new
 * pages for every window would get other pages each time.
 */
#include "harness.h"
#include "oms_guest.h"

#define CYCLES	50
#define HOG	(4ul << 20)

static long directmap4k_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "DirectMap4k: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

TEST(fifty_attach_detach_cycles)
{
	static const uint64_t lens[] = { 4u << 20, 1u << 20, 65536, 2u << 20 };
	long before, after;
	int fd, i;

	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	/* One window first: whatever a first attach sets up is not counted. */
	ASSERT_EQ(0, t_setup_window(fd, 0));
	ASSERT_EQ(0, t_detach(fd));
	before = directmap4k_kb();
	if (before < 0)
		SKIP(return, "no DirectMap4k in /proc/meminfo");

	for (i = 0; i < CYCLES; i++) {
		void *hog;

		ASSERT_EQ(0, t_attach_emulated(fd, lens[i % 4],
					       i % 3 ? 0 : OMS_ATTACH_UC));
		ASSERT_EQ(0, t_detach(fd));
		hog = mmap(NULL, HOG, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		ASSERT_NE(MAP_FAILED, hog);	/* kept until exit */
	}
	after = directmap4k_kb();
	printf("# DirectMap4k: %ld kB before, %ld kB after %d attach/detach cycles\n",
	       before, after, CYCLES);
	fflush(stdout);
	EXPECT_GT(2048, after - before);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	close(fd);
}

TEST_HARNESS_MAIN
