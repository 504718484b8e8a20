// SPDX-License-Identifier: GPL-2.0
/*
 * pci_state.c - the module is not the device's driver, so sysfs lets root
 * change the device under an attached window.  "enable" = 0 takes the
 * enable count the module holds: the window goes on (disabling turns off
 * bus mastering, not memory decoding), and detach does not disable the
 * device a second time (no "disabling already-disabled device" WARN, no
 * count below zero).  Runtime PM: while a window is attached the device
 * stays powered even with power/control = auto; without one it suspends
 * (the control that shows the module's reference is what keeps it up).
 * DETACH raced against "enable" = 0: the device lock serializes their
 * checks, so exactly one undoes the window's count.
 * The runner fails a test whose run leaves a WARNING in dmesg.
 */
#include <pthread.h>
#include <time.h>

#include "harness.h"
#include "oms_guest.h"

static void dev_path(char *path, size_t n, const char *bdf, const char *file)
{
	snprintf(path, n, "/sys/bus/pci/devices/%.64s/%.64s", bdf, file);
}

/* The first line of a sysfs file of the ivshmem device, in @buf. */
static int dev_read(const char *bdf, const char *file, char *buf, size_t n)
{
	char path[256];
	FILE *f;
	int ret = -1;

	dev_path(path, sizeof(path), bdf, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, n, f)) {
		buf[strcspn(buf, "\n")] = 0;
		ret = 0;
	}
	fclose(f);
	return ret;
}

static int dev_write(const char *bdf, const char *file, const char *s)
{
	char path[256];

	dev_path(path, sizeof(path), bdf, file);
	return t_write_file(path, s);
}

static int enabled(const char *bdf)
{
	char buf[16];

	return dev_read(bdf, "enable", buf, sizeof(buf)) ? -1 : atoi(buf);
}

/* Wait up to @ms for power/runtime_status to read @want: 0 or -1. */
static int wait_status(const char *bdf, const char *want, int ms)
{
	char buf[32];

	for (; ms >= 0; ms -= 50) {
		if (!dev_read(bdf, "power/runtime_status", buf, sizeof(buf)) &&
		    !strcmp(buf, want))
			return 0;
		usleep(50000);
	}
	return -1;
}

FIXTURE(dev) {
	int fd;
	struct t_pci p;
	char bdf[32];
	int enable0;		/* "enable" with no window */
};

FIXTURE_SETUP(dev)
{
	if (t_find_ivshmem(&self->p))
		SKIP(return, "no ivshmem device");
	t_bdf_str(&self->p, self->bdf, sizeof(self->bdf));
	self->fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, self->fd);
	t_detach(self->fd);
	self->enable0 = enabled(self->bdf);
	ASSERT_LE(0, self->enable0);
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* A store that lands and reads back through a fresh mapping. */
static int store_lands(int fd, uint64_t v)
{
	uint64_t back = 0;

	if (t_store1(fd, T_SCRATCH_LIVE, &v, 8, OMS_STORE_STRONG,
		     OMS_STORE_F_FLUSH) ||
	    t_read_window(fd, T_SCRATCH_LIVE, &back, 8))
		return -1;
	return back == v ? 0 : -1;
}

TEST_F(dev, enable_0_under_window)
{
	ASSERT_EQ(0, t_attach_pci(self->fd, &self->p, T_IVSHMEM_BAR, 0));
	EXPECT_EQ(1, enabled(self->bdf));
	ASSERT_EQ(0, dev_write(self->bdf, "enable", "0"));
	EXPECT_EQ(0, enabled(self->bdf));
	EXPECT_EQ(0, store_lands(self->fd, 0x0e0e0e0e01010101ull));
	EXPECT_EQ(0, t_detach(self->fd));
	EXPECT_EQ(self->enable0, enabled(self->bdf));
	/* and the next attach takes and gives back a count of its own */
	ASSERT_EQ(0, t_attach_pci(self->fd, &self->p, T_IVSHMEM_BAR, 0));
	EXPECT_EQ(1, enabled(self->bdf));
	EXPECT_EQ(0, store_lands(self->fd, 0x0e0e0e0e02020202ull));
	EXPECT_EQ(0, t_detach(self->fd));
	EXPECT_EQ(self->enable0, enabled(self->bdf));
}

/* Disabled and enabled again under the window: the counts still add up. */
TEST_F(dev, enable_0_then_1_under_window)
{
	ASSERT_EQ(0, t_attach_pci(self->fd, &self->p, T_IVSHMEM_BAR, 0));
	ASSERT_EQ(0, dev_write(self->bdf, "enable", "0"));
	ASSERT_EQ(0, dev_write(self->bdf, "enable", "1"));
	EXPECT_EQ(1, enabled(self->bdf));
	EXPECT_EQ(0, store_lands(self->fd, 0x0e0e0e0e03030303ull));
	EXPECT_EQ(0, t_detach(self->fd));
	EXPECT_EQ(0, enabled(self->bdf));
	/* a second disable from sysfs finds nothing to undo */
	EXPECT_EQ(-EIO, dev_write(self->bdf, "enable", "0"));
}

TEST_F(dev, runtime_pm_held_while_attached)
{
	char ctl[16] = "on";

	if (dev_read(self->bdf, "power/control", ctl, sizeof(ctl)))
		SKIP(return, "no runtime PM in this kernel (CONFIG_PM)");
	ASSERT_EQ(0, dev_write(self->bdf, "power/control", "auto"));
	/* the control: with no window nothing holds the device up */
	EXPECT_EQ(0, wait_status(self->bdf, "suspended", 3000));

	ASSERT_EQ(0, t_attach_pci(self->fd, &self->p, T_IVSHMEM_BAR, 0));
	EXPECT_EQ(0, wait_status(self->bdf, "active", 0));
	usleep(500000);
	EXPECT_EQ(0, wait_status(self->bdf, "active", 0));
	EXPECT_EQ(0, store_lands(self->fd, 0x0e0e0e0e04040404ull));
	EXPECT_EQ(0, t_detach(self->fd));
	EXPECT_EQ(0, wait_status(self->bdf, "suspended", 3000));

	ASSERT_EQ(0, dev_write(self->bdf, "power/control", ctl));
	EXPECT_EQ(0, wait_status(self->bdf, "active", 1000));
}

#define RACE_ROUNDS	10000

struct race {
	pthread_barrier_t go, done;
	int fd;
	char enable[256];	/* the device's sysfs "enable" */
	int stop;		/* set before a release: no more rounds */
	int detach_ret, enable_ret;	/* this round's */
};

/* One side of each round: DETACH (@detach) or the sysfs write. */
static void race_side(struct race *r, int detach)
{
	for (;;) {
		pthread_barrier_wait(&r->go);
		if (r->stop)
			break;
		if (detach)
			r->detach_ret = t_detach(r->fd);
		else
			r->enable_ret = t_write_file(r->enable, "0");
		pthread_barrier_wait(&r->done);
	}
}

static void *race_detach(void *arg)
{
	race_side(arg, 1);
	return NULL;
}

static void *race_enable_0(void *arg)
{
	race_side(arg, 0);
	return NULL;
}

/*
 * DETACH and "enable" = 0, released together after each attach, 10,000
 * rounds: detach answers 0 every time; the sysfs write either disabled
 * the device (it came first: detach then finds it disabled and leaves it)
 * or found it disabled (-EIO: detach came first); the count is back to
 * what it was after every round.  Unserialized, both checks saw the
 * device enabled within a hundred rounds and both disabled it: the count
 * read 4294967295 and the kernel warned "disabling already-disabled
 * device".  Both orders are counted and logged: a run in which one side
 * always won raced nothing.
 */
/* the debug kernel under TCG takes minutes for the rounds */
TEST_F_TIMEOUT(dev, detach_races_enable_0, 1200)
{
	struct race r = { .fd = self->fd };
	int won_sysfs = 0, won_detach = 0, bad_count = 0, i;
	struct timespec t0, t1;
	pthread_t a, b;

	dev_path(r.enable, sizeof(r.enable), self->bdf, "enable");
	ASSERT_EQ(0, pthread_barrier_init(&r.go, NULL, 3));
	ASSERT_EQ(0, pthread_barrier_init(&r.done, NULL, 3));
	ASSERT_EQ(0, pthread_create(&a, NULL, race_detach, &r));
	ASSERT_EQ(0, pthread_create(&b, NULL, race_enable_0, &r));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < RACE_ROUNDS && !bad_count; i++) {
		int ret = t_attach_pci(self->fd, &self->p, T_IVSHMEM_BAR, 0);

		pthread_barrier_wait(&r.go);
		pthread_barrier_wait(&r.done);
		if (ret || r.detach_ret ||
		    (r.enable_ret && r.enable_ret != -EIO)) {
			TH_LOG("round %d: attach %d, detach %d, enable=0 %d",
			       i, ret, r.detach_ret, r.enable_ret);
			bad_count++;
		} else if (r.enable_ret) {
			won_detach++;
		} else {
			won_sysfs++;
		}
		if (enabled(self->bdf) != self->enable0) {
			TH_LOG("round %d: enable reads %d, not %d", i,
			       enabled(self->bdf), self->enable0);
			bad_count++;
		}
	}
	r.stop = 1;
	pthread_barrier_wait(&r.go);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	TH_LOG("%d rounds in %.0f s: sysfs disabled first in %d, detach in %d",
	       i, (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, won_sysfs, won_detach);
	EXPECT_EQ(0, bad_count);
	EXPECT_LT(0, won_sysfs);
	EXPECT_LT(0, won_detach);
	pthread_barrier_destroy(&r.go);
	pthread_barrier_destroy(&r.done);
}

TEST_HARNESS_MAIN
