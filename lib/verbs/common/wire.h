/* SPDX-License-Identifier: MIT */
/*
 * The verbs backend's connection handshake, as bytes: what an initiator
 * sends in its librdmacm connect request (a hello) and what a listener
 * answers in the accept (the region: address, rkey, length, access).
 * Pure functions, no I/O: the decoders see exactly what came off the wire
 * and refuse anything malformed with -EPROTO before a field is used, so a
 * peer can never make the initiator address memory it did not describe.
 *
 * Both messages are little-endian and start with the same header:
 *
 *   0  magic    u32  OMS_VW_MAGIC
 *   4  version  u16  OMS_VW_VERSION (2), or OMS_VW_VERSION_AGENT (3)
 *   6  length   u16  bytes of the message (the CM may pad beyond it)
 *   8  flags    u32  version 2: 0; version 3: OMS_VW_F_AGENT, or (a
 *                    region only) OMS_VW_F_AGENT_BUSY, or (a region
 *                    only) OMS_VW_F_AGENT | OMS_VW_F_AGENT_CRC32C
 *
 * hello, after the header (version 2: 16 bytes; version 3: 32):
 *  12  rsvd     u32  0
 *  16  cq_addr  u64  v3: the requester's completion ring for the agent's
 *                    answers: 16-byte aligned, not 0, no wrap
 *  24  cq_rkey  u32  v3: its rkey (remote write)
 *  28  cq_slots u32  v3: answer records (OMS_AD_ANSWER_LEN), power of two
 *                    16..4096
 * and, after a version-3 hello (its length stays 32), the requester's
 * offer of descriptor formats, 8 bytes:
 *  32  magic    u32  OMS_VW_OFFER_MAGIC
 *  36  offer    u32  OMS_VW_F_AGENT_CRC32C: it writes CRC32C descriptors
 *                    when told to; other bits: formats this side does not
 *                    know, ignored
 *
 * region, after the header (version 2: 56 bytes; version 3: 96):
 *  12  access   u32  OMS_ACCESS_* (non-zero, known bits only)
 *  16  addr     u64  the region's address in the owner's space
 *  24  len      u64  bytes, non-zero, addr + len does not wrap
 *  32  rkey     u32
 *  36  line     u32  the owner's cache line size (power of two, 8..4096)
 *  40  node     u32  the owner's node (< OMS_MAX_NODES), informational
 *  44  frkey    u32  the rkey of the listener's flush word
 *  48  faddr    u64  its address: 8-byte aligned, not 0, faddr + 8 does
 *                    not wrap
 *  56  ring     u64  v3: the agent's request ring (64-byte descriptors,
 *                    lib/agent/agent_desc.h): 64-byte aligned, not 0
 *  64  rrkey    u32  v3: its rkey (remote write)
 *  68  rslots   u32  v3: descriptors, power of two 16..4096
 *  72  stage    u64  v3: the connection's staging slots: 64-byte aligned,
 *                    not 0
 *  80  srkey    u32  v3: their rkey (remote write)
 *  84  sslots   u32  v3: 1..4096
 *  88  slen     u32  v3: bytes per slot, a multiple of 64, 64..1 MiB
 *  92  streams  u16  v3: 1..OMS_AGENT_MAX_STREAMS
 *  94  window   u16  v3: numbers ahead per stream, power of two 1..256
 * No block may wrap the address space.
 *
 * Version 3 is the destination agent's (docs/dest-agent.md): a hello of
 * version 3 asks for it and says where its answers go; a listener that
 * runs one answers with version 3 and its ring, staging and streams.  A
 * hello of version 2 gets a version-2 reply, byte for byte what it got
 * before, so version-2 peers keep working; an initiator refuses an agent
 * block it did not ask for (oms_vw_region_decode()'s @asked).  A listener
 * whose agent has no slot for the requester (docs/dest-agent.md,
 * "Sharing") answers a version-3 hello with a version-3 region whose flags
 * are OMS_VW_F_AGENT_BUSY and whose agent block is all zero: the
 * connection is one-sided, and the requester can say why (-EUSERS) when it
 * needs the agent.
 *
 * Descriptor formats (lib/agent/agent_desc.h).  A listener of today's
 * decoders sees the offer as the CM's padding beyond the message and
 * ignores it; one that knows it and sees OMS_VW_F_AGENT_CRC32C offered
 * answers with OMS_VW_F_AGENT | OMS_VW_F_AGENT_CRC32C, and the ring of
 * that connection carries OMS_AD_FMT_CRC32C descriptors.  Anything else
 * - no offer (the padding of a requester that does not know it: no
 * magic), or a reply without the flag - is OMS_AD_FMT_FNV1A, as both
 * ends of an older pair use.  The region decoder refuses the flag unless
 * @asked offered it, so each end knows the other's choice.  In struct
 * oms_vw_hello the offer is the flag OMS_VW_F_AGENT_CRC32C beside
 * OMS_VW_F_AGENT, so a requester passes its hello's flags as @asked.
 *
 * The flush word (version 2) is 8 bytes every listener registers with
 * remote read access on its own protection domain: the initiator's flush
 * is an 8-byte RDMA READ of it.  The response of a READ that touches
 * memory follows every earlier WRITE of the QP into memory (PCIe: a read
 * pushes the posted writes before it), which a 0-byte READ need not do,
 * and the word is readable whatever rights the region itself was given.
 *
 * The agent's answers (version 3) are the records of
 * lib/agent/agent_desc.h (OMS_AD_ANSWER_LEN bytes each) that it writes
 * into the requester's completion ring.
 */
#ifndef OMS_VERBS_WIRE_H
#define OMS_VERBS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define OMS_VW_MAGIC		0x56534d4fu	/* the bytes "OMSV" */
#define OMS_VW_VERSION		2u	/* 2: the flush word */
#define OMS_VW_VERSION_AGENT	3u	/* 3: the destination agent */
#define OMS_VW_F_AGENT		(1u << 0)
#define OMS_VW_F_AGENT_BUSY	(1u << 1)	/* region: asked, no slot */
#define OMS_VW_F_AGENT_CRC32C	(1u << 2)	/* hello: offered; region:
						 * agreed (see above) */
#define OMS_VW_OFFER_MAGIC	0x46444d4fu	/* the bytes "OMDF" */
#define OMS_VW_OFFER_LEN	8u
#define OMS_VW_HELLO_LEN	16u
#define OMS_VW_HELLO_AGENT_LEN	32u
#define OMS_VW_REGION_LEN	56u
#define OMS_VW_REGION_AGENT_LEN	96u
#define OMS_VW_MAX_LEN		96u	/* the longest message */
#define OMS_VW_MAX_REGION_LEN	(1ull << 48)	/* no region is larger */

/* Where the agent writes a requester's answers (version 3 hello). */
struct oms_vw_cq {
	uint64_t addr;
	uint32_t rkey;
	uint32_t slots;
};

struct oms_vw_hello {
	uint32_t flags;		/* OMS_VW_F_AGENT: @cq is set; with it,
				 * OMS_VW_F_AGENT_CRC32C: the offer */
	struct oms_vw_cq cq;
};

/* What a listener's agent gives one connection (version 3 region). */
struct oms_vw_agent {
	uint64_t ring_addr;
	uint32_t ring_rkey;
	uint32_t ring_slots;
	uint64_t stage_addr;
	uint32_t stage_rkey;
	uint32_t stage_slots;
	uint32_t stage_len;
	uint16_t nstreams;
	uint16_t window;
};

struct oms_vw_region {
	uint64_t addr;
	uint64_t len;
	uint32_t rkey;
	uint32_t access;
	uint32_t line;
	uint32_t node;
	uint64_t flush_addr;	/* the listener's flush word */
	uint32_t flush_rkey;
	uint32_t flags;		/* OMS_VW_F_AGENT: @agent is set */
	struct oms_vw_agent agent;
};

/*
 * Encode into @buf (at least the message length, OMS_VW_MAX_LEN will do);
 * returns the length: version 3 when @flags has OMS_VW_F_AGENT, else
 * version 2; a hello's offer, when it makes one, included.  0 when the
 * message would not decode (a block out of range, an unknown flag):
 * nothing a decoder refuses leaves this side.
 */
size_t oms_vw_hello_encode(void *buf, const struct oms_vw_hello *h);
size_t oms_vw_region_encode(void *buf, const struct oms_vw_region *r);

/*
 * Decode @len bytes received.  0, or -EPROTO when the bytes are not a
 * well-formed message of version 2 or 3 (short, wrong magic, version or
 * length, unknown flags or a version without its flag, a reserved field
 * set, a zero, wrapping or oversized region, unknown access bits, a line
 * size that is not a power of two in range, a flush word address that is
 * 0, misaligned or wraps, an agent block or completion ring out of range
 * or wrapping).  The region decoder also refuses an agent block when
 * @asked (the hello's flags) did not ask for one.  *@out is written only
 * on success.  -EINVAL for NULL.
 */
int oms_vw_hello_decode(const void *buf, size_t len, struct oms_vw_hello *out);
int oms_vw_region_decode(const void *buf, size_t len, uint32_t asked,
			 struct oms_vw_region *out);

/*
 * The descriptor format (enum oms_ad_fmt) agreed by a hello's or a
 * region's @flags: OMS_AD_FMT_CRC32C when they carry
 * OMS_VW_F_AGENT_CRC32C, else OMS_AD_FMT_FNV1A.  A listener answers a
 * hello whose offer it takes with the flag, so the two ends read the same.
 */
uint32_t oms_vw_desc_fmt(uint32_t flags);

#endif
