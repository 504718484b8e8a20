// SPDX-License-Identifier: GPL-2.0
/*
 * attach.c - the window loaded by module parameter, then attach/detach by
 * ioctl: PCI BAR and emulated, write-combining and uncached, INFO.
 */
#include "harness.h"
#include "oms_guest.h"

/* Runs first: the module was loaded with pci=<ivshmem> bar=2. */
TEST(load_param_window)
{
	const char *want = getenv("OMS_LOAD_PCI");
	struct oms_info info;
	struct t_pci p;
	int fd;

	if (!want || t_parse_bdf(want, &p))
		SKIP(return, "module not loaded with pci= (OMS_LOAD_PCI unset)");
	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_PCI, info.kind);
	EXPECT_EQ(T_BAR_SIZE, info.length);
	EXPECT_EQ(OMS_INFO_WC, info.flags);
	EXPECT_EQ(p.domain, info.domain);
	EXPECT_EQ(p.bus, info.bus);
	EXPECT_EQ(p.slot, info.slot);
	EXPECT_EQ(p.func, info.func);
	EXPECT_EQ(T_IVSHMEM_BAR, info.bar);
	EXPECT_EQ(1, info.generation);
	close(fd);
}

TEST(detach_then_none)
{
	struct oms_info info;
	int fd = open(T_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, t_setup_window(fd, 0));
	ASSERT_EQ(0, t_detach(fd));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_NONE, info.kind);
	EXPECT_EQ(0, info.length);
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(-ENODEV, t_detach(fd));
	close(fd);
}

TEST(attach_pci_by_ioctl)
{
	struct oms_info before, info;
	struct t_pci p;
	int fd = open(T_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	if (t_find_ivshmem(&p))
		SKIP(return, "no ivshmem device in this guest");
	t_detach(fd);
	ASSERT_EQ(0, t_info(fd, &before));
	ASSERT_EQ(0, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_PCI, info.kind);
	EXPECT_EQ(T_BAR_SIZE, info.length);
	EXPECT_EQ(OMS_INFO_WC, info.flags);
	EXPECT_EQ(T_IVSHMEM_BAR, info.bar);
	EXPECT_EQ(p.slot, info.slot);
	EXPECT_EQ(before.generation + 1, info.generation);

	/* A second attach is refused and changes nothing. */
	EXPECT_EQ(-EBUSY, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	EXPECT_EQ(-EBUSY, t_attach_emulated(fd, 0, 0));
	ASSERT_EQ(0, t_info(fd, &before));
	EXPECT_EQ(0, memcmp(&before, &info, sizeof(info)));
	EXPECT_EQ(0, t_detach(fd));
	close(fd);
}

TEST(attach_emulated_default_length)
{
	struct oms_info info;
	int fd = open(T_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	t_detach(fd);
	ASSERT_EQ(0, t_attach_emulated(fd, 0, 0));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_WINDOW_EMULATED, info.kind);
	EXPECT_EQ(OMS_EMU_DEFAULT_LEN, info.length);
	EXPECT_EQ(OMS_INFO_WC, info.flags);
	EXPECT_EQ(0, info.bus);
	EXPECT_EQ(0, info.slot);
	EXPECT_EQ(0, t_detach(fd));
	close(fd);
}

/* Both kinds uncached: INFO says so, and bytes still land. */
TEST(attach_uncached)
{
	uint8_t buf[256], back[256];
	struct oms_info info;
	struct t_pci p;
	int fd = open(T_DEV, O_RDWR), pci;

	ASSERT_LE(0, fd);
	for (pci = 0; pci < 2; pci++) {
		t_detach(fd);
		if (pci) {
			if (t_find_ivshmem(&p))
				break;
			ASSERT_EQ(0, t_attach_pci(fd, &p, T_IVSHMEM_BAR,
						  OMS_ATTACH_UC));
		} else {
			ASSERT_EQ(0, t_attach_emulated(fd, 65536,
						       OMS_ATTACH_UC));
		}
		ASSERT_EQ(0, t_info(fd, &info));
		EXPECT_EQ(0, info.flags & OMS_INFO_WC);
		EXPECT_EQ(pci ? OMS_WINDOW_PCI : OMS_WINDOW_EMULATED, info.kind);
		t_fill(buf, sizeof(buf), 40 + pci);
		ASSERT_EQ(0, t_store1(fd, 0x8000, buf, sizeof(buf),
				      OMS_STORE_STRONG, 0));
		ASSERT_EQ(0, t_read_window(fd, 0x8000, back, sizeof(back)));
		EXPECT_EQ(0, memcmp(buf, back, sizeof(buf)));
		EXPECT_EQ(0, t_detach(fd));
	}
	close(fd);
}

TEST(emulated_lengths)
{
	struct oms_info info;
	int fd = open(T_DEV, O_RDWR);

	ASSERT_LE(0, fd);
	t_detach(fd);
	ASSERT_EQ(0, t_attach_emulated(fd, 4096, 0));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(4096, info.length);
	ASSERT_EQ(0, t_detach(fd));
	ASSERT_EQ(0, t_attach_emulated(fd, OMS_EMU_MAX_LEN, 0));
	ASSERT_EQ(0, t_info(fd, &info));
	EXPECT_EQ(OMS_EMU_MAX_LEN, info.length);
	ASSERT_EQ(0, t_detach(fd));
	close(fd);
}

/*
 * The memory type the kernel tracks for the BAR (x86 PAT, debugfs): the
 * window's kernel view and every user mapping get this one type.
 */
static int pat_type_of(unsigned long long start, char *type, size_t n)
{
	char line[256], want[64];
	FILE *f = fopen("/sys/kernel/debug/x86/pat_memtype_list", "r");
	int ret = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "[mem 0x%016llx-", start);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want), *t;

		if (!p || !(t = strchr(p, ']')))
			continue;
		snprintf(type, n, "%s", t + 2);
		type[strcspn(type, "\n")] = 0;
		ret = 0;
	}
	fclose(f);
	return ret;
}

TEST(pat_memory_type)
{
	unsigned long long start = 0, end, fl;
	char path[256], bdf[32], type[64];
	volatile uint32_t *m;
	struct t_pci p;
	FILE *f;
	int fd, i;

	if (t_find_ivshmem(&p))
		SKIP(return, "no ivshmem device");
	if (access("/sys/kernel/debug/x86/pat_memtype_list", R_OK))
		SKIP(return, "no PAT memtype list in debugfs");
	snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%x", p.domain, p.bus,
		 p.slot, p.func);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	for (i = 0; i <= T_IVSHMEM_BAR; i++)
		ASSERT_EQ(3, fscanf(f, "%llx %llx %llx", &start, &end, &fl));
	fclose(f);

	fd = open(T_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	t_detach(fd);
	EXPECT_NE(0, pat_type_of(start, type, sizeof(type)));
	ASSERT_EQ(0, t_attach_pci(fd, &p, T_IVSHMEM_BAR, 0));
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 T_SCRATCH_LIVE);
	ASSERT_NE(MAP_FAILED, m);
	*m = 1;
	ASSERT_EQ(0, pat_type_of(start, type, sizeof(type)));
	EXPECT_STREQ("write-combining", type);
	munmap((void *)m, 4096);
	ASSERT_EQ(0, t_detach(fd));
	ASSERT_EQ(0, t_attach_pci(fd, &p, T_IVSHMEM_BAR, OMS_ATTACH_UC));
	ASSERT_EQ(0, pat_type_of(start, type, sizeof(type)));
	EXPECT_STREQ("uncached-minus", type);
	ASSERT_EQ(0, t_detach(fd));
	EXPECT_NE(0, pat_type_of(start, type, sizeof(type)));
	close(fd);
}

TEST_HARNESS_MAIN
