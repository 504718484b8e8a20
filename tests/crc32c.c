// SPDX-License-Identifier: MIT
/*
 * CRC32C (lib/util/crc32c.c): the standard check values, in every path
 * this machine has (the CPU's instruction, the table, and the one the
 * library picks); the instruction and the table agree on random bytes of
 * every length and alignment; and one flipped bit in any position moves
 * it.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "util/crc32c.h"

struct vector {
	const char *name;
	uint8_t bytes[48];
	size_t len;
	uint32_t crc;
};

/* "123456789" is the catalogue's check value; the 32-byte ones are RFC
 * 3720's (iSCSI), B.4. */
static void vectors(struct vector *v)
{
	memset(v, 0, 5 * sizeof(*v));
	v[0] = (struct vector){ "123456789", "123456789", 9, 0xE3069283u };
	v[1] = (struct vector){ "empty", "", 0, 0x00000000u };
	v[2] = (struct vector){ "32 zeros", { 0 }, 32, 0x8A9136AAu };
	v[3] = (struct vector){ "32 ones", { 0 }, 32, 0x62A8AB43u };
	memset(v[3].bytes, 0xff, 32);
	v[4] = (struct vector){ "0..31", { 0 }, 32, 0x46DD794Eu };
	for (int i = 0; i < 32; i++)
		v[4].bytes[i] = (uint8_t)i;
}

TEST(standard_vectors_in_every_path)
{
	struct vector v[5];
	int hw = 0;

	vectors(v);
	for (int i = 0; i < 5; i++) {
		uint32_t c;

		ASSERT_EQ(v[i].crc, oms_crc32c(v[i].bytes, v[i].len))
			TH_LOG("%s", v[i].name);
		ASSERT_EQ(v[i].crc, oms_crc32c_table(v[i].bytes, v[i].len))
			TH_LOG("%s (table)", v[i].name);
		if (!oms_crc32c_hw(v[i].bytes, v[i].len, &c)) {
			hw = 1;
			ASSERT_EQ(v[i].crc, c) TH_LOG("%s (instruction)",
						      v[i].name);
		}
	}
	TH_LOG("the CPU's instruction: %s", hw ? "used" : "absent");
}

TEST(instruction_and_table_agree_on_random_bytes)
{
	static uint8_t buf[1024 + 8];
	struct t_rng r;
	uint32_t c;

	if (oms_crc32c_hw(buf, 1, &c) == -EOPNOTSUPP)
		SKIP(return, "no CRC32C instruction on this CPU or build");
	t_rng_init(&r, t_seed(0xc5c));
	for (unsigned i = 0; i < 20000; i++) {
		unsigned align = t_rng_below(&r, 8);
		unsigned len = i < 200 ? i : t_rng_below(&r, 1025);
		uint8_t *p = buf + align;

		for (unsigned k = 0; k < len; k++)
			p[k] = (uint8_t)t_rng_next(&r);
		ASSERT_EQ(0, oms_crc32c_hw(p, len, &c));
		ASSERT_EQ(oms_crc32c_table(p, len), c)
			TH_LOG("length %u at +%u", len, align);
		ASSERT_EQ(c, oms_crc32c(p, len));
	}
}

/* A descriptor's 60 checked bytes: any one bit flipped changes the CRC
 * (a CRC of degree 32 catches every burst of up to 32 bits). */
TEST(one_flipped_bit_moves_it)
{
	uint8_t b[60];
	struct t_rng r;

	t_rng_init(&r, t_seed(0xf1));
	for (unsigned run = 0; run < 50; run++) {
		uint32_t good;

		for (unsigned k = 0; k < sizeof(b); k++)
			b[k] = (uint8_t)t_rng_next(&r);
		good = oms_crc32c(b, sizeof(b));
		for (unsigned bit = 0; bit < sizeof(b) * 8; bit++) {
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			ASSERT_NE(good, oms_crc32c(b, sizeof(b)));
			ASSERT_NE(good, oms_crc32c_table(b, sizeof(b)));
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
	}
}

TEST_HARNESS_MAIN
