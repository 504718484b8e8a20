// SPDX-License-Identifier: MIT
/*
 * KVS writers: the server's CPU updating items while clients read them.
 * Every update writes the next version's image with host stores
 * (oms_mr_write, coherent with the device: a speculative ordered read of a
 * line it changes is squashed and retried, seed 004), one cache line at a
 * time, in the order the item's protocol needs for its gets to be correct:
 *
 *   Single Read  footer version, the value back to front, header version:
 *                a reader that reads header first and footer last and sees
 *                them equal read no line of a later write (its footer would
 *                differ) and no line of an unfinished one (its header is
 *                written last).
 *   Validation   version odd, the value, version even (a seqlock): both
 *                reads see the same even version only if no write began
 *                or ended between them.
 *   FaRM         the header line, then every other line, each a whole line
 *                carrying the version: a line is read whole, so a line
 *                showing version v holds v's bytes; all lines showing the
 *                header's version hold one version.  Needs no read order.
 *   Pessimistic  compare-and-swap the lock word from 0 (no reader, no
 *                writer) to the writer bit through the NIC, write, clear
 *                the bit with fetch-and-add through the NIC.  Readers'
 *                fetch-and-adds are NIC atomics too; NIC and CPU atomics on
 *                one word are not atomic with each other on RDMA NICs, so
 *                the writer's context connects to the server's own
 *                listener and uses the same path.
 *
 * Writers exclude each other per item with a host-only version word
 * (odd = taken), so any number of writer threads may update any keys.
 * A table that clients update too (OMS_KVS_TABLE_REMOTE_WRITE) is written
 * through the NIC instead, as the clients write it (nic_writer.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "ctx_users.h"
#include "kvs/kvs_priv.h"
#include "util/clock.h"
#include "util/export.h"

/*
 * Store order between the pieces of one update: each piece is visible to
 * the device before the next one.  oms_mr_write() takes the device's lock
 * on emu; on x86 (TSO) host stores are seen in program order anyway, and
 * this is a compiler barrier; elsewhere it is the release fence the
 * protocols need.
 */
#define kvs_store_order() __atomic_thread_fence(__ATOMIC_RELEASE)

struct oms_kvs_writer {
	struct oms_kvs_server *s;
	struct oms_ctx *ctx;		/* Pessimistic: NIC atomics */
	struct oms_rmr rmr;		/* connection to the own listener */
	uint8_t *img, *val;
};

/*
 * The listener reached must serve @s's own region, not another server's
 * of the same size (another fabric, another host): read its directory's
 * nonce through the connection.
 */
static int writer_same_server(struct oms_kvs_writer *w,
			      const struct oms_kvs_server *s)
{
	uint64_t nonce = 0;
	int err = oms_get(w->ctx, &nonce, &w->rmr,
			  offsetof(struct kvs_dir, nonce), sizeof(nonce),
			  OMS_READ_RELAXED);

	if (!err)
		err = oms_quiet(w->ctx);
	if (err)
		return err;
	return nonce == ((const struct kvs_dir *)s->mem)->nonce ? 0 : -EPROTO;
}

static uint32_t connect_timeout_ms(const struct oms_ctx *ctx)
{
	uint32_t t = oms_ctx_timeout_ms(ctx);

	return t > 5000 ? t : 5000;
}

OMS_EXPORT int oms_kvs_writer_create(struct oms_kvs_server *s,
				    struct oms_ctx *ctx, const char *host,
				    struct oms_kvs_writer **out)
{
	struct oms_kvs_writer *w;
	int err = 0;

	int nic = s && (s->has_pessimistic || s->has_remote_write);

	if (!s || !out || (nic && !ctx))
		return -EINVAL;
	if (nic && !s->listener)
		return -ENOTCONN;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->s = s;
	w->ctx = ctx;
	w->img = malloc(s->max_stride);
	w->val = malloc(OMS_KVS_MAX_VALUE);
	if (!w->img || !w->val)
		err = -ENOMEM;
	if (!err && nic) {
		if (!host)
			host = s->addr[0] ? s->addr : "127.0.0.1";
		/* within the context's own timeout, as its operations: a
		 * server told to wait 20 s for a busy guest's peers waits
		 * as long for its own listener (never less than
		 * oms_connect()'s default) */
		err = oms_connect(ctx, host, s->port,
				  connect_timeout_ms(ctx), &w->rmr);
		/* it must be this very region */
		if (!err && w->rmr.len != s->len)
			err = -EPROTO;
		if (!err)
			err = writer_same_server(w, s);
	}
	if (err) {
		free(w->img);
		free(w->val);
		free(w);
		return err;
	}
	__atomic_add_fetch(&s->writers, 1, __ATOMIC_ACQ_REL);
	if (ctx)
		oms_ctx_user_get(ctx);
	*out = w;
	return 0;
}

OMS_EXPORT int oms_kvs_writer_destroy(struct oms_kvs_writer *w)
{
	if (!w)
		return -EINVAL;
	__atomic_sub_fetch(&w->s->writers, 1, __ATOMIC_ACQ_REL);
	if (w->ctx)
		oms_ctx_user_put(w->ctx);
	free(w->img);
	free(w->val);
	free(w);
	return 0;
}

/* Bytes [@from, @to) of the image, one cache line per host write, the last
 * line first if @backward. */
static int write_lines(struct oms_kvs_writer *w, uint64_t base,
		       uint32_t from, uint32_t to, int backward)
{
	uint32_t first = from / KVS_LINE, last = (to - 1) / KVS_LINE;

	for (uint32_t k = 0; k <= last - first; k++) {
		uint32_t n = backward ? last - k : first + k;
		uint32_t lo = n * KVS_LINE > from ? n * KVS_LINE : from;
		uint32_t hi = n * KVS_LINE + KVS_LINE < to ?
			      n * KVS_LINE + KVS_LINE : to;
		int err = oms_mr_write(w->s->mr, base + lo, w->img + lo,
				       hi - lo);

		if (err)
			return err;
		kvs_store_order();
	}
	return 0;
}

static int write_word(struct oms_kvs_writer *w, uint64_t at, uint64_t v)
{
	int err = oms_mr_write(w->s->mr, at, &v, 8);

	kvs_store_order();
	return err;
}

static int lock_item(struct oms_kvs_writer *w, uint64_t base)
{
	uint64_t old = ~0ull;
	int err = oms_atomic_cas(w->ctx, &w->rmr, base, 0, KVS_WRITER_BIT,
				 &old);

	if (!err)
		err = oms_quiet(w->ctx);
	if (!err && old)
		err = -EBUSY;	/* readers in, or (cannot be) a writer */
	return err;
}

static int unlock_item(struct oms_kvs_writer *w, uint64_t base)
{
	/* adding the bit to a word that has it clears it (mod 2^64) and
	 * leaves the reader count alone */
	int err = oms_atomic_fadd(w->ctx, &w->rmr, base, KVS_WRITER_BIT, NULL);

	return err ? err : oms_quiet(w->ctx);
}

static int write_item(struct oms_kvs_writer *w, const struct kvs_layout *l,
		      uint64_t base, uint64_t nv)
{
	int err = 0;

	switch (l->proto) {
	case OMS_KVS_SINGLE:
		err = write_word(w, base + l->ftr_off, nv);
		if (!err)
			err = write_lines(w, base, 8, l->ftr_off, 1);
		if (!err)
			err = write_word(w, base, nv);
		break;
	case OMS_KVS_VALIDATION:
		err = write_word(w, base, nv - 1);
		if (!err)
			err = write_lines(w, base, 8, l->read_size, 0);
		if (!err)
			err = write_word(w, base, nv);
		break;
	case OMS_KVS_FARM:
		/* line 0 carries the header version */
		err = write_lines(w, base, 0, l->read_size, 0);
		break;
	case OMS_KVS_PESSIMISTIC:
		/* locked by the caller */
		err = write_lines(w, base, 16, l->read_size, 0);
		if (!err)
			err = write_word(w, base + 8, nv);
		if (!err)
			err = unlock_item(w, base);
		break;
	}
	return err;
}

OMS_EXPORT int oms_kvs_update(struct oms_kvs_writer *w, uint32_t table,
			      uint64_t key)
{
	const struct kvs_layout *l;
	uint64_t *vp, v, base;
	int err;

	if (!w || table >= w->s->ntables || key >= w->s->items[table])
		return -EINVAL;
	l = &w->s->lay[table];
	vp = &w->s->ver[table][key];
	v = __atomic_load_n(vp, __ATOMIC_ACQUIRE);
	if ((v & 1) || !__atomic_compare_exchange_n(vp, &v, v | 1, 0,
						    __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return -EBUSY;
	base = w->s->off[table] + key * l->stride;
	if (w->s->flags[table] & OMS_KVS_TABLE_REMOTE_WRITE) {
		/* clients write it too: lock, write, unlock as they do; the
		 * host word only keeps this server's writers apart and
		 * gives the first guess of the version */
		struct kvs_nic_writer nw = {
			.ctx = w->ctx, .rmr = &w->rmr, .img = w->img,
			.val = w->val,
		};
		uint64_t nv = v;

		err = kvs_nic_update(&nw, l, base, key, &nv);
		__atomic_store_n(vp, nv & ~1ull, __ATOMIC_RELEASE);
		return err;
	}
	if (l->proto == OMS_KVS_PESSIMISTIC) {
		err = lock_item(w, base);
		if (err) {
			/* nothing written */
			__atomic_store_n(vp, v, __ATOMIC_RELEASE);
			return err;
		}
	}
	kvs_item_build(l, key, v + 2, w->val, w->img);
	err = write_item(w, l, base, v + 2);
	__atomic_store_n(vp, v + 2, __ATOMIC_RELEASE);
	return err;
}
