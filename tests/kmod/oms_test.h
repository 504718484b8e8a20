/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oms_test.h - shared by the oms.ko kselftests (run in the guest) and the
 * host-side checker of the ivshmem backing file.
 *
 * The guest tests write known bytes at fixed offsets of the ivshmem BAR
 * (LAY_*); after the guest powered off, check_backing reads the host file
 * that backs the BAR and checks every byte.
 */
#ifndef OMS_TEST_H
#define OMS_TEST_H

#include <stdint.h>
#include <stddef.h>

#include "oms_uapi.h"

#define T_IVSHMEM_VENDOR	0x1af4
#define T_IVSHMEM_DEVICE	0x1110
#define T_IVSHMEM_BAR		2
#define T_BAR_SIZE		(4u << 20)

/*
 * Layout of the 4 MiB window (ivshmem BAR or emulated) used by the guest
 * tests.  LAY_* regions are checked on the host; the others are scratch:
 *   0x000000  64 KiB  LAY_MMAP     WC mmap pattern           (host-checked)
 *   0x100000   1 KiB  LAY_STORE    ORDERED_STORE vector      (host-checked)
 *   0x140000 256 KiB  bench width-4 pattern, scratch
 *   0x180000   8 KiB  ORDERED_STORE scratch, DOORBELL records
 *   0x1a0000  64 KiB  T_SCRATCH_LIVE  detach_live and caps, scratch
 *   0x1c0000  64 KiB  bad_input region (must not change), scratch
 *   0x200000   8 KiB  LAY_DB       DOORBELL and BlueFlame    (host-checked)
 *   0x210000   1 MiB  ORDERED_STORE maximum-size vector, scratch
 *   0x380000  64 KiB  T_SCRATCH_BENCH  MMIO_BENCH figures, scratch
 *   0x3f0000  64 KiB  LAY_BENCH    MMIO_BENCH width-8 pattern (host-checked)
 */
#define T_SCRATCH_BENCH		0x380000
#define T_SCRATCH_LIVE		0x1a0000
#define LAY_MMAP		0x000000	/* written through the WC mmap */
#define LAY_MMAP_LEN		0x10000
#define LAY_STORE		0x100000	/* ORDERED_STORE vector */
#define LAY_STORE_LEN		0x400
#define LAY_DB			0x200000	/* DOORBELL */
#define LAY_DB_WQE		(LAY_DB + 0x000)
#define LAY_DB_WQE_LEN		192
#define LAY_DB_REC		(LAY_DB + 0x400)
#define LAY_DB_DB		(LAY_DB + 0x408)
#define LAY_BF_WQE		(LAY_DB + 0x800)
#define LAY_BF_WQE_LEN		OMS_BF_SIZE
#define LAY_BF_REC		(LAY_DB + 0xc00)
#define LAY_BF_REG		(LAY_DB + 0x1000)
#define LAY_BENCH		0x3f0000	/* MMIO_BENCH, width 8 */
#define LAY_BENCH_LEN		0x10000
#define LAY_DB_REC_VAL		0x11223344u
#define LAY_DB_DB_VAL		0x0102030405060708ull
#define LAY_BF_REC_VAL		0x55667788u

/* OMS_TEST_LAYOUT_ONLY: just the layout, for freestanding code. */
#ifndef OMS_TEST_LAYOUT_ONLY
#include <string.h>

/* The test pattern: byte @i of stream @seed. */
static inline uint8_t t_pat(unsigned int seed, size_t i)
{
	return (uint8_t)(i * 131 + seed * 29 + (i >> 8) * 7 + 1);
}

static inline void t_fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = t_pat(seed, i);
}

/*
 * The image the ORDERED_STORE test leaves in [LAY_STORE, +LAY_STORE_LEN):
 * ops in program order, later ones overwrite earlier ones where they
 * overlap.  t_store_ops() builds the ops, t_store_image() the expected
 * bytes, so guest and host agree.
 */
#define T_STORE_NOPS		5
#define T_STORE_BARRIERS	3	/* with OMS_STORE_F_FLUSH */

struct t_store_spec {
	uint32_t off, len, class, seed;
	const char *text;		/* 8 bytes instead of a pattern */
};

static const struct t_store_spec t_store_spec[T_STORE_NOPS] = {
	{ 0, 256, OMS_STORE_WEAK, 2, NULL },
	{ 128, 256, OMS_STORE_WEAK, 3, NULL },
	{ 384, 8, OMS_STORE_STRONG, 0, "SEQ00001" },
	{ 512, 512, OMS_STORE_UNORDERED, 4, NULL },
	{ 256, 8, OMS_STORE_STRONG, 0, "STRONG!!" },
};

static inline void t_store_payload(int k, uint8_t *buf)
{
	const struct t_store_spec *s = &t_store_spec[k];

	if (s->text)
		memcpy(buf, s->text, 8);
	else
		t_fill(buf, s->len, s->seed);
}

static inline void t_store_image(uint8_t *img)
{
	uint8_t buf[1024];
	int k;

	memset(img, 0, LAY_STORE_LEN);
	for (k = 0; k < T_STORE_NOPS; k++) {
		t_store_payload(k, buf);
		memcpy(img + t_store_spec[k].off, buf, t_store_spec[k].len);
	}
}

#endif /* OMS_TEST_LAYOUT_ONLY */
#endif /* OMS_TEST_H */
