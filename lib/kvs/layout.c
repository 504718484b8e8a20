// SPDX-License-Identifier: MIT
/*
 * KVS item layouts, the directory check, and the torn-value detector.
 *
 * Layouts are in kvs_priv.h.  Each protocol's layout carries exactly the
 * metadata its get needs and nothing more, so a benchmark compares the
 * protocols, not their padding: Single Read a header and a footer, FaRM a
 * version in every cache line, Validation one seqlock word, Pessimistic a
 * lock word and a version.
 *
 * Values are a function of (key, version): word i of the value is
 * base(key, version) + i * K, so one item's bytes from two versions differ
 * in every word, and a value whose words are shifted (a wrong strip) is
 * caught too.  Checking costs one add and one compare per word.
 */
#include <errno.h>

#include "ctx_users.h"
#include "kvs/kvs_priv.h"
#include "util/clock.h"
#include "util/export.h"

#define WORD_STEP 0xd6e8feb86659fd93ull	/* odd: every word differs */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t value_base(uint64_t key, uint64_t version)
{
	return mix64(mix64(key + 0x9e3779b97f4a7c15ull) ^ version);
}

static int value_len_ok(const void *buf, size_t len)
{
	return buf && len && !(len % 8) && len <= OMS_KVS_MAX_VALUE;
}

OMS_EXPORT int oms_kvs_value_fill(uint64_t key, uint64_t version, void *buf,
				  size_t len)
{
	uint64_t w;
	uint8_t *p = buf;

	if (!value_len_ok(buf, len))
		return -EINVAL;
	w = value_base(key, version);
	for (size_t i = 0; i < len; i += 8, w += WORD_STEP)
		memcpy(p + i, &w, 8);
	return 0;
}

OMS_EXPORT int oms_kvs_value_torn(uint64_t key, uint64_t version,
				  const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t w, diff = 0;

	if (!value_len_ok(buf, len))
		return -EINVAL;
	w = value_base(key, version);
	/* no early exit: the cost does not depend on where a tear is */
	for (size_t i = 0; i < len; i += 8, w += WORD_STEP)
		diff |= kvs_load64(p + i) ^ w;
	return diff != 0;
}

static uint32_t round_line(uint32_t n)
{
	return (n + KVS_LINE - 1) / KVS_LINE * KVS_LINE;
}

int kvs_layout(uint32_t proto, uint32_t value_size, struct kvs_layout *l)
{
	uint32_t s = value_size;

	if (!s || s % 8 || s > OMS_KVS_MAX_VALUE)
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->proto = proto;
	l->value_size = s;
	switch (proto) {
	case OMS_KVS_SINGLE:
		l->read_size = 8 + s + 8;
		l->value_off = 8;
		l->ftr_off = 8 + s;
		break;
	case OMS_KVS_VALIDATION:
		l->read_size = 8 + s;
		l->value_off = 8;
		break;
	case OMS_KVS_FARM:
		l->lines = (s + KVS_FARM_CHUNK - 1) / KVS_FARM_CHUNK;
		l->read_size = 8 * l->lines + s;
		l->value_off = 8;
		break;
	case OMS_KVS_PESSIMISTIC:
		l->read_size = 8 + 8 + s;
		l->ver_off = 8;
		l->value_off = 16;
		break;
	default:
		return -EINVAL;
	}
	l->stride = round_line(l->read_size);
	return 0;
}

/* Everything a peer sent, checked before use (against @region_len, the
 * length the connection itself reported, not the directory's claim). */
int kvs_dir_check(const struct kvs_dir *d, uint64_t region_len)
{
	if (d->magic != KVS_MAGIC || d->version != KVS_DIR_VERSION ||
	    !d->ntables || d->ntables > OMS_KVS_MAX_TABLES ||
	    d->region_len != region_len)
		return -EPROTO;
	for (uint32_t i = 0; i < d->ntables; i++) {
		const struct kvs_dir_ent *e = &d->t[i];
		struct kvs_layout l;
		uint64_t bytes;

		if (kvs_layout(e->proto, e->value_size, &l) || !e->items ||
		    (e->flags & ~OMS_KVS_TABLE_F_ALL) ||
		    e->stride != l.stride || e->offset % KVS_LINE ||
		    e->offset < KVS_TABLE0 || e->offset > region_len)
			return -EPROTO;
		bytes = (uint64_t)e->items * e->stride;
		if (bytes > region_len - e->offset)
			return -EPROTO;
	}
	return 0;
}

/*
 * The image of item @key at @version in layout @l: read_size bytes at
 * @img, built from the value in @val (value_size bytes, overwritten).
 * Pessimistic: the lock word is 0 (writers never write it from here).
 */
void kvs_item_build(const struct kvs_layout *l, uint64_t key,
		    uint64_t version, uint8_t *val, uint8_t *img)
{
	uint32_t s = l->value_size;

	oms_kvs_value_fill(key, version, val, s);
	switch (l->proto) {
	case OMS_KVS_SINGLE:
		memcpy(img, &version, 8);
		memcpy(img + 8, val, s);
		memcpy(img + l->ftr_off, &version, 8);
		break;
	case OMS_KVS_VALIDATION:
		memcpy(img, &version, 8);
		memcpy(img + 8, val, s);
		break;
	case OMS_KVS_FARM:
		for (uint32_t n = 0; n < l->lines; n++) {
			uint32_t at = n * KVS_FARM_CHUNK;
			uint32_t len = s - at < KVS_FARM_CHUNK ?
				       s - at : KVS_FARM_CHUNK;

			memcpy(img + n * KVS_LINE, &version, 8);
			memcpy(img + n * KVS_LINE + 8, val + at, len);
		}
		break;
	case OMS_KVS_PESSIMISTIC:
		memset(img, 0, 8);
		memcpy(img + 8, &version, 8);
		memcpy(img + 16, val, s);
		break;
	}
}
