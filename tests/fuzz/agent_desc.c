// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the destination agent's descriptors
 * (lib/agent/agent_desc.c): what a requester writes into the agent's ring
 * is attacker-controlled bytes.
 *
 * Input: byte 0 = mode (bit 0: seal the descriptor, so the fuzzer reaches
 * the field rules past the check code; bits 1-2: regions given, 0..3;
 * bit 3: the descriptor's format is FNV-1a, else CRC32C);
 * bytes 1..64 = the descriptor; then, if present, bytes that vary the
 * connection (staging slots, streams, the regions' keys, rights and
 * lengths).  Nine of those bytes are passed over - the eight before the
 * staging slots and the one after the streams: the corpus's inputs carry
 * sequence-number state there, which validation does not read (a
 * number's place in its stream is the engine's, dest_stream.h).
 *
 * Invariants (abort on violation): a descriptor that decodes re-encodes to
 * the same 64 bytes; one that validates addresses only what the
 * connection was given - a region with its key and the op's right, a range
 * inside it, a staging slot of the connection that holds the payload,
 * a stream of the connection; a refused decode or
 * validation leaves its outputs untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oms.h"
#include "agent/agent_desc.h"
#include "agent_seal.h"

#define check(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "agent_desc: line %d: %s\n", __LINE__, \
			#cond); \
		abort(); \
	} \
} while (0)

/* The next input byte after the descriptor, or @dflt when none is left. */
static uint8_t next_byte(const uint8_t **p, const uint8_t *end, uint8_t dflt)
{
	return *p < end ? *(*p)++ : dflt;
}

static uint32_t right_of(uint8_t op)
{
	return op == OMS_AD_GET ? OMS_ACCESS_REMOTE_READ :
	       op == OMS_AD_PUT ? OMS_ACCESS_REMOTE_WRITE :
				  OMS_ACCESS_REMOTE_ATOMIC;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p, *end = data + size;
	uint8_t b[OMS_AD_LEN], again[OMS_AD_LEN];
	struct oms_ad_region regs[3];
	struct oms_ad_conn c;
	struct oms_ad_desc d, untouched;
	const struct oms_ad_region *reg = (const void *)1;
	enum oms_ad_fmt fmt;
	int r;

	if (size < 1 + OMS_AD_LEN)
		return 0;
	fmt = data[0] & 8 ? OMS_AD_FMT_FNV1A : OMS_AD_FMT_CRC32C;
	memcpy(b, data + 1, OMS_AD_LEN);
	if (data[0] & 1)
		t_ad_seal_as(b, fmt == OMS_AD_FMT_CRC32C);
	memset(&d, 0x5c, sizeof(d));
	untouched = d;
	if (oms_ad_decode(b, &d, fmt)) {
		check(!memcmp(&d, &untouched, sizeof(d)));
		return 0;
	}
	check(oms_ad_encode(again, &d, fmt) == 0);
	check(!memcmp(b, again, sizeof(b)));

	/* one input byte per statement: the order fields take them in is
	 * the order written here (the corpus relies on it) */
	p = data + 1 + OMS_AD_LEN;
	for (int i = 0; i < 8; i++)
		(void)next_byte(&p, end, 0);
	c = (struct oms_ad_conn){ .regions = regs,
				  .nregions = (data[0] >> 1) & 3u };
	c.stage_slots = next_byte(&p, end, 4) % 8u;
	c.stage_len = 64u << (next_byte(&p, end, 3) % 8u);
	c.nstreams = (uint16_t)(1 + next_byte(&p, end, 1) % 4u);
	(void)next_byte(&p, end, 15);
	for (int i = 0; i < 3; i++) {
		regs[i].key = next_byte(&p, end, (uint8_t)(0x11 * (i + 1)));
		regs[i].access = next_byte(&p, end, 7) & 7u;
		regs[i].len = (uint64_t)next_byte(&p, end, 16) << 8;
	}
	r = oms_ad_validate(&d, &c, &reg);
	if (r) {
		check(reg == (const void *)1);
		return 0;
	}
	check(d.stream < c.nstreams);
	if (d.op == OMS_AD_NOP) {
		check(reg == NULL);
	} else {
		check(reg >= regs && reg < regs + c.nregions);
		check(reg->key == d.key);
		check(reg->access & right_of(d.op));
		check(d.off <= reg->len && d.len <= reg->len - d.off);
	}
	if (d.op == OMS_AD_PUT)
		check(d.stage < c.stage_slots && d.len <= c.stage_len);
	return 0;
}
