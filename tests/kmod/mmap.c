// SPDX-License-Identifier: GPL-2.0
/*
 * mmap.c - mapping the window: bytes written through the WC mapping land
 * (read back, FLUSH, and on the host for the PCI variant); mmap inside and
 * beyond the window bounds; MAP_PRIVATE and growth refused.
 */
#include "harness.h"
#include "oms_guest.h"

FIXTURE(win) {
	int fd;
	uint64_t len;
};

FIXTURE_VARIANT(win) {
	int pci;
};

FIXTURE_VARIANT_ADD(win, emulated) { .pci = 0 };
FIXTURE_VARIANT_ADD(win, pci) { .pci = 1 };

FIXTURE_SETUP(win)
{
	struct oms_info info;
	int ret;

	self->fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, self->fd);
	ret = t_setup_window(self->fd, variant->pci);
	if (ret == -ENODEV)
		SKIP(return, "no ivshmem device");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, t_info(self->fd, &info));
	self->len = info.length;
}

FIXTURE_TEARDOWN(win)
{
	close(self->fd);
}

/* The host checks these bytes in the backing file (PCI variant). */
TEST_F(win, wc_mapping_lands)
{
	static uint8_t buf[LAY_MMAP_LEN], back[LAY_MMAP_LEN];
	uint32_t v = 0, want;
	uint8_t *m;

	m = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	t_fill(buf, sizeof(buf), 1);
	memcpy(m + LAY_MMAP, buf, sizeof(buf));
	/* FLUSH reads the last word back after draining the WC buffers. */
	ASSERT_EQ(0, t_flush(self->fd, LAY_MMAP + LAY_MMAP_LEN - 4, &v));
	memcpy(&want, buf + LAY_MMAP_LEN - 4, 4);
	EXPECT_EQ(want, v);
	ASSERT_EQ(0, munmap(m, self->len));
	ASSERT_EQ(0, t_read_window(self->fd, LAY_MMAP, back, sizeof(back)));
	EXPECT_EQ(0, memcmp(buf, back, sizeof(buf)));
}

/* A 32-bit store through the mapping is what FLUSH reads at that offset. */
TEST_F(win, flush_reads_mapped_store)
{
	volatile uint32_t *w;
	uint32_t v = 0;
	uint8_t *m;

	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 self->len - 4096);
	ASSERT_NE(MAP_FAILED, m);
	w = (volatile uint32_t *)(m + 4092);
	*w = 0xdeadbeef;
	ASSERT_EQ(0, t_flush(self->fd, self->len - 4, &v));
	EXPECT_EQ(0xdeadbeef, v);
	*w = 0x12345678;
	ASSERT_EQ(0, t_flush(self->fd, self->len - 4, &v));
	EXPECT_EQ(0x12345678, v);
	munmap(m, 4096);
}

TEST_F(win, inside_bounds)
{
	void *m;

	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, self->len - 4096);
	ASSERT_NE(MAP_FAILED, m);
	munmap(m, 4096);
	m = mmap(NULL, self->len, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	munmap(m, self->len);
}

TEST_F(win, beyond_bounds)
{
	struct { off_t off; size_t len; } bad[] = {
		{ self->len, 4096 },
		{ 0, self->len + 4096 },
		{ self->len - 4096, 8192 },
		{ (off_t)1 << 40, 4096 },
		{ (off_t)self->len << 8, 4096 },
	};
	size_t i;
	void *m;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		m = mmap(NULL, bad[i].len, PROT_READ, MAP_SHARED, self->fd,
			 bad[i].off);
		EXPECT_EQ(MAP_FAILED, m);
		EXPECT_EQ(EINVAL, errno) TH_LOG("case %zu", i);
		if (m != MAP_FAILED)
			munmap(m, bad[i].len);
	}
}

TEST_F(win, private_refused)
{
	void *m;

	errno = 0;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(win, no_growth)
{
	void *m, *g;

	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	g = mremap(m, 4096, 8192, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, g);
	munmap(g == MAP_FAILED ? m : g, g == MAP_FAILED ? 4096 : 8192);
}

TEST(no_window)
{
	int fd = open(T_DEV, O_RDWR);
	void *m;

	ASSERT_LE(0, fd);
	t_detach(fd);
	errno = 0;
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(ENODEV, errno);
	close(fd);
}

TEST_HARNESS_MAIN
