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
 *   4  version  u16  OMS_VW_VERSION
 *   6  length   u16  bytes of the message (the CM may pad beyond it)
 *   8  flags    u32  0 (no flag is defined; others are refused)
 *
 * region, after the header:
 *  12  access   u32  OMS_ACCESS_* (non-zero, known bits only)
 *  16  addr     u64  the region's address in the owner's space
 *  24  len      u64  bytes, non-zero, addr + len does not wrap
 *  32  rkey     u32
 *  36  line     u32  the owner's cache line size (power of two, 8..4096)
 *  40  node     u32  the owner's node (< OMS_MAX_NODES), informational
 *  44  frkey    u32  the rkey of the listener's flush word
 *  48  faddr    u64  its address: 8-byte aligned, not 0, faddr + 8 does
 *                    not wrap
 *
 * The flush word (version 2) is 8 bytes every listener registers with
 * remote read access on its own protection domain: the initiator's flush
 * is an 8-byte RDMA READ of it.  The response of a READ that touches
 * memory follows every earlier WRITE of the QP into memory (PCIe: a read
 * pushes the posted writes before it), which a 0-byte READ need not do,
 * and the word is readable whatever rights the region itself was given.
 */
#ifndef OMS_VERBS_WIRE_H
#define OMS_VERBS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define OMS_VW_MAGIC		0x56534d4fu	/* the bytes "OMSV" */
#define OMS_VW_VERSION		2u	/* 2: the flush word */
#define OMS_VW_HELLO_LEN	16u
#define OMS_VW_REGION_LEN	56u
#define OMS_VW_MAX_REGION_LEN	(1ull << 48)	/* no region is larger */

struct oms_vw_hello {
	uint32_t reserved;	/* 0 */
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
};

/* Encode into @buf (at least the message length); returns the length. */
size_t oms_vw_hello_encode(void *buf, const struct oms_vw_hello *h);
size_t oms_vw_region_encode(void *buf, const struct oms_vw_region *r);

/*
 * Decode @len bytes received.  0, or -EPROTO when the bytes are not a
 * well-formed message of this version (short, wrong magic, version or
 * length, unknown flags, a reserved field set, a zero, wrapping or
 * oversized region, unknown access bits, a line size that is not a power
 * of two in range, a flush word address that is 0, misaligned or wraps).  *@out is written only on success.  -EINVAL for NULL.
 */
int oms_vw_hello_decode(const void *buf, size_t len, struct oms_vw_hello *out);
int oms_vw_region_decode(const void *buf, size_t len,
			 struct oms_vw_region *out);

#endif
