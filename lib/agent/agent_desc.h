/* SPDX-License-Identifier: MIT */
/*
 * The destination agent's request descriptor (docs/dest-agent.md), as
 * bytes, and its check against what a listener serves.  Pure functions,
 * no I/O: the agent decodes and validates a descriptor that a requester
 * wrote into its ring before it uses any field, so a requester can never
 * make the agent touch memory, a staging slot or a stream it was not
 * given.  The agent's core (agent.c) and the requesters (client.c, the
 * verbs backend's agent_req.c) share this codec.
 *
 * A descriptor is 64 bytes, little-endian:
 *
 *   0  op      u8   OMS_AD_PUT, GET, FADD, CAS or NOP
 *   1  flags   u8   OMS_AD_F_*: which depends on op (below)
 *   2  stream  u16  the requester's stream on this connection
 *   4  seq     u16  OMS_AD_F_SEQ: its place in the stream (wraps)
 *   6  rsvd    u16  0
 *   8  key     u32  the served region's key (rkey); NOP: 0
 *  12  len     u32  put, get: 1..OMS_AD_MAX_LEN; atomics: 8; NOP: 0
 *  16  off     u64  offset in the region; atomics: 8-byte aligned
 *  24  stage   u32  put: the staging slot holding the payload; else 0
 *  28  lrkey   u32  get, atomics: the requester's landing rkey; else 0
 *  32  laddr   u64  get, atomics: the landing address (not 0, no wrap);
 *                   else 0
 *  40  a1      u64  fadd: the addend; cas: the expected value; else 0
 *  48  a2      u64  cas: the new value; else 0
 *  56  tag     u32  the requester's, echoed in the completion
 *  60  check   u32  over bytes 0..59, by the connection's format: a torn
 *                   or stale descriptor (a ring slot half written) is
 *                   refused, not executed
 *
 * Formats (enum oms_ad_fmt): the layout is one, the check two.
 * OMS_AD_FMT_CRC32C checks with CRC32C (util/crc32c.h), 8 bytes a step
 * with the CPU's instruction; OMS_AD_FMT_FNV1A with FNV-1a, 32 bits, a
 * byte a step: the format of a peer that does not offer CRC32C in its
 * hello (lib/verbs/common/wire.h).  Either check changes when any one bit of
 * the descriptor is flipped.
 *
 * Flags: OMS_AD_F_SEQ on any op (a NOP needs it: it only fills a number);
 * OMS_AD_F_ACQUIRE and OMS_AD_F_RESP_ORDERED on a GET; OMS_AD_F_RELEASE on
 * a PUT; OMS_AD_F_CANCEL on a NOP (it stands for an op the requester's
 * orderer cancelled: the stream stops there, L37); OMS_AD_F_RESUME on a
 * NOP instead (the requester resumed: the stream starts again at @seq,
 * what it buffered is cancelled - in the ring, so it is ordered after
 * every descriptor of the old run and before every one of the new).
 * OMS_AD_F_CHAIN on any op: the connection is an in-order channel
 * (backend.h), so this descriptor is not performed, and completes with
 * -ECANCELED, once any descriptor before it in the ring has completed
 * with an error (a verbs requester stops its connection at the first
 * error answer, and what it had already written behind the failure must
 * not reach memory either: L37).
 */
#ifndef OMS_AGENT_AGENT_DESC_H
#define OMS_AGENT_AGENT_DESC_H

#include <stddef.h>
#include <stdint.h>

#define OMS_AD_LEN		64u
#define OMS_AD_MAX_LEN		(1u << 20)	/* a put's or get's bytes */
#define OMS_AD_MAX_WINDOW	256u		/* sequence numbers ahead */

enum oms_ad_fmt {
	OMS_AD_FMT_FNV1A = 1,
	OMS_AD_FMT_CRC32C = 2,
};

enum oms_ad_op {
	OMS_AD_PUT = 1,
	OMS_AD_GET = 2,
	OMS_AD_FADD = 3,
	OMS_AD_CAS = 4,
	OMS_AD_NOP = 5,
};

#define OMS_AD_F_SEQ		(1u << 0)
#define OMS_AD_F_ACQUIRE	(1u << 1)
#define OMS_AD_F_RESP_ORDERED	(1u << 2)
#define OMS_AD_F_RELEASE	(1u << 3)
#define OMS_AD_F_CANCEL		(1u << 4)
#define OMS_AD_F_RESUME		(1u << 5)
#define OMS_AD_F_CHAIN		(1u << 6)	/* any op: see below */

struct oms_ad_desc {
	uint8_t op, flags;
	uint16_t stream, seq;
	uint32_t key, len;
	uint64_t off;
	uint32_t stage, lrkey;
	uint64_t laddr, a1, a2;
	uint32_t tag;
};

/*
 * Encode @d into @out (OMS_AD_LEN bytes), the check of format @fmt
 * included.  0, or -EINVAL when @d is not well formed (the rules decode
 * enforces) or @fmt is not a format: an encoder that refuses what the
 * decoder would refuse keeps a requester's bug on its side of the wire.
 */
int oms_ad_encode(void *out, const struct oms_ad_desc *d,
		  enum oms_ad_fmt fmt);

/*
 * Decode OMS_AD_LEN bytes of format @fmt.  0, or -EPROTO: a bad check, an
 * unknown op or flag, a flag its op does not take, a reserved field or a
 * field its op does not use set, a length out of range for its op, an
 * offset or landing range that wraps, a misaligned atomic.  *@d is
 * written only on success.  -EINVAL for NULL or a @fmt that is not a
 * format.
 */
int oms_ad_decode(const void *in, struct oms_ad_desc *d, enum oms_ad_fmt fmt);

/*
 * The agent's answer to one descriptor, which it writes into the
 * requester's completion ring; 16 bytes, little-endian:
 *
 *   0  tag     u32  the descriptor's (0: a descriptor that did not decode)
 *   4  status  s32  0 or -errno (-4095..-1)
 *   8  old     u64  atomics: the value before; else 0
 */
#define OMS_AD_ANSWER_LEN	16u

/*
 * How answers reach a requester over verbs
 * (lib/verbs/listener/agent_srv.c): each WRITE_WITH_IMM into its QP
 * carries an immediate that is either
 *   - below OMS_AD_IMM_TAG_MIN: a count of answer records just written,
 *     in order, into its completion ring; or
 *   - a request's tag (tags are at least OMS_AD_IMM_TAG_MIN: their entry
 *     generation is never 0): the WRITE itself landed that get's bytes
 *     (or that atomic's old value), and it succeeded - the answer
 *     { tag, 0, 0 } without a record.
 */
#define OMS_AD_IMM_TAG_MIN	4096u

struct oms_ad_answer {
	uint32_t tag;
	int32_t status;
	uint64_t old;
};

/* Encode (-EINVAL for a status that is not 0 or an errno) and decode
 * (-EPROTO for the same, read off the wire; -EINVAL for NULL). */
int oms_ad_answer_encode(void *out, const struct oms_ad_answer *a);
int oms_ad_answer_decode(const void *in, struct oms_ad_answer *a);

/* A region the listener serves: its key, rights (OMS_ACCESS_*), bytes. */
struct oms_ad_region {
	uint32_t key;
	uint32_t access;
	uint64_t len;
};

/* What one connection was given. */
struct oms_ad_conn {
	const struct oms_ad_region *regions;
	uint32_t nregions;
	uint32_t stage_slots;		/* its staging slots */
	uint32_t stage_len;		/* bytes per slot */
	uint16_t nstreams;		/* its streams: 0..nstreams-1 */
};

/*
 * Check a decoded descriptor against what connection @c was given; on 0,
 * *@reg (if not NULL) is the region it addresses (NULL for a NOP).
 *   -EINVAL   a stream or staging slot that is not this connection's, a
 *             put longer than a slot, a bad @c (NULL, no streams)
 *   -EACCES   no region with that key, or not with the right the op needs
 *             (get: read; put: write; atomics: atomic) - seed 003's key
 *             check: the agent counts it as a key drop
 *   -ERANGE   off + len beyond the region
 * A sequence number is not checked here: whether it has a place in its
 * stream is the destination stream machine's to say (engine/dest_stream.h:
 * -ESTALE, -ENOSPC, -EEXIST), which the agent drives.
 * Nothing is changed; the caller completes a refused descriptor with the
 * error and does not execute it.
 */
int oms_ad_validate(const struct oms_ad_desc *d, const struct oms_ad_conn *c,
		    const struct oms_ad_region **reg);

#endif
