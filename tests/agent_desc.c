// SPDX-License-Identifier: MIT
/*
 * The destination agent's descriptors (lib/agent/agent_desc.c):
 * every op round-trips; every field a requester could forge - op, flags,
 * a flag its op does not take, reserved bytes, lengths, wrapping ranges,
 * a misaligned atomic, landing fields on a put, a torn descriptor - is
 * refused by the decoder with -EPROTO (and by the encoder with -EINVAL)
 * with the output untouched; validation refuses another connection's
 * stream or staging slot, a wrong key or right and a range past the
 * region, each with its own error, and leaves sequence numbers to the
 * destination stream machine (tests/engine_dest_stream).
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.  The check
 * code is computed here independently (tests/agent_seal.h: over bytes
 * 0..59, as the layout in agent_desc.h says), so forged fields reach the
 * field rules.  Both formats' checks refuse a descriptor with any one bit
 * flipped, and neither accepts the other's.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "agent/agent_desc.h"

#include "agent_seal.h"

/* The format of every test but those of both formats: the default one. */
#define FMT OMS_AD_FMT_CRC32C

static const struct oms_ad_desc put_ok = {
	.op = OMS_AD_PUT, .flags = OMS_AD_F_SEQ | OMS_AD_F_RELEASE,
	.stream = 1, .seq = 7, .key = 0x11, .len = 256, .off = 4096,
	.stage = 3, .tag = 99,
};
static const struct oms_ad_desc get_ok = {
	.op = OMS_AD_GET, .flags = OMS_AD_F_ACQUIRE | OMS_AD_F_RESP_ORDERED,
	.stream = 0, .key = 0x22, .len = 64, .off = 0,
	.lrkey = 0x77, .laddr = 0x7f0000002000ull, .tag = 5,
};
static const struct oms_ad_desc cas_ok = {
	.op = OMS_AD_CAS, .flags = OMS_AD_F_SEQ, .stream = 1, .seq = 8,
	.key = 0x33, .len = 8, .off = 16, .lrkey = 0x77,
	.laddr = 0x7f0000003000ull, .a1 = 1, .a2 = 2, .tag = 6,
};
static const struct oms_ad_desc fadd_ok = {
	.op = OMS_AD_FADD, .key = 0x33, .len = 8, .off = 24, .lrkey = 0x77,
	.laddr = 0x7f0000003008ull, .a1 = 5,
};
static const struct oms_ad_desc nop_ok = {
	.op = OMS_AD_NOP, .flags = OMS_AD_F_SEQ | OMS_AD_F_CANCEL,
	.stream = 1, .seq = 6,
};

static int same(const struct oms_ad_desc *a, const struct oms_ad_desc *b)
{
	return a->op == b->op && a->flags == b->flags &&
	       a->stream == b->stream && a->seq == b->seq &&
	       a->key == b->key && a->len == b->len && a->off == b->off &&
	       a->stage == b->stage && a->lrkey == b->lrkey &&
	       a->laddr == b->laddr && a->a1 == b->a1 && a->a2 == b->a2 &&
	       a->tag == b->tag;
}

/* The layout agent_desc.h writes down, byte for byte: a requester built
 * from the documentation interoperates. */
TEST(wire_layout_as_documented)
{
	uint8_t b[OMS_AD_LEN], sealed[OMS_AD_LEN];

	memset(b, 0xa5, sizeof(b));
	ASSERT_EQ(0, oms_ad_encode(b, &cas_ok, FMT));
	EXPECT_EQ(OMS_AD_CAS, b[0]);
	EXPECT_EQ(OMS_AD_F_SEQ, b[1]);
	EXPECT_EQ(1u, t_le_at(b + 2, 2));
	EXPECT_EQ(8u, t_le_at(b + 4, 2));
	EXPECT_EQ(0u, t_le_at(b + 6, 2));
	EXPECT_EQ(0x33u, t_le_at(b + 8, 4));
	EXPECT_EQ(8u, t_le_at(b + 12, 4));
	EXPECT_EQ(16u, t_le_at(b + 16, 8));
	EXPECT_EQ(0u, t_le_at(b + 24, 4));
	EXPECT_EQ(0x77u, t_le_at(b + 28, 4));
	EXPECT_EQ(0x7f0000003000ull, t_le_at(b + 32, 8));
	EXPECT_EQ(1u, t_le_at(b + 40, 8));
	EXPECT_EQ(2u, t_le_at(b + 48, 8));
	EXPECT_EQ(6u, t_le_at(b + 56, 4));
	memcpy(sealed, b, sizeof(b));
	t_ad_seal(sealed);
	EXPECT_EQ(0, memcmp(sealed, b, sizeof(b)));
}

TEST(every_op_round_trips)
{
	const struct oms_ad_desc *all[] = { &put_ok, &get_ok, &cas_ok,
					    &fadd_ok, &nop_ok };

	for (unsigned i = 0; i < 5; i++) {
		uint8_t b[OMS_AD_LEN];
		struct oms_ad_desc d;

		memset(&d, 0, sizeof(d));
		ASSERT_EQ(0, oms_ad_encode(b, all[i], FMT));
		ASSERT_EQ(0, oms_ad_decode(b, &d, FMT));
		ASSERT_TRUE(same(all[i], &d)) TH_LOG("op %u", all[i]->op);
	}
}

/* One byte of a good descriptor changed, resealed: the field rules alone
 * must refuse it, and leave the output as it was. */
static int forged(const struct oms_ad_desc *good, unsigned at, uint8_t v,
		  int reseal)
{
	uint8_t b[OMS_AD_LEN];
	struct oms_ad_desc d, before;
	int r;

	oms_ad_encode(b, good, FMT);
	b[at] = v;
	if (reseal)
		t_ad_seal(b);
	memset(&d, 0xa5, sizeof(d));
	before = d;
	r = oms_ad_decode(b, &d, FMT);
	if (r && memcmp(&d, &before, sizeof(d)))
		return -1000;	/* refused, but the output changed */
	return r;
}

TEST(forged_fields_refused_output_untouched)
{
	struct oms_ad_desc g = get_ok, wide = put_ok;
	uint8_t b[OMS_AD_LEN];

	/* op: unknown */
	ASSERT_EQ(-EPROTO, forged(&put_ok, 0, 0, 1));
	ASSERT_EQ(-EPROTO, forged(&put_ok, 0, 6, 1));
	/* flags: unknown, and ones the op does not take */
	ASSERT_EQ(-EPROTO, forged(&put_ok, 1, 0x20, 1));
	ASSERT_EQ(-EPROTO, forged(&put_ok, 1, OMS_AD_F_ACQUIRE, 1));
	ASSERT_EQ(-EPROTO, forged(&get_ok, 1, OMS_AD_F_RELEASE, 1));
	ASSERT_EQ(-EPROTO, forged(&cas_ok, 1, OMS_AD_F_SEQ | OMS_AD_F_ACQUIRE, 1));
	ASSERT_EQ(-EPROTO, forged(&nop_ok, 1, OMS_AD_F_CANCEL, 1)); /* no SEQ */
	/* a sequence number without OMS_AD_F_SEQ */
	ASSERT_EQ(-EPROTO, forged(&get_ok, 4, 1, 1));
	/* reserved */
	ASSERT_EQ(-EPROTO, forged(&put_ok, 6, 1, 1));
	ASSERT_EQ(-EPROTO, forged(&put_ok, 7, 0x80, 1));
	/* lengths: 0, past OMS_AD_MAX_LEN, an atomic not 8, a NOP not 0 */
	ASSERT_EQ(-EPROTO, forged(&get_ok, 12, 0, 1));
	ASSERT_EQ(-EPROTO, forged(&put_ok, 14, 0x11, 1));
	ASSERT_EQ(-EPROTO, forged(&cas_ok, 12, 16, 1));
	ASSERT_EQ(-EPROTO, forged(&nop_ok, 12, 1, 1));
	/* a NOP with a key or an offset */
	ASSERT_EQ(-EPROTO, forged(&nop_ok, 8, 1, 1));
	ASSERT_EQ(-EPROTO, forged(&nop_ok, 16, 1, 1));
	/* a misaligned atomic; an offset range that wraps */
	ASSERT_EQ(-EPROTO, forged(&fadd_ok, 16, 25, 1));
	for (unsigned at = 16; at < 24; at++)	/* off = 2^64 - 1 */
		wide.off |= (uint64_t)0xff << (8 * (at - 16));
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, &wide, FMT));
	wide = put_ok;
	ASSERT_EQ(0, oms_ad_encode(b, &wide, FMT));
	memset(b + 16, 0xff, 8);
	t_ad_seal(b);
	ASSERT_EQ(-EPROTO, oms_ad_decode(b, &wide, FMT));
	/* a staging slot off a put; landing fields on a put, none on a get */
	ASSERT_EQ(-EPROTO, forged(&get_ok, 24, 1, 1));
	ASSERT_EQ(-EPROTO, forged(&put_ok, 28, 1, 1));
	ASSERT_EQ(-EPROTO, forged(&put_ok, 32, 1, 1));
	g.laddr = 0;
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, &g, FMT));
	g.laddr = UINT64_MAX - 8;	/* + 64 wraps */
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, &g, FMT));
	ASSERT_EQ(0, oms_ad_encode(b, &get_ok, FMT));	/* a get landing at 0 */
	memset(b + 32, 0, 8);
	t_ad_seal(b);
	ASSERT_EQ(-EPROTO, oms_ad_decode(b, &wide, FMT));
	/* operands an op does not use */
	ASSERT_EQ(-EPROTO, forged(&get_ok, 40, 1, 1));
	ASSERT_EQ(-EPROTO, forged(&fadd_ok, 48, 1, 1));
	/* the tag is the requester's: any value */
	ASSERT_EQ(0, forged(&put_ok, 57, 0xee, 1));
}

TEST(torn_descriptor_refused_at_every_byte)
{
	const struct oms_ad_desc *all[] = { &put_ok, &get_ok, &nop_ok };

	for (unsigned k = 0; k < 3; k++)
		for (unsigned at = 0; at < OMS_AD_LEN; at++) {
			uint8_t b[OMS_AD_LEN];

			oms_ad_encode(b, all[k], FMT);
			ASSERT_EQ(-EPROTO, forged(all[k], at, (uint8_t)(b[at] ^ 0x40), 0))
				TH_LOG("op %u byte %u", all[k]->op, at);
		}
}

/* Any one bit of the 64 bytes flipped, in either format, fails. */
TEST(one_flipped_bit_fails_in_both_formats)
{
	const struct oms_ad_desc *all[] = { &put_ok, &get_ok, &cas_ok,
					    &fadd_ok, &nop_ok };
	const enum oms_ad_fmt fmts[] = { OMS_AD_FMT_CRC32C, OMS_AD_FMT_FNV1A };

	for (unsigned f = 0; f < 2; f++)
		for (unsigned k = 0; k < 5; k++)
			for (unsigned bit = 0; bit < OMS_AD_LEN * 8; bit++) {
				uint8_t b[OMS_AD_LEN];
				struct oms_ad_desc d;

				ASSERT_EQ(0, oms_ad_encode(b, all[k], fmts[f]));
				ASSERT_EQ(0, oms_ad_decode(b, &d, fmts[f]));
				b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
				ASSERT_EQ(-EPROTO, oms_ad_decode(b, &d, fmts[f]))
					TH_LOG("format %u op %u bit %u", fmts[f],
					       all[k]->op, bit);
			}
}

/* The check is the layout's (tests/agent_seal.h), and a descriptor of one
 * format does not pass as the other's: the two ends must agree. */
TEST(formats_check_as_written_and_do_not_mix)
{
	const struct oms_ad_desc *all[] = { &put_ok, &get_ok, &cas_ok,
					    &fadd_ok, &nop_ok };

	for (unsigned k = 0; k < 5; k++) {
		uint8_t crc[OMS_AD_LEN], fnv[OMS_AD_LEN], b[OMS_AD_LEN];
		struct oms_ad_desc d;

		ASSERT_EQ(0, oms_ad_encode(crc, all[k], OMS_AD_FMT_CRC32C));
		ASSERT_EQ(0, oms_ad_encode(fnv, all[k], OMS_AD_FMT_FNV1A));
		ASSERT_EQ(0, memcmp(crc, fnv, 60));	/* one layout */
		memcpy(b, crc, sizeof(b));
		t_ad_seal_as(b, 1);
		ASSERT_EQ(0, memcmp(b, crc, sizeof(b)));
		t_ad_seal_as(b, 0);
		ASSERT_EQ(0, memcmp(b, fnv, sizeof(b)));
		ASSERT_EQ(-EPROTO, oms_ad_decode(crc, &d, OMS_AD_FMT_FNV1A));
		ASSERT_EQ(-EPROTO, oms_ad_decode(fnv, &d, OMS_AD_FMT_CRC32C));
	}
}

TEST(unknown_format_refused)
{
	uint8_t b[OMS_AD_LEN];
	struct oms_ad_desc d;

	memset(b, 0x5a, sizeof(b));
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, &put_ok, 0));
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, &put_ok, 3));
	ASSERT_EQ(0x5a, b[0]);
	ASSERT_EQ(0, oms_ad_encode(b, &put_ok, FMT));
	ASSERT_EQ(-EINVAL, oms_ad_decode(b, &d, 0));
	ASSERT_EQ(-EINVAL, oms_ad_decode(b, &d, 3));
}

TEST(null_and_encoder_refusals)
{
	uint8_t b[OMS_AD_LEN];
	struct oms_ad_desc d = put_ok;

	ASSERT_EQ(-EINVAL, oms_ad_encode(NULL, &d, FMT));
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, NULL, FMT));
	ASSERT_EQ(-EINVAL, oms_ad_decode(NULL, &d, FMT));
	ASSERT_EQ(0, oms_ad_encode(b, &d, FMT));
	ASSERT_EQ(-EINVAL, oms_ad_decode(b, NULL, FMT));
	d.op = 9;
	memset(b, 0x5a, sizeof(b));
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, &d, FMT));
	ASSERT_EQ(0x5a, b[0]);	/* a refused encode writes nothing */
}

/* Good descriptors with one to three bytes set at random, sealed: whatever
 * decodes re-encodes to the same bytes (one encoding per descriptor). */
TEST(mutated_sealed_bytes_decode_canonically)
{
	const struct oms_ad_desc *all[] = { &put_ok, &get_ok, &cas_ok,
					    &fadd_ok, &nop_ok };
	struct t_rng r;
	unsigned accepted = 0, runs = 200000;

	t_rng_init(&r, t_seed(0xad));
	for (unsigned i = 0; i < runs; i++) {
		uint8_t b[OMS_AD_LEN], again[OMS_AD_LEN];
		struct oms_ad_desc d;
		unsigned n = 1 + t_rng_below(&r, 3);

		oms_ad_encode(b, all[t_rng_below(&r, 5)], FMT);
		for (unsigned k = 0; k < n; k++)
			b[t_rng_below(&r, 60)] = (uint8_t)t_rng_below(&r, 256);
		t_ad_seal(b);
		if (oms_ad_decode(b, &d, FMT))
			continue;
		accepted++;
		ASSERT_EQ(0, oms_ad_encode(again, &d, FMT));
		ASSERT_EQ(0, memcmp(b, again, sizeof(b)));
	}
	TH_LOG("%u of %u mutated descriptors were still well formed",
	       accepted, runs);
	/* both sides of the rules were exercised */
	ASSERT_GT(accepted, runs / 20);
	ASSERT_LT(accepted, runs - runs / 20);
}

static const struct oms_ad_region regions[] = {
	{ .key = 0x11, .access = OMS_ACCESS_REMOTE_WRITE, .len = 8192 },
	{ .key = 0x22, .access = OMS_ACCESS_REMOTE_READ, .len = 64 },
	{ .key = 0x33, .access = OMS_ACCESS_ALL, .len = 32 },
};
static const struct oms_ad_conn conn = {
	.regions = regions, .nregions = 3, .stage_slots = 4,
	.stage_len = 512, .nstreams = 2,
};

static int check(const struct oms_ad_desc *d)
{
	const struct oms_ad_region *reg = (const void *)1;
	int r = oms_ad_validate(d, &conn, &reg);

	if (r && reg != (const void *)1)
		return -1000;	/* refused, but *reg was written */
	return r;
}

TEST(validate_each_refusal)
{
	struct oms_ad_conn c;
	struct oms_ad_desc d;
	const struct oms_ad_region *reg = NULL;

	ASSERT_EQ(0, oms_ad_validate(&put_ok, &conn, &reg));
	ASSERT_EQ(&regions[0], reg);
	ASSERT_EQ(0, oms_ad_validate(&get_ok, &conn, &reg));
	ASSERT_EQ(&regions[1], reg);
	ASSERT_EQ(0, oms_ad_validate(&cas_ok, &conn, &reg));
	ASSERT_EQ(0, oms_ad_validate(&nop_ok, &conn, &reg));
	ASSERT_EQ(NULL, reg);
	/* another connection's stream or staging slot; a put past a slot */
	d = put_ok, d.stream = 2;
	ASSERT_EQ(-EINVAL, check(&d));
	d = put_ok, d.stage = 4;
	ASSERT_EQ(-EINVAL, check(&d));
	d = put_ok, d.len = 513;
	ASSERT_EQ(-EINVAL, check(&d));
	/* a key nobody was given; a region without the op's right */
	d = get_ok, d.key = 0x44;
	ASSERT_EQ(-EACCES, check(&d));
	d = get_ok, d.key = 0x11;		/* write-only region */
	ASSERT_EQ(-EACCES, check(&d));
	d = put_ok, d.key = 0x22, d.len = 8;	/* read-only region */
	ASSERT_EQ(-EACCES, check(&d));
	d = fadd_ok, d.key = 0x11;		/* no atomic right */
	ASSERT_EQ(-EACCES, check(&d));
	/* past the region's end, by one byte and by the offset alone */
	d = get_ok, d.off = 1;
	ASSERT_EQ(-ERANGE, check(&d));
	d = fadd_ok, d.off = 32;
	ASSERT_EQ(-ERANGE, check(&d));
	/* any number: its place in the stream is not validation's */
	d = nop_ok, d.seq = 8;
	ASSERT_EQ(0, check(&d));
	d.seq = (uint16_t)(100 + 0x8000);
	ASSERT_EQ(0, check(&d));
	/* a bad connection */
	c = conn;
	ASSERT_EQ(-EINVAL, oms_ad_validate(&put_ok, NULL, NULL));
	ASSERT_EQ(-EINVAL, oms_ad_validate(NULL, &c, NULL));
	c.nstreams = 0;
	ASSERT_EQ(-EINVAL, oms_ad_validate(&put_ok, &c, NULL));
	c = conn, c.regions = NULL;
	ASSERT_EQ(-EINVAL, oms_ad_validate(&put_ok, &c, NULL));
}

TEST(resume_flag_rules)
{
	struct oms_ad_desc r = {
		.op = OMS_AD_NOP, .flags = OMS_AD_F_SEQ | OMS_AD_F_RESUME,
		.stream = 1, .seq = 0x9000, .tag = 3,
	}, d = r;
	uint8_t b[OMS_AD_LEN];

	/* a resume names any number */
	ASSERT_EQ(0, oms_ad_encode(b, &r, FMT));
	ASSERT_EQ(0, oms_ad_decode(b, &d, FMT));
	ASSERT_EQ(0, oms_ad_validate(&d, &conn, NULL));
	/* on a NOP only, never with CANCEL, never without SEQ */
	d = r, d.flags |= OMS_AD_F_CANCEL;
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, &d, FMT));
	d = r, d.flags = OMS_AD_F_RESUME;
	ASSERT_EQ(-EINVAL, oms_ad_encode(b, &d, FMT));
	ASSERT_EQ(-EPROTO, forged(&put_ok, 1,
				  OMS_AD_F_SEQ | OMS_AD_F_RESUME, 1));
	ASSERT_EQ(-EPROTO, forged(&r, 1, OMS_AD_F_SEQ | OMS_AD_F_RESUME |
				  OMS_AD_F_CANCEL, 1));
	/* another connection's stream is still refused */
	d = r, d.stream = 2;
	ASSERT_EQ(-EINVAL, oms_ad_validate(&d, &conn, NULL));
}

TEST(answer_record)
{
	struct oms_ad_answer a = { .tag = 0xabcdef01u, .status = -EACCES,
				   .old = 0x1122334455667788ull }, out;
	uint8_t b[OMS_AD_ANSWER_LEN];

	ASSERT_EQ(0, oms_ad_answer_encode(b, &a));
	EXPECT_EQ(0x01, b[0]);
	EXPECT_EQ(0x88, b[8]);
	ASSERT_EQ(0, oms_ad_answer_decode(b, &out));
	EXPECT_EQ(a.tag, out.tag);
	EXPECT_EQ(a.status, out.status);
	EXPECT_EQ(a.old, out.old);
	a.status = 1;
	EXPECT_EQ(-EINVAL, oms_ad_answer_encode(b, &a));
	a.status = -4096;
	EXPECT_EQ(-EINVAL, oms_ad_answer_encode(b, &a));
	/* a status that is not an errno, off the wire: output untouched */
	memset(&out, 0, sizeof(out));
	b[4] = 7;
	b[5] = b[6] = b[7] = 0;
	EXPECT_EQ(-EPROTO, oms_ad_answer_decode(b, &out));
	EXPECT_EQ(0u, out.tag);
	EXPECT_EQ(-EINVAL, oms_ad_answer_decode(NULL, &out));
}

TEST_HARNESS_MAIN
