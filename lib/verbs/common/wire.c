// SPDX-License-Identifier: MIT
/*
 * The connection handshake's bytes (see wire.h): explicit little-endian
 * encoding, and one set of field rules per message that the encoder and
 * the decoder both apply, so that what one side sends the other accepts
 * and nothing else.
 */
#include <errno.h>
#include <string.h>

#include "oms.h"
#include "agent/agent.h"
#include "agent/agent_desc.h"
#include "util/le.h"
#include "util/le_fields.h"
#include "verbs/common/wire.h"

static int pow2_in(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v >= lo && v <= hi && !(v & (v - 1));
}

/* @n records of @size bytes at @addr, aligned to @align: real memory. */
static int block_ok(uint64_t addr, uint64_t n, uint64_t size, uint64_t align)
{
	return addr && !(addr % align) && n &&
	       n <= UINT64_MAX / size && addr <= UINT64_MAX - n * size;
}

static void put_header(uint8_t *p, uint16_t version, uint16_t length,
		       uint32_t flags)
{
	le_put32(p, OMS_VW_MAGIC);
	le_put16(p + 4, version);
	le_put16(p + 6, length);
	le_put32(p + 8, flags);
}

/*
 * The common header: magic, a version with its exact length and flags,
 * and the message fits in what arrived.  Returns the flags (0 for version
 * 2), or -1.
 */
static int64_t header_flags(const uint8_t *p, size_t len, uint16_t len_v2,
			    uint16_t len_v3)
{
	uint16_t version, length;
	uint32_t flags;

	if (len < 12 || le_get32(p) != OMS_VW_MAGIC)
		return -1;
	version = le_get16(p + 4);
	length = le_get16(p + 6);
	flags = le_get32(p + 8);
	if (version == OMS_VW_VERSION && length == len_v2 && !flags)
		return len >= len_v2 ? 0 : -1;
	if (version == OMS_VW_VERSION_AGENT && length == len_v3 &&
	    (flags == OMS_VW_F_AGENT || flags == OMS_VW_F_AGENT_BUSY ||
	     flags == (OMS_VW_F_AGENT | OMS_VW_F_AGENT_CRC32C)))
		return len >= len_v3 ? (int64_t)flags : -1;
	return -1;
}

/* ---- hello ---- */

/* A version-3 hello's fields after the header (bytes 12-15 are zero). */
#define HELLO_F(member, off) LE_FIELD(struct oms_vw_hello, member, off)
static const struct le_field hello_agent_fields[] = {
	HELLO_F(cq.addr, 16), HELLO_F(cq.rkey, 24), HELLO_F(cq.slots, 28),
};

static int hello_ok(const struct oms_vw_hello *h)
{
	if (h->flags & ~(OMS_VW_F_AGENT | OMS_VW_F_AGENT_CRC32C))
		return 0;
	if ((h->flags & OMS_VW_F_AGENT_CRC32C) && !(h->flags & OMS_VW_F_AGENT))
		return 0;
	if (!(h->flags & OMS_VW_F_AGENT))
		return !h->cq.addr && !h->cq.rkey && !h->cq.slots;
	return pow2_in(h->cq.slots, 16, 4096) &&
	       block_ok(h->cq.addr, h->cq.slots, OMS_AD_ANSWER_LEN, 16);
}

size_t oms_vw_hello_encode(void *buf, const struct oms_vw_hello *h)
{
	uint8_t *p = buf;
	int agent;

	if (!p || !h || !hello_ok(h))
		return 0;
	agent = !!(h->flags & OMS_VW_F_AGENT);
	memset(p, 0, agent ? OMS_VW_HELLO_AGENT_LEN : OMS_VW_HELLO_LEN);
	if (!agent) {
		put_header(p, OMS_VW_VERSION, OMS_VW_HELLO_LEN, 0);
		return OMS_VW_HELLO_LEN;
	}
	put_header(p, OMS_VW_VERSION_AGENT, OMS_VW_HELLO_AGENT_LEN,
		   OMS_VW_F_AGENT);
	le_put_fields(p, h, hello_agent_fields,
		      LE_NFIELDS(hello_agent_fields));
	if (!(h->flags & OMS_VW_F_AGENT_CRC32C))
		return OMS_VW_HELLO_AGENT_LEN;
	/* after the message, where today's decoders see padding */
	le_put32(p + OMS_VW_HELLO_AGENT_LEN, OMS_VW_OFFER_MAGIC);
	le_put32(p + OMS_VW_HELLO_AGENT_LEN + 4, OMS_VW_F_AGENT_CRC32C);
	return OMS_VW_HELLO_AGENT_LEN + OMS_VW_OFFER_LEN;
}

int oms_vw_hello_decode(const void *buf, size_t len, struct oms_vw_hello *out)
{
	const uint8_t *p = buf;
	struct oms_vw_hello h;
	int64_t flags;

	if (!out || (!buf && len))
		return -EINVAL;
	if (!buf)
		return -EPROTO;
	flags = header_flags(p, len, OMS_VW_HELLO_LEN, OMS_VW_HELLO_AGENT_LEN);
	/* the offer travels after the message, never in its flags */
	if (flags < 0 || (flags & ~(int64_t)OMS_VW_F_AGENT) || le_get32(p + 12))
		return -EPROTO;
	memset(&h, 0, sizeof(h));
	h.flags = (uint32_t)flags;
	if (flags)
		le_get_fields(p, &h, hello_agent_fields,
			      LE_NFIELDS(hello_agent_fields));
	/* the offer: no magic is padding; bits beyond ours, later formats */
	if (flags && len >= OMS_VW_HELLO_AGENT_LEN + OMS_VW_OFFER_LEN &&
	    le_get32(p + OMS_VW_HELLO_AGENT_LEN) == OMS_VW_OFFER_MAGIC)
		h.flags |= le_get32(p + OMS_VW_HELLO_AGENT_LEN + 4) &
			   OMS_VW_F_AGENT_CRC32C;
	if (!hello_ok(&h))
		return -EPROTO;
	*out = h;
	return 0;
}

/* ---- region ---- */

/* A region's fields after the header: every version's, then the agent
 * block of version 3. */
#define REGION_F(member, off) LE_FIELD(struct oms_vw_region, member, off)
static const struct le_field region_fields[] = {
	REGION_F(access, 12), REGION_F(addr, 16), REGION_F(len, 24),
	REGION_F(rkey, 32), REGION_F(line, 36), REGION_F(node, 40),
	REGION_F(flush_rkey, 44), REGION_F(flush_addr, 48),
};

static const struct le_field region_agent_fields[] = {
	REGION_F(agent.ring_addr, 56), REGION_F(agent.ring_rkey, 64),
	REGION_F(agent.ring_slots, 68), REGION_F(agent.stage_addr, 72),
	REGION_F(agent.stage_rkey, 80), REGION_F(agent.stage_slots, 84),
	REGION_F(agent.stage_len, 88), REGION_F(agent.nstreams, 92),
	REGION_F(agent.window, 94),
};

static int agent_ok(const struct oms_vw_agent *a)
{
	return pow2_in(a->ring_slots, 16, 4096) &&
	       block_ok(a->ring_addr, a->ring_slots, OMS_AD_LEN, 64) &&
	       a->stage_slots >= 1 && a->stage_slots <= 4096 &&
	       a->stage_len >= 64 && a->stage_len <= OMS_AD_MAX_LEN &&
	       !(a->stage_len % 64) &&
	       block_ok(a->stage_addr, a->stage_slots, a->stage_len, 64) &&
	       a->nstreams >= 1 && a->nstreams <= OMS_AGENT_MAX_STREAMS &&
	       pow2_in(a->window, 1, OMS_AD_MAX_WINDOW);
}

static int region_ok(const struct oms_vw_region *r)
{
	static const struct oms_vw_agent none;

	if (!r->access || (r->access & ~OMS_ACCESS_ALL))
		return 0;
	if (!r->len || r->len > OMS_VW_MAX_REGION_LEN ||
	    r->addr > UINT64_MAX - r->len)
		return 0;
	if (!pow2_in(r->line, 8, 4096) || r->node >= OMS_MAX_NODES)
		return 0;
	/* the flush READs these 8 bytes: a real, aligned word */
	if (!block_ok(r->flush_addr, 1, 8, 8))
		return 0;
	if (r->flags != 0 && r->flags != OMS_VW_F_AGENT &&
	    r->flags != OMS_VW_F_AGENT_BUSY &&
	    r->flags != (OMS_VW_F_AGENT | OMS_VW_F_AGENT_CRC32C))
		return 0;
	if (!(r->flags & OMS_VW_F_AGENT))
		return !memcmp(&r->agent, &none, sizeof(none));
	return agent_ok(&r->agent);
}

size_t oms_vw_region_encode(void *buf, const struct oms_vw_region *r)
{
	uint8_t *p = buf;
	int agent;

	if (!p || !r || !region_ok(r))
		return 0;
	agent = r->flags != 0;	/* a block, or why there is none */
	memset(p, 0, agent ? OMS_VW_REGION_AGENT_LEN : OMS_VW_REGION_LEN);
	if (agent)
		put_header(p, OMS_VW_VERSION_AGENT, OMS_VW_REGION_AGENT_LEN,
			   r->flags);
	else
		put_header(p, OMS_VW_VERSION, OMS_VW_REGION_LEN, 0);
	le_put_fields(p, r, region_fields, LE_NFIELDS(region_fields));
	if (!agent)
		return OMS_VW_REGION_LEN;
	le_put_fields(p, r, region_agent_fields,
		      LE_NFIELDS(region_agent_fields));
	return OMS_VW_REGION_AGENT_LEN;
}

int oms_vw_region_decode(const void *buf, size_t len, uint32_t asked,
			 struct oms_vw_region *out)
{
	const uint8_t *p = buf;
	struct oms_vw_region r;
	int64_t flags;

	if (!out || (!buf && len))
		return -EINVAL;
	if (!buf)
		return -EPROTO;
	flags = header_flags(p, len, OMS_VW_REGION_LEN,
			     OMS_VW_REGION_AGENT_LEN);
	/* a hello that asked for the agent may hear that it has no slot */
	if (asked & OMS_VW_F_AGENT)
		asked |= OMS_VW_F_AGENT_BUSY;
	if (flags < 0 || (flags & ~(int64_t)asked))
		return -EPROTO;
	memset(&r, 0, sizeof(r));	/* padding too: callers memcmp it */
	r.flags = (uint32_t)flags;
	le_get_fields(p, &r, region_fields, LE_NFIELDS(region_fields));
	if (flags)
		le_get_fields(p, &r, region_agent_fields,
			      LE_NFIELDS(region_agent_fields));
	if (!region_ok(&r))
		return -EPROTO;
	*out = r;
	return 0;
}

uint32_t oms_vw_desc_fmt(uint32_t flags)
{
	return flags & OMS_VW_F_AGENT_CRC32C ? OMS_AD_FMT_CRC32C :
					       OMS_AD_FMT_FNV1A;
}
