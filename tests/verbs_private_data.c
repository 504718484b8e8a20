// SPDX-License-Identifier: MIT
/*
 * The verbs handshake's private data (lib/verbs/common/wire.c): what a
 * listener sends round-trips; every malformed reply a peer could send - short,
 * wrong magic, version or length, flags or reserved bits set, a zero,
 * oversized or wrapping region, unknown access bits, a bad line size or
 * node - is refused with -EPROTO and leaves the output untouched; random
 * bytes never get through unless every field is in range.  Version 3
 * (the destination agent's blocks): version-2 bytes carry no agent
 * fields; a hello's completion ring and a reply's agent block
 * round-trip, each field out of range is neither sent nor accepted, a
 * block the initiator did not ask for is refused.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms.h"
#include "agent/agent_desc.h"
#include "verbs/common/wire.h"

static const struct oms_vw_region good = {
	.addr = 0x7f0000001000ull,
	.len = 65536,
	.rkey = 0x1234,
	.access = OMS_ACCESS_ALL,
	.line = 64,
	.node = 1,
	.flush_addr = 0x55d0deadbee8ull,
	.flush_rkey = 0x4321,
};

/* Encode @r, let @edit change the bytes, decode @len of them. */
static int decode_edited(const struct oms_vw_region *r, size_t len,
			 void (*edit)(uint8_t *), struct oms_vw_region *out)
{
	uint8_t b[256];

	memset(b, 0, sizeof(b));
	oms_vw_region_encode(b, r);
	if (edit)
		edit(b);
	return oms_vw_region_decode(b, len, 0, out);
}

static void bad_magic(uint8_t *b) { b[0] ^= 1; }
static void old_version(uint8_t *b) { b[4] = 1; }	/* no flush word */
static void new_version(uint8_t *b) { b[4] = 3; }
static void bad_length(uint8_t *b) { b[6] = 40; }
static void v1_length(uint8_t *b) { b[6] = 48; }
static void long_length(uint8_t *b) { b[6] = 64; }
static void bad_flags(uint8_t *b) { b[11] = 0x80; }

/* A well-formed version-1 reply, as a listener before the flush word
 * sent it: 48 bytes, reserved word 0. */
static void as_v1(uint8_t *b)
{
	b[4] = 1;
	b[6] = 48;
	memset(b + 44, 0, 12);
}

TEST(region_round_trip)
{
	struct oms_vw_region out;
	uint8_t b[OMS_VW_REGION_LEN];

	ASSERT_EQ(OMS_VW_REGION_LEN, oms_vw_region_encode(b, &good));
	/* little-endian on the wire, whatever the host */
	EXPECT_EQ('O', b[0]);
	EXPECT_EQ('M', b[1]);
	EXPECT_EQ('S', b[2]);
	EXPECT_EQ('V', b[3]);
	EXPECT_EQ(0x00, b[16]);
	EXPECT_EQ(0x10, b[17]);
	ASSERT_EQ(0, oms_vw_region_decode(b, sizeof(b), 0, &out));
	EXPECT_EQ(good.addr, out.addr);
	EXPECT_EQ(good.len, out.len);
	EXPECT_EQ(good.rkey, out.rkey);
	EXPECT_EQ(good.access, out.access);
	EXPECT_EQ(good.line, out.line);
	EXPECT_EQ(good.node, out.node);
	EXPECT_EQ(good.flush_addr, out.flush_addr);
	EXPECT_EQ(good.flush_rkey, out.flush_rkey);
	EXPECT_EQ(0x21, b[44]);		/* flush rkey, little-endian */
	EXPECT_EQ(0xe8, b[48]);		/* flush address */
	EXPECT_EQ(0x55, b[53]);
}

TEST(region_padded_by_the_cm)
{
	struct oms_vw_region out;

	/* the CM hands up its whole private data field (196 bytes on IB) */
	ASSERT_EQ(0, decode_edited(&good, 196, NULL, &out));
	EXPECT_EQ(good.len, out.len);
}

TEST(region_short_replies)
{
	struct oms_vw_region out;

	memset(&out, 0x5a, sizeof(out));
	for (size_t len = 0; len < OMS_VW_REGION_LEN; len++)
		EXPECT_EQ(-EPROTO, decode_edited(&good, len, NULL, &out));
	EXPECT_EQ(-EPROTO, oms_vw_region_decode(NULL, 0, 0, &out));
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aull, out.addr);
	EXPECT_EQ(-EINVAL, oms_vw_region_decode(NULL, OMS_VW_REGION_LEN, 0, &out));
	EXPECT_EQ(-EINVAL, decode_edited(&good, OMS_VW_REGION_LEN, NULL, NULL));
}

TEST(region_bad_header)
{
	struct oms_vw_region out;

	memset(&out, 0x5a, sizeof(out));
	EXPECT_EQ(-EPROTO, decode_edited(&good, 196, bad_magic, &out));
	EXPECT_EQ(-EPROTO, decode_edited(&good, 196, old_version, &out));
	EXPECT_EQ(-EPROTO, decode_edited(&good, 196, new_version, &out));
	EXPECT_EQ(-EPROTO, decode_edited(&good, 196, bad_length, &out));
	EXPECT_EQ(-EPROTO, decode_edited(&good, 196, v1_length, &out));
	EXPECT_EQ(-EPROTO, decode_edited(&good, 196, long_length, &out));
	EXPECT_EQ(-EPROTO, decode_edited(&good, 196, bad_flags, &out));
	/* a listener without a flush word: refused, never a 0-byte flush */
	EXPECT_EQ(-EPROTO, decode_edited(&good, 48, as_v1, &out));
	EXPECT_EQ(-EPROTO, decode_edited(&good, 196, as_v1, &out));
	EXPECT_EQ(0x5a5a5a5au, out.rkey);
}

TEST(region_bad_fields)
{
	const size_t L = OMS_VW_REGION_LEN;
	struct oms_vw_region r, out;

	memset(&out, 0x5a, sizeof(out));
	r = good, r.len = 0;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.len = OMS_VW_MAX_REGION_LEN + 1;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.addr = UINT64_MAX - 100, r.len = 101;	/* wraps */
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.addr = UINT64_MAX - 100, r.len = 100;	/* ends at the top */
	EXPECT_EQ(0, decode_edited(&r, L, NULL, &out));
	memset(&out, 0x5a, sizeof(out));
	r = good, r.access = 0;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.access = OMS_ACCESS_ALL + 1;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.line = 48;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.line = 4;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.line = 8192;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.node = OMS_MAX_NODES;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aull, out.len);
}

TEST(region_bad_flush_word)
{
	const size_t L = OMS_VW_REGION_LEN;
	struct oms_vw_region r, out;

	memset(&out, 0x5a, sizeof(out));
	r = good, r.flush_addr = 0;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	for (int k = 1; k < 8; k++) {
		r = good, r.flush_addr = good.flush_addr + (uint64_t)k;
		EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	}
	r = good, r.flush_addr = UINT64_MAX - 7;	/* + 8 wraps to 0 */
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	r = good, r.flush_addr = UINT64_MAX;
	EXPECT_EQ(-EPROTO, decode_edited(&r, L, NULL, &out));
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aull, out.flush_addr);
	EXPECT_EQ(0x5a5a5a5au, out.flush_rkey);
	/* the last word that fits, the first one, any rkey */
	r = good, r.flush_addr = UINT64_MAX - 15;
	EXPECT_EQ(0, decode_edited(&r, L, NULL, &out));
	EXPECT_EQ(UINT64_MAX - 15, out.flush_addr);
	r = good, r.flush_addr = 8, r.flush_rkey = 0;
	EXPECT_EQ(0, decode_edited(&r, L, NULL, &out));
	EXPECT_EQ(8, out.flush_addr);
	EXPECT_EQ(0, out.flush_rkey);
}

TEST(hello)
{
	struct oms_vw_hello h = { 0 }, out;
	uint8_t b[64];

	memset(b, 0, sizeof(b));
	ASSERT_EQ(OMS_VW_HELLO_LEN, oms_vw_hello_encode(b, &h));
	EXPECT_EQ(0, oms_vw_hello_decode(b, sizeof(b), &out));
	for (size_t len = 0; len < OMS_VW_HELLO_LEN; len++)
		EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, len, &out));
	b[12] = 1;	/* reserved */
	EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, sizeof(b), &out));
	b[12] = 0;
	b[6] = OMS_VW_REGION_LEN;	/* a region is not a hello */
	EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, sizeof(b), &out));
	oms_vw_region_encode(b, &good);
	EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, sizeof(b), &out));
	EXPECT_EQ(-EINVAL, oms_vw_hello_decode(b, sizeof(b), NULL));
}

/* Random corruption of a good reply: whatever gets through is in range. */
TEST(region_random_bytes)
{
	struct t_rng r;
	unsigned long trials = t_trials(200000), accepted = 0, flipped = 0;

	t_rng_init(&r, t_seed(0x5eedu));
	for (unsigned long i = 0; i < trials; i++) {
		struct oms_vw_region out;
		uint8_t b[80];
		size_t len = 40 + t_rng_below(&r, 32);
		int nflip = 1 + (int)t_rng_below(&r, 3);

		oms_vw_region_encode(b, &good);
		memset(b + OMS_VW_REGION_LEN, 0, sizeof(b) - OMS_VW_REGION_LEN);
		for (int f = 0; f < nflip; f++)
			b[t_rng_below(&r, OMS_VW_REGION_LEN)] ^=
				(uint8_t)(1u << t_rng_below(&r, 8));
		if (oms_vw_region_decode(b, len, 0, &out))
			continue;
		accepted++;
		if (memcmp(&out, &good, sizeof(out)))
			flipped++;
		ASSERT_GE(len, OMS_VW_REGION_LEN);
		ASSERT_NE(0, out.len);
		ASSERT_LE(out.len, OMS_VW_MAX_REGION_LEN);
		ASSERT_LE(out.addr, UINT64_MAX - out.len);
		ASSERT_NE(0, out.access);
		ASSERT_EQ(0, out.access & ~OMS_ACCESS_ALL);
		ASSERT_EQ(0, out.line & (out.line - 1));
		ASSERT_LT(out.node, OMS_MAX_NODES);
		ASSERT_NE(0, out.flush_addr);
		ASSERT_EQ(0, out.flush_addr % 8);
		ASSERT_LE(out.flush_addr, UINT64_MAX - 8);
	}
	/* flips in addr/len/rkey are legal values: some must get through,
	 * and most corruption must not */
	ASSERT_GT(flipped, 0);
	ASSERT_LT(accepted, trials);
	TH_LOG("%lu of %lu corrupted replies accepted (fields in range)",
	       accepted, trials);
}

/* ---- version 3: the destination agent's blocks ---- */

static const struct oms_vw_hello hello_agent = {
	.flags = OMS_VW_F_AGENT,
	.cq = { .addr = 0x7f0000100000ull, .rkey = 0x99, .slots = 256 },
};

static struct oms_vw_region region_agent(void)
{
	struct oms_vw_region r = good;

	r.flags = OMS_VW_F_AGENT;
	r.agent = (struct oms_vw_agent){
		.ring_addr = 0x7f0000200000ull, .ring_rkey = 0x51,
		.ring_slots = 1024, .stage_addr = 0x7f0000300000ull,
		.stage_rkey = 0x52, .stage_slots = 64, .stage_len = 4096,
		.nstreams = 8, .window = 256,
	};
	return r;
}

TEST(v2_bytes_unchanged)
{
	/* what a version-2 peer got before version 3: the same bytes */
	static const uint8_t hello_v2[OMS_VW_HELLO_LEN] = {
		'O', 'M', 'S', 'V', 2, 0, 16, 0,
	};
	struct oms_vw_hello h = { 0 };
	struct oms_vw_region out;
	uint8_t b[OMS_VW_MAX_LEN];

	memset(b, 0xa5, sizeof(b));
	ASSERT_EQ(OMS_VW_HELLO_LEN, oms_vw_hello_encode(b, &h));
	ASSERT_EQ(0, memcmp(b, hello_v2, sizeof(hello_v2)));
	ASSERT_EQ(OMS_VW_REGION_LEN, oms_vw_region_encode(b, &good));
	EXPECT_EQ(2, b[4]);
	EXPECT_EQ(56, b[6]);
	EXPECT_EQ(0, b[8] | b[9] | b[10] | b[11]);
	/* a version-2 reply is good whether or not the agent was asked for:
	 * a listener without one answers so */
	ASSERT_EQ(0, oms_vw_region_decode(b, OMS_VW_REGION_LEN,
					  OMS_VW_F_AGENT, &out));
	EXPECT_EQ(0u, out.flags);
}

/* The version-3 layout wire.h writes down, byte for byte. */
TEST(v3_wire_layout_as_documented)
{
	struct oms_vw_region r = region_agent();
	uint8_t b[OMS_VW_MAX_LEN];

	memset(b, 0xa5, sizeof(b));
	ASSERT_EQ(OMS_VW_HELLO_AGENT_LEN, oms_vw_hello_encode(b, &hello_agent));
	EXPECT_EQ(0u, t_le_at(b + 12, 4));
	EXPECT_EQ(0x7f0000100000ull, t_le_at(b + 16, 8));
	EXPECT_EQ(0x99u, t_le_at(b + 24, 4));
	EXPECT_EQ(256u, t_le_at(b + 28, 4));
	memset(b, 0xa5, sizeof(b));
	ASSERT_EQ(OMS_VW_REGION_AGENT_LEN, oms_vw_region_encode(b, &r));
	EXPECT_EQ((uint64_t)OMS_ACCESS_ALL, t_le_at(b + 12, 4));
	EXPECT_EQ(0x7f0000001000ull, t_le_at(b + 16, 8));
	EXPECT_EQ(65536u, t_le_at(b + 24, 8));
	EXPECT_EQ(0x1234u, t_le_at(b + 32, 4));
	EXPECT_EQ(64u, t_le_at(b + 36, 4));
	EXPECT_EQ(1u, t_le_at(b + 40, 4));
	EXPECT_EQ(0x4321u, t_le_at(b + 44, 4));
	EXPECT_EQ(0x55d0deadbee8ull, t_le_at(b + 48, 8));
	EXPECT_EQ(0x7f0000200000ull, t_le_at(b + 56, 8));
	EXPECT_EQ(0x51u, t_le_at(b + 64, 4));
	EXPECT_EQ(1024u, t_le_at(b + 68, 4));
	EXPECT_EQ(0x7f0000300000ull, t_le_at(b + 72, 8));
	EXPECT_EQ(0x52u, t_le_at(b + 80, 4));
	EXPECT_EQ(64u, t_le_at(b + 84, 4));
	EXPECT_EQ(4096u, t_le_at(b + 88, 4));
	EXPECT_EQ(8u, t_le_at(b + 92, 2));
	EXPECT_EQ(256u, t_le_at(b + 94, 2));
}

TEST(v3_hello_round_trip_and_refusals)
{
	struct oms_vw_hello out, h;
	uint8_t b[OMS_VW_MAX_LEN];

	memset(b, 0, sizeof(b));
	ASSERT_EQ(OMS_VW_HELLO_AGENT_LEN, oms_vw_hello_encode(b, &hello_agent));
	EXPECT_EQ(3, b[4]);
	EXPECT_EQ(32, b[6]);
	ASSERT_EQ(0, oms_vw_hello_decode(b, OMS_VW_HELLO_AGENT_LEN, &out));
	EXPECT_EQ(0, memcmp(&out, &hello_agent, sizeof(out)));
	for (size_t len = 0; len < OMS_VW_HELLO_AGENT_LEN; len++)
		EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, len, &out));
	/* each bad completion ring: the encoder sends nothing, the decoder
	 * (given the same bytes) refuses */
	for (int k = 0; k < 6; k++) {
		uint8_t e[OMS_VW_MAX_LEN];

		h = hello_agent;
		switch (k) {
		case 0: h.cq.slots = 100; break;	/* not a power of two */
		case 1: h.cq.slots = 8; break;		/* too few */
		case 2: h.cq.slots = 8192; break;	/* too many */
		case 3: h.cq.addr = 0; break;
		case 4: h.cq.addr += 8; break;		/* not 16-aligned */
		case 5: h.cq.addr = UINT64_MAX - 4095; break;	/* wraps */
		}
		EXPECT_EQ(0u, oms_vw_hello_encode(e, &h)) TH_LOG("case %d", k);
		memcpy(e, b, sizeof(e));
		switch (k) {
		case 0: case 1: case 2:
			e[28] = (uint8_t)h.cq.slots;
			e[29] = (uint8_t)(h.cq.slots >> 8);
			break;
		default:
			for (int i = 0; i < 8; i++)
				e[16 + i] = (uint8_t)(h.cq.addr >> (8 * i));
		}
		memset(&out, 0x5a, sizeof(out));
		h = out;
		EXPECT_EQ(-EPROTO, oms_vw_hello_decode(e, sizeof(e), &out))
			TH_LOG("case %d", k);
		EXPECT_EQ(0, memcmp(&out, &h, sizeof(out)));
	}
	/* version 3 without its flag, version 2 with it, an unknown flag */
	b[8] = 0;
	EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, sizeof(b), &out));
	b[8] = 3;
	EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, sizeof(b), &out));
	oms_vw_hello_encode(b, &(struct oms_vw_hello){ 0 });
	b[8] = 1;
	EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, sizeof(b), &out));
	/* a version-2 hello carries no ring */
	h = (struct oms_vw_hello){ .cq = { .slots = 16 } };
	EXPECT_EQ(0u, oms_vw_hello_encode(b, &h));
	h = (struct oms_vw_hello){ .flags = 2 };
	EXPECT_EQ(0u, oms_vw_hello_encode(b, &h));
}

TEST(v3_region_round_trip_only_when_asked)
{
	struct oms_vw_region r = region_agent(), out;
	uint8_t b[OMS_VW_MAX_LEN];

	ASSERT_EQ(OMS_VW_REGION_AGENT_LEN, oms_vw_region_encode(b, &r));
	EXPECT_EQ(3, b[4]);
	EXPECT_EQ(96, b[6]);
	ASSERT_EQ(0, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT, &out));
	EXPECT_EQ(0, memcmp(&out, &r, sizeof(out)));
	/* an initiator that did not ask refuses the block */
	memset(&out, 0, sizeof(out));
	EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, sizeof(b), 0, &out));
	EXPECT_EQ(0u, out.len);
	for (size_t len = 0; len < OMS_VW_REGION_AGENT_LEN; len++)
		EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, len, OMS_VW_F_AGENT,
							&out));
	/* a version-2 length under version 3, and the other way round */
	b[6] = OMS_VW_REGION_LEN;
	EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT,
						&out));
}

/* The agent had no slot: a version-3 reply with no block, heard only by
 * a hello that asked; a block beside the flag, or both flags, refused. */
TEST(v3_region_agent_busy)
{
	struct oms_vw_region r = good, out;
	struct oms_vw_hello h = { 0 };
	uint8_t b[OMS_VW_MAX_LEN];

	r.flags = OMS_VW_F_AGENT_BUSY;
	ASSERT_EQ(OMS_VW_REGION_AGENT_LEN, oms_vw_region_encode(b, &r));
	EXPECT_EQ(3, b[4]);
	for (int i = 56; i < 96; i++) {
		EXPECT_EQ(0, b[i]);
	}
	ASSERT_EQ(0, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT, &out));
	EXPECT_EQ(0, memcmp(&out, &r, sizeof(out)));
	EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, sizeof(b), 0, &out));
	/* a block beside it */
	b[68] = 16;
	EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT,
						&out));
	/* both flags */
	ASSERT_EQ(OMS_VW_REGION_AGENT_LEN, oms_vw_region_encode(b, &r));
	b[8] |= OMS_VW_F_AGENT;
	EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT,
						&out));
	/* the encoder refuses both, and a block beside it */
	r.flags = OMS_VW_F_AGENT | OMS_VW_F_AGENT_BUSY;
	EXPECT_EQ(0u, oms_vw_region_encode(b, &r));
	r = region_agent();
	r.flags = OMS_VW_F_AGENT_BUSY;
	EXPECT_EQ(0u, oms_vw_region_encode(b, &r));
	/* a hello never carries it */
	h.flags = OMS_VW_F_AGENT_BUSY;
	EXPECT_EQ(0u, oms_vw_hello_encode(b, &h));
}

/*
 * The descriptor format's offer: 8 bytes after a version-3 hello, whose
 * first 32 bytes are today's hello, byte for byte (a listener that does
 * not know the offer decodes those and ignores the rest as padding).
 */
TEST(v3_hello_offer_after_the_message)
{
	struct oms_vw_hello h = hello_agent, out;
	uint8_t plain[OMS_VW_MAX_LEN], b[OMS_VW_MAX_LEN];

	memset(plain, 0, sizeof(plain));
	memset(b, 0, sizeof(b));
	ASSERT_EQ(OMS_VW_HELLO_AGENT_LEN, oms_vw_hello_encode(plain, &h));
	h.flags |= OMS_VW_F_AGENT_CRC32C;
	ASSERT_EQ(OMS_VW_HELLO_AGENT_LEN + OMS_VW_OFFER_LEN,
		  oms_vw_hello_encode(b, &h));
	ASSERT_EQ(0, memcmp(b, plain, OMS_VW_HELLO_AGENT_LEN));
	EXPECT_EQ('O', b[32]);
	EXPECT_EQ('M', b[33]);
	EXPECT_EQ('D', b[34]);
	EXPECT_EQ('F', b[35]);
	EXPECT_EQ(OMS_VW_F_AGENT_CRC32C, b[36]);
	EXPECT_EQ(0, b[37] | b[38] | b[39]);
	ASSERT_EQ(0, oms_vw_hello_decode(b, sizeof(b), &out));
	EXPECT_EQ(h.flags, out.flags);
	EXPECT_EQ((uint32_t)OMS_AD_FMT_CRC32C, oms_vw_desc_fmt(out.flags));
	/* cut at the message: today's hello, no offer */
	ASSERT_EQ(0, oms_vw_hello_decode(b, OMS_VW_HELLO_AGENT_LEN, &out));
	EXPECT_EQ(OMS_VW_F_AGENT, out.flags);
	EXPECT_EQ((uint32_t)OMS_AD_FMT_FNV1A, oms_vw_desc_fmt(out.flags));
	/* the CM's zero padding after an old requester's hello: no offer */
	ASSERT_EQ(0, oms_vw_hello_decode(plain, sizeof(plain), &out));
	EXPECT_EQ(OMS_VW_F_AGENT, out.flags);
	/* no magic, no offer, whatever follows */
	memcpy(plain + 36, b + 36, 4);
	ASSERT_EQ(0, oms_vw_hello_decode(plain, sizeof(plain), &out));
	EXPECT_EQ(OMS_VW_F_AGENT, out.flags);
	/* bits of formats this side does not know are ignored */
	b[36] |= 0xf8;
	b[39] = 0x80;
	ASSERT_EQ(0, oms_vw_hello_decode(b, sizeof(b), &out));
	EXPECT_EQ(h.flags, out.flags);
	b[36] = 0x08;
	ASSERT_EQ(0, oms_vw_hello_decode(b, sizeof(b), &out));
	EXPECT_EQ(OMS_VW_F_AGENT, out.flags);
	/* an offer without the agent, or in the header's flags: refused */
	h.flags = OMS_VW_F_AGENT_CRC32C;
	h.cq = (struct oms_vw_cq){ 0 };
	EXPECT_EQ(0u, oms_vw_hello_encode(b, &h));
	h = hello_agent;
	ASSERT_EQ(OMS_VW_HELLO_AGENT_LEN, oms_vw_hello_encode(b, &h));
	b[8] |= OMS_VW_F_AGENT_CRC32C;
	EXPECT_EQ(-EPROTO, oms_vw_hello_decode(b, sizeof(b), &out));
}

/* A region agrees to CRC32C only for a hello that offered it. */
TEST(v3_region_crc32c_only_when_offered)
{
	struct oms_vw_region r = region_agent(), out;
	uint8_t b[OMS_VW_MAX_LEN];

	r.flags |= OMS_VW_F_AGENT_CRC32C;
	ASSERT_EQ(OMS_VW_REGION_AGENT_LEN, oms_vw_region_encode(b, &r));
	EXPECT_EQ(OMS_VW_F_AGENT | OMS_VW_F_AGENT_CRC32C, b[8]);
	ASSERT_EQ(0, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT |
					  OMS_VW_F_AGENT_CRC32C, &out));
	EXPECT_EQ(0, memcmp(&out, &r, sizeof(out)));
	EXPECT_EQ((uint32_t)OMS_AD_FMT_CRC32C, oms_vw_desc_fmt(out.flags));
	/* a requester that did not offer it (today's) refuses it */
	EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT,
						&out));
	/* a listener that does not know it answers without: FNV-1a */
	r = region_agent();
	ASSERT_EQ(OMS_VW_REGION_AGENT_LEN, oms_vw_region_encode(b, &r));
	ASSERT_EQ(0, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT |
					  OMS_VW_F_AGENT_CRC32C, &out));
	EXPECT_EQ((uint32_t)OMS_AD_FMT_FNV1A, oms_vw_desc_fmt(out.flags));
	/* not beside "busy", nor without the agent */
	r = good;
	r.flags = OMS_VW_F_AGENT_BUSY | OMS_VW_F_AGENT_CRC32C;
	EXPECT_EQ(0u, oms_vw_region_encode(b, &r));
	r.flags = OMS_VW_F_AGENT_CRC32C;
	EXPECT_EQ(0u, oms_vw_region_encode(b, &r));
	r.flags = OMS_VW_F_AGENT_BUSY;
	ASSERT_EQ(OMS_VW_REGION_AGENT_LEN, oms_vw_region_encode(b, &r));
	b[8] |= OMS_VW_F_AGENT_CRC32C;
	EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, sizeof(b), OMS_VW_F_AGENT |
						OMS_VW_F_AGENT_CRC32C, &out));
}

TEST(v3_region_each_agent_field_refused)
{
	for (int k = 0; k < 14; k++) {
		struct oms_vw_region r = region_agent(), out, ok;
		struct oms_vw_agent *a = &r.agent;
		uint8_t b[OMS_VW_MAX_LEN];

		switch (k) {
		case 0: a->ring_slots = 12; break;
		case 1: a->ring_slots = 8; break;
		case 2: a->ring_addr = 0; break;
		case 3: a->ring_addr += 32; break;	/* not 64-aligned */
		case 4: a->ring_addr = UINT64_MAX - 63; break;
		case 5: a->stage_slots = 0; break;
		case 6: a->stage_slots = 4097; break;
		case 7: a->stage_len = 100; break;	/* not a multiple */
		case 8: a->stage_len = (1u << 20) + 64; break;
		case 9: a->stage_addr = (UINT64_MAX - 4096ull * 63) & ~63ull;
			break;					/* wraps */
		case 10: a->nstreams = 0; break;
		case 11: a->nstreams = 65; break;
		case 12: a->window = 3; break;
		case 13: a->window = 512; break;
		}
		EXPECT_EQ(0u, oms_vw_region_encode(b, &r)) TH_LOG("field %d", k);
		/* the same field forged into good bytes: refused */
		ok = region_agent();
		ASSERT_EQ(OMS_VW_REGION_AGENT_LEN, oms_vw_region_encode(b, &ok));
		for (int i = 0; i < 8; i++) {
			b[56 + i] = (uint8_t)(a->ring_addr >> (8 * i));
			b[72 + i] = (uint8_t)(a->stage_addr >> (8 * i));
		}
		for (int i = 0; i < 4; i++) {
			b[68 + i] = (uint8_t)(a->ring_slots >> (8 * i));
			b[84 + i] = (uint8_t)(a->stage_slots >> (8 * i));
			b[88 + i] = (uint8_t)(a->stage_len >> (8 * i));
		}
		b[92] = (uint8_t)a->nstreams;
		b[93] = (uint8_t)(a->nstreams >> 8);
		b[94] = (uint8_t)a->window;
		b[95] = (uint8_t)(a->window >> 8);
		memset(&out, 0x5a, sizeof(out));
		ok = out;
		EXPECT_EQ(-EPROTO, oms_vw_region_decode(b, sizeof(b),
							OMS_VW_F_AGENT, &out))
			TH_LOG("field %d", k);
		EXPECT_EQ(0, memcmp(&out, &ok, sizeof(out)));
	}
}

TEST_HARNESS_MAIN
