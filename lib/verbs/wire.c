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
#include "verbs/wire.h"

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
	    (flags == OMS_VW_F_AGENT || flags == OMS_VW_F_AGENT_BUSY))
		return len >= len_v3 ? (int64_t)flags : -1;
	return -1;
}

/* ---- hello ---- */

static int hello_ok(const struct oms_vw_hello *h)
{
	if (h->flags & ~OMS_VW_F_AGENT)
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
	le_put64(p + 16, h->cq.addr);
	le_put32(p + 24, h->cq.rkey);
	le_put32(p + 28, h->cq.slots);
	return OMS_VW_HELLO_AGENT_LEN;
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
	if (flags < 0 || le_get32(p + 12))
		return -EPROTO;
	memset(&h, 0, sizeof(h));
	h.flags = (uint32_t)flags;
	if (flags) {
		h.cq.addr = le_get64(p + 16);
		h.cq.rkey = le_get32(p + 24);
		h.cq.slots = le_get32(p + 28);
	}
	if (!hello_ok(&h))
		return -EPROTO;
	*out = h;
	return 0;
}

/* ---- region ---- */

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
	    r->flags != OMS_VW_F_AGENT_BUSY)
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
	le_put32(p + 12, r->access);
	le_put64(p + 16, r->addr);
	le_put64(p + 24, r->len);
	le_put32(p + 32, r->rkey);
	le_put32(p + 36, r->line);
	le_put32(p + 40, r->node);
	le_put32(p + 44, r->flush_rkey);
	le_put64(p + 48, r->flush_addr);
	if (!agent)
		return OMS_VW_REGION_LEN;
	le_put64(p + 56, r->agent.ring_addr);
	le_put32(p + 64, r->agent.ring_rkey);
	le_put32(p + 68, r->agent.ring_slots);
	le_put64(p + 72, r->agent.stage_addr);
	le_put32(p + 80, r->agent.stage_rkey);
	le_put32(p + 84, r->agent.stage_slots);
	le_put32(p + 88, r->agent.stage_len);
	le_put16(p + 92, r->agent.nstreams);
	le_put16(p + 94, r->agent.window);
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
	r.access = le_get32(p + 12);
	r.addr = le_get64(p + 16);
	r.len = le_get64(p + 24);
	r.rkey = le_get32(p + 32);
	r.line = le_get32(p + 36);
	r.node = le_get32(p + 40);
	r.flush_rkey = le_get32(p + 44);
	r.flush_addr = le_get64(p + 48);
	if (flags) {
		r.agent.ring_addr = le_get64(p + 56);
		r.agent.ring_rkey = le_get32(p + 64);
		r.agent.ring_slots = le_get32(p + 68);
		r.agent.stage_addr = le_get64(p + 72);
		r.agent.stage_rkey = le_get32(p + 80);
		r.agent.stage_slots = le_get32(p + 84);
		r.agent.stage_len = le_get32(p + 88);
		r.agent.nstreams = le_get16(p + 92);
		r.agent.window = le_get16(p + 94);
	}
	if (!region_ok(&r))
		return -EPROTO;
	*out = r;
	return 0;
}
