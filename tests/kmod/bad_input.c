// SPDX-License-Identifier: GPL-2.0
/*
 * bad_input.c - every bad input fails with its documented errno and
 * changes nothing: INFO and the window contents (a 64 KiB region that the
 * valid parts of the bad calls aim at) are compared before and after.
 */
#include "harness.h"
#include "oms_guest.h"

#define REGION		0x1c0000
#define REGION_LEN	0x10000

FIXTURE(win) {
	int fd;
	uint64_t len;
	struct oms_info info;
	uint8_t *before, *after;
	uint8_t *buf;		/* a valid 1 MiB source buffer */
	void *unmapped;		/* an address with nothing mapped */
	void *rdonly;		/* a read-only page */
};

FIXTURE_VARIANT(win) {
	int pci;
};

FIXTURE_VARIANT_ADD(win, emulated) { .pci = 0 };
FIXTURE_VARIANT_ADD(win, pci) { .pci = 1 };

FIXTURE_SETUP(win)
{
	int ret;

	self->fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, self->fd);
	ret = t_setup_window(self->fd, variant->pci);
	if (ret == -ENODEV)
		SKIP(return, "no ivshmem device");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, t_info(self->fd, &self->info));
	self->len = self->info.length;
	self->before = malloc(REGION_LEN);
	self->after = malloc(REGION_LEN);
	self->buf = malloc(OMS_STORE_MAX_BYTES + 4096);
	ASSERT_NE(NULL, self->before);
	ASSERT_NE(NULL, self->after);
	ASSERT_NE(NULL, self->buf);
	memset(self->buf, 0xee, OMS_STORE_MAX_BYTES + 4096);
	/* Known contents that no bad call below would write. */
	t_fill(self->before, REGION_LEN, 77);
	ASSERT_EQ(0, t_store1(self->fd, REGION, self->before, REGION_LEN,
			      OMS_STORE_STRONG, OMS_STORE_F_FLUSH));
	/* A read-only page followed by an inaccessible one. */
	self->rdonly = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
	ASSERT_NE(MAP_FAILED, self->rdonly);
	ASSERT_EQ(0, mprotect(self->rdonly, 4096, PROT_READ));
	self->unmapped = (char *)self->rdonly + 4096;
}

FIXTURE_TEARDOWN(win)
{
	free(self->before);
	free(self->after);
	free(self->buf);
	munmap(self->rdonly, 8192);
	close(self->fd);
}

/* The call fails with -err and INFO and the region are unchanged. */
#define EXPECT_BAD(err, call) do {					\
	struct oms_info __i;						\
	int __r = (call);						\
	EXPECT_EQ(-(err), __r) TH_LOG("%s", #call);			\
	ASSERT_EQ(0, t_info(self->fd, &__i));				\
	EXPECT_EQ(0, memcmp(&__i, &self->info, sizeof(__i)))		\
		TH_LOG("INFO changed by %s", #call);			\
	ASSERT_EQ(0, t_read_window(self->fd, REGION, self->after,	\
				   REGION_LEN));			\
	EXPECT_EQ(0, memcmp(self->before, self->after, REGION_LEN))	\
		TH_LOG("window changed by %s", #call);			\
} while (0)

static int store_ops(int fd, struct oms_store_op *ops, uint32_t count,
		     uint32_t flags)
{
	struct oms_ordered_store s = { .flags = flags, .count = count,
				       .ops = (uintptr_t)ops };

	return t_ioctl(fd, OMS_IOC_ORDERED_STORE, &s);
}

static struct oms_store_op op(uint64_t off, uint32_t len, uint32_t class,
			      const void *buf)
{
	return (struct oms_store_op){ .offset = off, .length = len,
				      .cls = class, .buf = (uintptr_t)buf };
}

TEST_F(win, attach_while_attached)
{
	struct t_pci p = { 0 };

	EXPECT_BAD(EBUSY, t_attach_emulated(self->fd, 0, 0));
	t_find_ivshmem(&p);
	EXPECT_BAD(EBUSY, t_attach_pci(self->fd, &p, T_IVSHMEM_BAR, 0));
}

/* Fields checked before the window state: EINVAL even while attached. */
TEST_F(win, attach_bad_fields)
{
	struct oms_attach a;

	a = (struct oms_attach){ .flags = 1u << 7 };
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_ATTACH, &a));
	a = (struct oms_attach){ .flags = OMS_ATTACH_EMULATED, .reserved0 = 1 };
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_ATTACH, &a));
	a = (struct oms_attach){ .flags = OMS_ATTACH_EMULATED,
				 .reserved = { 0, 1 } };
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_ATTACH, &a));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_ATTACH, NULL));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_ATTACH, self->unmapped));
}

TEST_F(win, ordered_store_counts)
{
	struct oms_store_op ops[2];

	ops[0] = op(REGION, 8, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 0, 0));
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, OMS_STORE_MAX_OPS + 1, 0));
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 0x7fffffff, 0));
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 0xffffffff, 0));
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 1, 1u << 5));
}

TEST_F(win, ordered_store_pointers)
{
	struct oms_store_op ops[2];

	EXPECT_BAD(EFAULT, store_ops(self->fd, NULL, 1, 0));
	EXPECT_BAD(EFAULT, store_ops(self->fd, (void *)0x1000, 1, 0));
	EXPECT_BAD(EFAULT, store_ops(self->fd, self->unmapped, 1, 0));
	/* The vector runs off a readable page into an inaccessible one. */
	EXPECT_BAD(EFAULT, store_ops(self->fd, (struct oms_store_op *)
				     ((char *)self->rdonly + 4096 - 32), 2, 0));
	ops[0] = op(REGION, 8, OMS_STORE_WEAK, NULL);
	EXPECT_BAD(EFAULT, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(REGION, 8, OMS_STORE_WEAK, self->unmapped);
	EXPECT_BAD(EFAULT, store_ops(self->fd, ops, 1, 0));
	/* A good op, then one whose buffer is unmapped: nothing written. */
	ops[0] = op(REGION, 64, OMS_STORE_STRONG, self->buf);
	ops[1] = op(REGION + 64, 64, OMS_STORE_WEAK,
		    (char *)self->unmapped + 8);
	EXPECT_BAD(EFAULT, store_ops(self->fd, ops, 2, 0));
	/* The argument itself: NULL, never mapped, inaccessible. */
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE, NULL));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE,
				   (void *)0x1000));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE,
				   self->unmapped));
}

/* A valid request in a read-only page: EFAULT and not one byte stored. */
TEST_F(win, ordered_store_readonly_arg)
{
	struct oms_store_op *ops;
	struct oms_ordered_store *s;
	char *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	s = (struct oms_ordered_store *)page;
	ops = (struct oms_store_op *)(page + 256);
	ops[0] = op(REGION, 64, OMS_STORE_STRONG, self->buf);
	*s = (struct oms_ordered_store){ .count = 1, .ops = (uintptr_t)ops,
					 .flags = OMS_STORE_F_FLUSH };
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_ORDERED_STORE, s));
	munmap(page, 4096);
}

TEST_F(win, ordered_store_ops)
{
	struct oms_store_op ops[2];

	ops[0] = op(REGION + 4, 8, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(REGION, 12, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(REGION, 0, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(REGION, 8, 3, self->buf);
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(REGION, 8, 0xffffffff, self->buf);
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(REGION, 8, OMS_STORE_WEAK, self->buf);
	ops[0].reserved = 1;
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 1, 0));
	/* A valid op first: the whole vector is checked before any store. */
	ops[0] = op(REGION, 64, OMS_STORE_WEAK, self->buf);
	ops[1] = op(REGION + 64, 7, OMS_STORE_STRONG, self->buf);
	EXPECT_BAD(EINVAL, store_ops(self->fd, ops, 2, 0));
}

TEST_F(win, ordered_store_ranges)
{
	struct oms_store_op ops[2];

	ops[0] = op(self->len, 8, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(ERANGE, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(self->len - 8, 16, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(ERANGE, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(~7ull, 8, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(ERANGE, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(~7ull - 8, 1024, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(ERANGE, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(REGION, 64, OMS_STORE_WEAK, self->buf);
	ops[1] = op(1ull << 62, 64, OMS_STORE_STRONG, self->buf);
	EXPECT_BAD(ERANGE, store_ops(self->fd, ops, 2, 0));
	/* Over OMS_STORE_MAX_BYTES in total, or in one op. */
	ops[0] = op(REGION, OMS_STORE_MAX_BYTES, OMS_STORE_WEAK, self->buf);
	ops[1] = op(REGION, 8, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(E2BIG, store_ops(self->fd, ops, 2, 0));
	ops[0] = op(0, OMS_STORE_MAX_BYTES + 8, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(E2BIG, store_ops(self->fd, ops, 1, 0));
	ops[0] = op(0, 0xfffffff8u, OMS_STORE_WEAK, self->buf);
	EXPECT_BAD(E2BIG, store_ops(self->fd, ops, 1, 0));
}

TEST_F(win, doorbell)
{
	struct oms_doorbell good = {
		.wqe_len = 64, .wqe = (uintptr_t)self->buf,
		.wqe_offset = REGION, .dbrec_offset = REGION + 0x100,
		.db_offset = REGION + 0x108, .dbrec = 1, .db = 2,
	}, d;

	d = good; d.flags = 1u << 3;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.reserved0 = 1;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.reserved[1] = 1;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.wqe_len = 0;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.wqe_len = 60;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.wqe_offset += 4;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.dbrec_offset += 2;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.db_offset += 4;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.wqe_len = OMS_STORE_MAX_BYTES + 8;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.wqe = 0;
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.wqe = (uintptr_t)self->unmapped;
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.db_offset = self->len;
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.dbrec_offset = self->len;
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.wqe_offset = ~63ull;
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	/* BlueFlame: 64-byte granules, at most OMS_BF_SIZE, no db value. */
	good.flags = OMS_DB_BLUEFLAME;
	good.db = 0;
	good.db_offset = REGION + 0x200;
	d = good; d.wqe_len = OMS_BF_SIZE + 64;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.wqe_len = 72;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.db_offset += 8;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.db = 1;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	d = good; d.db_offset = self->len - 64; d.wqe_len = 128;
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_DOORBELL, &d));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_DOORBELL, self->rdonly));
}

TEST_F(win, flush)
{
	struct oms_flush f;

	f = (struct oms_flush){ .offset = 2 };
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_FLUSH, &f));
	f = (struct oms_flush){ .offset = self->len };
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_FLUSH, &f));
	f = (struct oms_flush){ .offset = ~3ull };
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_FLUSH, &f));
	f = (struct oms_flush){ .flags = 1 };
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_FLUSH, &f));
	f = (struct oms_flush){ .reserved = { 1, 0 } };
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_FLUSH, &f));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_FLUSH, NULL));
}

TEST_F(win, bench)
{
	struct oms_bench good = { .msg_size = 64, .width = 8,
				  .total_bytes = 4096, .offset = REGION,
				  .span = 4096 }, b;

	b = good; b.msg_size = 32;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.msg_size = 96;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.msg_size = 16384;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.width = 2;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.width = 16;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.total_bytes = 0;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.total_bytes = 4096 + 8;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.total_bytes = OMS_BENCH_MAX_TOTAL + 64;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.offset = REGION + 8;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.flags = 2;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.reserved0 = 1;
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.offset = self->len;
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.span = self->len;
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	b = good; b.offset = ~63ull;
	EXPECT_BAD(ERANGE, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, &b));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_MMIO_BENCH, self->rdonly));
}

TEST_F(win, unknown_and_wrong_size)
{
	char big[256] = { 0 };

	EXPECT_BAD(ENOTTY, t_ioctl(self->fd, _IO(OMS_IOC_MAGIC, 0x40), big));
	EXPECT_BAD(ENOTTY, t_ioctl(self->fd, _IO(OMS_IOC_MAGIC, 0), big));
	EXPECT_BAD(ENOTTY, t_ioctl(self->fd, _IOWR('x', 4,
				   struct oms_ordered_store), big));
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, _IOWR(OMS_IOC_MAGIC, 4,
				   char[16]), big));
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, _IOWR(OMS_IOC_MAGIC, 4,
				   char[48]), big));
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, _IOR(OMS_IOC_MAGIC, 1,
				   struct oms_attach), big));
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, _IOW(OMS_IOC_MAGIC, 3,
				   struct oms_info), big));
	EXPECT_BAD(EINVAL, t_ioctl(self->fd, _IOW(OMS_IOC_MAGIC, 2, int),
				   big));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_INFO, NULL));
	EXPECT_BAD(EFAULT, t_ioctl(self->fd, OMS_IOC_INFO, self->rdonly));
}

/* Attach failures, from the detached state: nothing gets attached. */
TEST(attach_errors)
{
	struct oms_info before, after;
	struct t_pci p, io;
	struct oms_attach a;
	int fd = open(T_DEV, O_RDWR), bar, iobar;

	ASSERT_LE(0, fd);
	t_detach(fd);
	ASSERT_EQ(0, t_info(fd, &before));
#define EXPECT_ATTACH_FAILS(err, call) do {				\
	EXPECT_EQ(-(err), (call)) TH_LOG("%s", #call);			\
	ASSERT_EQ(0, t_info(fd, &after));				\
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(after)));		\
} while (0)
	p = (struct t_pci){ 0, 0xfe, 31, 7 };
	EXPECT_ATTACH_FAILS(ENODEV, t_attach_pci(fd, &p, 0, 0));
	p = (struct t_pci){ 0x1234, 0, 0, 0 };
	EXPECT_ATTACH_FAILS(ENODEV, t_attach_pci(fd, &p, 0, 0));
	EXPECT_ATTACH_FAILS(ENODEV, t_detach(fd));
	EXPECT_ATTACH_FAILS(EINVAL, t_attach_emulated(fd, 4097, 0));
	EXPECT_ATTACH_FAILS(EINVAL, t_attach_emulated(fd, 4, 0));
	EXPECT_ATTACH_FAILS(EINVAL, t_attach_emulated(fd, OMS_EMU_MAX_LEN +
						      4096, 0));
	EXPECT_ATTACH_FAILS(EINVAL, t_attach_emulated(fd, 1ull << 63, 0));
	a = (struct oms_attach){ .flags = OMS_ATTACH_EMULATED, .bus = 1 };
	EXPECT_ATTACH_FAILS(EINVAL, t_ioctl(fd, OMS_IOC_ATTACH, &a));
	a = (struct oms_attach){ .flags = OMS_ATTACH_EMULATED, .bar = 2 };
	EXPECT_ATTACH_FAILS(EINVAL, t_ioctl(fd, OMS_IOC_ATTACH, &a));
	EXPECT_ATTACH_FAILS(EFAULT, t_ioctl(fd, OMS_IOC_ATTACH, NULL));

	if (t_find_ivshmem(&p) == 0) {
		for (bar = 6; bar < 256; bar += 83)
			EXPECT_ATTACH_FAILS(EINVAL, t_attach_pci(fd, &p, bar, 0));
		p.slot += 32;
		EXPECT_ATTACH_FAILS(EINVAL, t_attach_pci(fd, &p, 2, 0));
		p.slot -= 32;
		p.func = 8;
		EXPECT_ATTACH_FAILS(EINVAL, t_attach_pci(fd, &p, 2, 0));
		t_find_ivshmem(&p);
		/* ivshmem: BAR1 unimplemented, BAR3 the top of 64-bit BAR2 */
		EXPECT_ATTACH_FAILS(ENODATA, t_attach_pci(fd, &p, 1, 0));
		EXPECT_ATTACH_FAILS(ENODATA, t_attach_pci(fd, &p, 3, 0));
		EXPECT_ATTACH_FAILS(ENODATA, t_attach_pci(fd, &p, 5, 0));
		a = (struct oms_attach){ .domain = p.domain, .bus = p.bus,
					 .slot = p.slot, .func = p.func,
					 .bar = 2, .length = 4096 };
		EXPECT_ATTACH_FAILS(EINVAL, t_ioctl(fd, OMS_IOC_ATTACH, &a));
	} else {
		TH_LOG("no ivshmem device: PCI cases skipped");
	}
	if (t_find_io_bar(&io, &iobar) == 0)
		EXPECT_ATTACH_FAILS(EOPNOTSUPP, t_attach_pci(fd, &io, iobar, 0));
	else
		TH_LOG("no device with an I/O BAR: case skipped");
#undef EXPECT_ATTACH_FAILS
	close(fd);
}

/* Without a window every window call is ENODEV. */
TEST(no_window)
{
	uint64_t v = 0;
	struct oms_store_op o = { .length = 8, .buf = (uintptr_t)&v };
	struct oms_ordered_store s = { .count = 1, .ops = (uintptr_t)&o };
	struct oms_doorbell d = { .wqe_len = 8, .wqe = (uintptr_t)&v,
				  .db_offset = 8 };
	struct oms_flush f = { 0 };
	struct oms_bench b = { .msg_size = 64, .width = 8,
			       .total_bytes = 64 };
	int fd = open(T_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	t_detach(fd);
	EXPECT_EQ(-ENODEV, t_ioctl(fd, OMS_IOC_ORDERED_STORE, &s));
	EXPECT_EQ(-ENODEV, t_ioctl(fd, OMS_IOC_DOORBELL, &d));
	EXPECT_EQ(-ENODEV, t_ioctl(fd, OMS_IOC_FLUSH, &f));
	EXPECT_EQ(-ENODEV, t_ioctl(fd, OMS_IOC_MMIO_BENCH, &b));
	EXPECT_EQ(-ENODEV, t_detach(fd));
	close(fd);
}

TEST_HARNESS_MAIN
