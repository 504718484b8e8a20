// SPDX-License-Identifier: MIT
/*
 * The connection handshake's bytes (see wire.h): explicit little-endian
 * encoding, and decoders that check every field before anything is used.
 */
#include <errno.h>
#include <string.h>

#include "oms.h"
#include "util/le.h"
#include "verbs/wire.h"

static void put_header(uint8_t *p, uint16_t length)
{
	le_put32(p, OMS_VW_MAGIC);
	le_put16(p + 4, OMS_VW_VERSION);
	le_put16(p + 6, length);
	le_put32(p + 8, 0);
}

/* The common header: magic, version, exact length for this version, no
 * flags, and the message fits in what arrived. */
static int header_ok(const uint8_t *p, size_t len, uint16_t want)
{
	return len >= want && le_get32(p) == OMS_VW_MAGIC &&
	       le_get16(p + 4) == OMS_VW_VERSION && le_get16(p + 6) == want &&
	       le_get32(p + 8) == 0;
}

size_t oms_vw_hello_encode(void *buf, const struct oms_vw_hello *h)
{
	uint8_t *p = buf;

	memset(p, 0, OMS_VW_HELLO_LEN);
	put_header(p, OMS_VW_HELLO_LEN);
	le_put32(p + 12, h->reserved);
	return OMS_VW_HELLO_LEN;
}

int oms_vw_hello_decode(const void *buf, size_t len, struct oms_vw_hello *out)
{
	const uint8_t *p = buf;

	if (!out || (!buf && len))
		return -EINVAL;
	if (!buf || !header_ok(p, len, OMS_VW_HELLO_LEN) || le_get32(p + 12))
		return -EPROTO;
	out->reserved = 0;
	return 0;
}

size_t oms_vw_region_encode(void *buf, const struct oms_vw_region *r)
{
	uint8_t *p = buf;

	memset(p, 0, OMS_VW_REGION_LEN);
	put_header(p, OMS_VW_REGION_LEN);
	le_put32(p + 12, r->access);
	le_put64(p + 16, r->addr);
	le_put64(p + 24, r->len);
	le_put32(p + 32, r->rkey);
	le_put32(p + 36, r->line);
	le_put32(p + 40, r->node);
	le_put32(p + 44, r->flush_rkey);
	le_put64(p + 48, r->flush_addr);
	return OMS_VW_REGION_LEN;
}

int oms_vw_region_decode(const void *buf, size_t len,
			 struct oms_vw_region *out)
{
	const uint8_t *p = buf;
	struct oms_vw_region r;

	if (!out || (!buf && len))
		return -EINVAL;
	if (!buf || !header_ok(p, len, OMS_VW_REGION_LEN))
		return -EPROTO;
	memset(&r, 0, sizeof(r));	/* padding too: callers memcmp it */
	r.access = le_get32(p + 12);
	r.addr = le_get64(p + 16);
	r.len = le_get64(p + 24);
	r.rkey = le_get32(p + 32);
	r.line = le_get32(p + 36);
	r.node = le_get32(p + 40);
	r.flush_rkey = le_get32(p + 44);
	r.flush_addr = le_get64(p + 48);
	if (!r.access || (r.access & ~OMS_ACCESS_ALL))
		return -EPROTO;
	if (!r.len || r.len > OMS_VW_MAX_REGION_LEN || r.addr > UINT64_MAX - r.len)
		return -EPROTO;
	if (r.line < 8 || r.line > 4096 || (r.line & (r.line - 1)))
		return -EPROTO;
	if (r.node >= OMS_MAX_NODES)
		return -EPROTO;
	/* the flush READs these 8 bytes: a real, aligned word */
	if (!r.flush_addr || (r.flush_addr % 8) ||
	    r.flush_addr > UINT64_MAX - 8)
		return -EPROTO;
	*out = r;
	return 0;
}
