// SPDX-License-Identifier: MIT
/*
 * The destination agent's descriptors (agent_desc.h): one set of rules,
 * well_formed(), that the encoder and the decoder both apply, so that what
 * one side writes the other accepts and nothing else; then the check
 * against what a connection was given.
 */
#include <errno.h>
#include <string.h>

#include "oms.h"
#include "agent/agent_desc.h"
#include "util/crc32c.h"
#include "util/le.h"

#define AD_CHECKED	60u	/* bytes the check covers */

/* FNV-1a, 32 bits: every byte moves it, but one byte a step. */
static uint32_t ad_fnv1a(const uint8_t *p)
{
	uint32_t h = 2166136261u;

	for (unsigned i = 0; i < AD_CHECKED; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int ad_fmt_ok(enum oms_ad_fmt fmt)
{
	return fmt == OMS_AD_FMT_FNV1A || fmt == OMS_AD_FMT_CRC32C;
}

static uint32_t ad_check(const uint8_t *p, enum oms_ad_fmt fmt)
{
	return fmt == OMS_AD_FMT_CRC32C ? oms_crc32c(p, AD_CHECKED) :
					  ad_fnv1a(p);
}

/* The flags each op takes. */
static uint8_t ad_flags_of(uint8_t op)
{
	switch (op) {
	case OMS_AD_PUT:
		return OMS_AD_F_SEQ | OMS_AD_F_RELEASE | OMS_AD_F_CHAIN;
	case OMS_AD_GET:
		return OMS_AD_F_SEQ | OMS_AD_F_ACQUIRE | OMS_AD_F_RESP_ORDERED |
		       OMS_AD_F_CHAIN;
	case OMS_AD_FADD:
	case OMS_AD_CAS:
		return OMS_AD_F_SEQ | OMS_AD_F_CHAIN;
	case OMS_AD_NOP:
		return OMS_AD_F_SEQ | OMS_AD_F_CANCEL | OMS_AD_F_RESUME |
		       OMS_AD_F_CHAIN;
	default:
		return 0;
	}
}

static int wraps(uint64_t a, uint64_t len)
{
	return a > UINT64_MAX - len;
}

/* Every rule of agent_desc.h's layout but the check. */
static int well_formed(const struct oms_ad_desc *d)
{
	int atomic = d->op == OMS_AD_FADD || d->op == OMS_AD_CAS;
	int lands = d->op == OMS_AD_GET || atomic;
	uint8_t allowed = ad_flags_of(d->op);

	if (!allowed || (d->flags & ~allowed))
		return 0;
	if (!(d->flags & OMS_AD_F_SEQ) && d->seq)
		return 0;
	switch (d->op) {
	case OMS_AD_PUT:
	case OMS_AD_GET:
		if (!d->len || d->len > OMS_AD_MAX_LEN)
			return 0;
		break;
	case OMS_AD_NOP:
		if (!(d->flags & OMS_AD_F_SEQ) || d->len || d->key || d->off)
			return 0;
		if ((d->flags & OMS_AD_F_CANCEL) && (d->flags & OMS_AD_F_RESUME))
			return 0;
		break;
	default:	/* atomics */
		if (d->len != 8 || d->off % 8)
			return 0;
	}
	if (wraps(d->off, d->len))
		return 0;
	if (d->op != OMS_AD_PUT && d->stage)
		return 0;
	if (lands ? !d->laddr || wraps(d->laddr, d->len) :
		    d->laddr || d->lrkey)
		return 0;
	if (!atomic && d->a1)
		return 0;
	return d->op == OMS_AD_CAS || !d->a2;
}

/*
 * The descriptor's fields on the wire (agent_desc.h's layout); bytes 6-7
 * are zero and 60-63 the check.  Field by field rather than through a
 * table (util/le_fields.h): the agent decodes every request, and each of
 * these loads compiles to one move where a table walk costs tens of ns.
 */
static void ad_put(uint8_t *p, const struct oms_ad_desc *d)
{
	p[0] = d->op;
	p[1] = d->flags;
	le_put16(p + 2, d->stream);
	le_put16(p + 4, d->seq);
	le_put16(p + 6, 0);
	le_put32(p + 8, d->key);
	le_put32(p + 12, d->len);
	le_put64(p + 16, d->off);
	le_put32(p + 24, d->stage);
	le_put32(p + 28, d->lrkey);
	le_put64(p + 32, d->laddr);
	le_put64(p + 40, d->a1);
	le_put64(p + 48, d->a2);
	le_put32(p + 56, d->tag);
}

static void ad_get(const uint8_t *p, struct oms_ad_desc *d)
{
	d->op = p[0];
	d->flags = p[1];
	d->stream = le_get16(p + 2);
	d->seq = le_get16(p + 4);
	d->key = le_get32(p + 8);
	d->len = le_get32(p + 12);
	d->off = le_get64(p + 16);
	d->stage = le_get32(p + 24);
	d->lrkey = le_get32(p + 28);
	d->laddr = le_get64(p + 32);
	d->a1 = le_get64(p + 40);
	d->a2 = le_get64(p + 48);
	d->tag = le_get32(p + 56);
}

int oms_ad_encode(void *out, const struct oms_ad_desc *d,
		  enum oms_ad_fmt fmt)
{
	uint8_t *p = out;

	if (!p || !d || !ad_fmt_ok(fmt) || !well_formed(d))
		return -EINVAL;
	ad_put(p, d);
	le_put32(p + 60, ad_check(p, fmt));
	return 0;
}

int oms_ad_decode(const void *in, struct oms_ad_desc *d, enum oms_ad_fmt fmt)
{
	const uint8_t *p = in;
	struct oms_ad_desc x;

	if (!p || !d || !ad_fmt_ok(fmt))
		return -EINVAL;
	if (le_get32(p + 60) != ad_check(p, fmt) || le_get16(p + 6))
		return -EPROTO;
	memset(&x, 0, sizeof(x));
	ad_get(p, &x);
	if (!well_formed(&x))
		return -EPROTO;
	*d = x;
	return 0;
}

/* The right an op needs on its region. */
static uint32_t ad_right(uint8_t op)
{
	switch (op) {
	case OMS_AD_GET:
		return OMS_ACCESS_REMOTE_READ;
	case OMS_AD_PUT:
		return OMS_ACCESS_REMOTE_WRITE;
	default:
		return OMS_ACCESS_REMOTE_ATOMIC;
	}
}

int oms_ad_validate(const struct oms_ad_desc *d, const struct oms_ad_conn *c,
		    const struct oms_ad_region **reg)
{
	const struct oms_ad_region *r = NULL;

	if (!d || !c || !c->nstreams || (c->nregions && !c->regions) ||
	    d->stream >= c->nstreams)
		return -EINVAL;
	if (d->op != OMS_AD_NOP) {
		for (uint32_t i = 0; i < c->nregions && !r; i++)
			if (c->regions[i].key == d->key)
				r = &c->regions[i];
		if (!r || !(r->access & ad_right(d->op)))
			return -EACCES;
		if (d->off > r->len || d->len > r->len - d->off)
			return -ERANGE;
		if (d->op == OMS_AD_PUT &&
		    (d->stage >= c->stage_slots || d->len > c->stage_len))
			return -EINVAL;
	}
	if (reg)
		*reg = r;
	return 0;
}

static int answer_status_ok(int32_t s)
{
	return s <= 0 && s >= -4095;
}

int oms_ad_answer_encode(void *out, const struct oms_ad_answer *a)
{
	uint8_t *p = out;

	if (!p || !a || !answer_status_ok(a->status))
		return -EINVAL;
	le_put32(p, a->tag);
	le_put32(p + 4, (uint32_t)a->status);
	le_put64(p + 8, a->old);
	return 0;
}

int oms_ad_answer_decode(const void *in, struct oms_ad_answer *a)
{
	const uint8_t *p = in;
	struct oms_ad_answer r;

	if (!p || !a)
		return -EINVAL;
	r.tag = le_get32(p);
	r.status = (int32_t)le_get32(p + 4);
	r.old = le_get64(p + 8);
	if (!answer_status_ok(r.status))
		return -EPROTO;
	*a = r;
	return 0;
}
