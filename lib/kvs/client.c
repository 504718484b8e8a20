// SPDX-License-Identifier: MIT
/*
 * KVS clients: the gets of seed 004 section 6.4 over oms.h.
 *
 * A client has up to @batch gets outstanding.  oms_kvs_poll() runs one
 * round for all of them: it issues what each get needs (pipelined: no get
 * waits for another, and within a get only where its protocol says so),
 * quiets the context once (buffers are valid after oms_quiet()), then
 * accepts, retries or fails each get.  A round is the paper's "batch of
 * gets before polling for completion"; a get that must retry is simply
 * issued again in the next round, together with the new gets submitted in
 * between, so the batch stays full.
 *
 *   Single Read  one OMS_READ_ACQUIRE read of header, value and footer
 *                (lines in address order); header == footer -> accept.
 *   Validation   an acquire read of version + value, then an acquire
 *                re-read of the version, issued back to back: acquire
 *                keeps the re-read from being performed before the first
 *                read, so no round trip is needed between them; equal and
 *                even -> accept.
 *   FaRM         one OMS_READ_RELAXED read; the header's version in every
 *                line -> strip the versions out, moving the value into one
 *                contiguous run in the caller's buffer (part of the get).
 *   Pessimistic  fetch-and-add +1 on the lock word, fence, relaxed read,
 *                fence, fetch-and-add -1: the fences keep the read inside
 *                the reader count's hold without a round trip; the first
 *                fetch-and-add's old value without the writer bit ->
 *                accept, else retry.
 *   Broken       Single Read's layout and check with a relaxed read.
 *
 * Every returned value can be checked against (key, version) (the torn
 * value detector); the client counts torn values it returned.
 */
#include <errno.h>
#include <stdlib.h>

#include "ctx_users.h"
#include "kvs/kvs_priv.h"
#include "util/export.h"

#define DEFAULT_BATCH	32u
#define DEFAULT_RETRIES	1000000u
#define VCACHE		1024u

struct oms_kvs_table {
	struct oms_kvs_client *c;
	struct kvs_layout l;
	uint32_t proto;			/* as opened */
	uint32_t items;
	uint64_t offset;
};

struct kvs_slot {
	struct oms_kvs_get *g;
	uint64_t ver2;			/* Validation: the re-read version */
	uint64_t lock_old;		/* Pessimistic: fetch-and-add's old */
	uint64_t t0;
	uint32_t conn;
};

struct oms_kvs_client {
	struct oms_ctx *ctx;
	struct oms_kvs_client_attr a;
	struct oms_rmr rmr[OMS_MAX_NODES];
	struct kvs_dir dir;
	/* per directory entry: opened as its layout, and as Broken */
	struct oms_kvs_table tab[OMS_KVS_MAX_TABLES];
	struct oms_kvs_table broken[OMS_KVS_MAX_TABLES];
	struct kvs_slot *act;		/* [batch] outstanding */
	struct oms_mr *act_mr;		/* act[] registered: the re-reads
					 * land there without a bounce */
	uint32_t nact;
	struct oms_kvs_get **done;	/* [batch] finished, not handed back */
	uint32_t ndone, done_head;
	uint32_t next_conn;
	struct oms_kvs_stats st;
	/* oms_kvs_client_update(): scratch, made on first use, and each
	 * item's last known version (direct-mapped; a miss costs one more
	 * compare-and-swap round trip, never a wrong write) */
	uint8_t *w_img, *w_val;
	struct { uint64_t tag, ver; } vcache[VCACHE];
};

static int attr_parse(const struct oms_kvs_client_attr *in,
		      struct oms_kvs_client_attr *a)
{
	memset(a, 0, sizeof(*a));
	if (in) {
		if (in->size < sizeof(uint32_t))
			return -EINVAL;
		if (in->size > sizeof(*a)) {
			const unsigned char *p = (const unsigned char *)in;

			for (size_t i = sizeof(*a); i < in->size; i++)
				if (p[i])
					return -E2BIG;
		}
		memcpy(a, in, in->size < sizeof(*a) ? in->size : sizeof(*a));
	}
	a->size = sizeof(*a);
	if ((a->flags & ~OMS_KVS_F_ALL) || a->batch > OMS_KVS_MAX_BATCH ||
	    a->nconn > OMS_MAX_NODES || a->timeout_ms > 600000)
		return -EINVAL;
	if (!a->batch)
		a->batch = DEFAULT_BATCH;
	if (!a->nconn)
		a->nconn = 1;
	if (!a->max_retries)
		a->max_retries = DEFAULT_RETRIES;
	return 0;
}

static void client_free(struct oms_kvs_client *c)
{
	if (c->act_mr)
		oms_mr_dereg(c->act_mr);
	free(c->act);
	free(c->done);
	free(c->w_img);
	free(c->w_val);
	free(c);
}

/* Connect every connection, read the directory, check it. */
static int client_connect(struct oms_kvs_client *c, const char *host,
			  const char *port)
{
	int err;

	for (uint32_t i = 0; i < c->a.nconn; i++) {
		err = oms_connect(c->ctx, host, port, c->a.timeout_ms,
				  &c->rmr[i]);
		if (err)
			return err;
		/* one server, one region: the same length on every one */
		if (c->rmr[i].len != c->rmr[0].len ||
		    c->rmr[i].dest >= OMS_MAX_NODES ||
		    !(c->rmr[i].access & OMS_ACCESS_REMOTE_READ))
			return -EPROTO;
	}
	if (c->rmr[0].len < sizeof(c->dir))
		return -EPROTO;
	err = oms_get(c->ctx, &c->dir, &c->rmr[0], 0, sizeof(c->dir),
		      OMS_READ_RELAXED);
	if (!err)
		err = oms_quiet(c->ctx);
	if (!err)
		err = kvs_dir_check(&c->dir, c->rmr[0].len);
	if (err)
		return err;
	for (uint32_t i = 0; i < c->dir.ntables; i++) {
		const struct kvs_dir_ent *e = &c->dir.t[i];
		struct oms_kvs_table *t = &c->tab[i];

		t->c = c;
		kvs_layout(e->proto, e->value_size, &t->l);
		t->proto = e->proto;
		t->items = e->items;
		t->offset = e->offset;
		if (e->proto == OMS_KVS_SINGLE) {
			c->broken[i] = *t;
			c->broken[i].proto = OMS_KVS_BROKEN;
		}
	}
	return 0;
}

OMS_EXPORT int oms_kvs_client_create(struct oms_ctx *ctx, const char *host,
				    const char *port,
				    const struct oms_kvs_client_attr *attr,
				    struct oms_kvs_client **out)
{
	struct oms_kvs_client *c;
	struct oms_kvs_client_attr a;
	int err;

	if (!ctx || !host || !port || !out)
		return -EINVAL;
	err = attr_parse(attr, &a);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ctx = ctx;
	c->a = a;
	c->st.size = sizeof(c->st);
	c->act = calloc(a.batch, sizeof(*c->act));
	c->done = calloc(a.batch, sizeof(*c->done));
	err = c->act && c->done ? client_connect(c, host, port) : -ENOMEM;
	/* Reads into registered memory need no bounce buffer (verbs); an
	 * unregistered landing place is still correct, so a failure here
	 * only costs a copy.  The least access the call takes: nobody is
	 * told the key. */
	if (!err && oms_mr_reg(ctx, c->act, a.batch * sizeof(*c->act),
			       OMS_ACCESS_REMOTE_READ, &c->act_mr))
		c->act_mr = NULL;
	if (err) {
		client_free(c);
		return err;
	}
	oms_ctx_user_get(ctx);
	*out = c;
	return 0;
}

OMS_EXPORT int oms_kvs_client_destroy(struct oms_kvs_client *c)
{
	struct oms_ctx *ctx;

	if (!c)
		return -EINVAL;
	/* nothing is in flight between polls: each round ends in a quiet */
	ctx = c->ctx;
	client_free(c);
	oms_ctx_user_put(ctx);
	return 0;
}

OMS_EXPORT int oms_kvs_table_open(struct oms_kvs_client *c, uint32_t proto,
				  uint32_t value_size,
				  struct oms_kvs_table **out)
{
	uint32_t layout = proto == OMS_KVS_BROKEN ? OMS_KVS_SINGLE : proto;

	if (!c || !out || proto >= OMS_KVS_NPROTO)
		return -EINVAL;
	for (uint32_t i = 0; i < c->dir.ntables; i++) {
		if (c->dir.t[i].proto != layout ||
		    c->dir.t[i].value_size != value_size)
			continue;
		*out = proto == OMS_KVS_BROKEN ? &c->broken[i] : &c->tab[i];
		return 0;
	}
	return -ENOENT;
}

OMS_EXPORT int oms_kvs_table_info(const struct oms_kvs_table *t,
				  struct oms_kvs_info *info)
{
	struct oms_kvs_info i;

	if (!t || !info || info->size < sizeof(uint32_t))
		return -EINVAL;
	memset(&i, 0, sizeof(i));
	i.size = info->size < sizeof(i) ? info->size : (uint32_t)sizeof(i);
	i.proto = t->proto;
	i.value_size = t->l.value_size;
	i.items = t->items;
	i.buf_size = t->l.read_size;
	i.read_size = t->l.read_size;
	i.stride = t->l.stride;
	i.flags = t->c->dir.t[t->proto == OMS_KVS_BROKEN ?
			      t - t->c->broken : t - t->c->tab].flags;
	memcpy(info, &i, i.size);
	return 0;
}

static int table_ours(const struct oms_kvs_client *c,
		      const struct oms_kvs_table *t)
{
	return (t >= c->tab && t < c->tab + c->dir.ntables) ||
	       (t >= c->broken && t < c->broken + c->dir.ntables &&
		t->proto == OMS_KVS_BROKEN);
}

OMS_EXPORT int oms_kvs_submit(struct oms_kvs_client *c, struct oms_kvs_get *g)
{
	struct kvs_slot *s;

	if (!c || !g || !g->table || !table_ours(c, g->table) || !g->buf ||
	    g->key >= g->table->items)
		return -EINVAL;
	if (c->nact + c->ndone >= c->a.batch)
		return -EAGAIN;
	g->value = NULL;
	g->version = 0;
	g->lat_ns = 0;
	g->retries = 0;
	g->status = 0;
	g->torn = 0;
	s = &c->act[c->nact++];
	*s = (struct kvs_slot){ .g = g, .t0 = oms_ctx_clock_ns(c->ctx),
				.conn = c->next_conn };
	c->next_conn = (c->next_conn + 1) % c->a.nconn;
	return 0;
}

/* An operation; -EAGAIN (a NONBLOCK context's full queue) drives progress
 * and tries again. */
#define ISSUE(c, call)							\
	({								\
		int _r;							\
		while ((_r = (call)) == -EAGAIN) {			\
			int _p = oms_progress((c)->ctx);		\
			if (_p < 0) {					\
				_r = _p;				\
				break;					\
			}						\
		}							\
		_r;							\
	})

static uint64_t item_off(const struct kvs_slot *s)
{
	const struct oms_kvs_table *t = s->g->table;

	return t->offset + s->g->key * t->l.stride;
}

/* Pessimistic: the reader count, +1 before the reads or -1 after. */
static int issue_counts(struct oms_kvs_client *c, uint64_t add,
			uint32_t *dests)
{
	for (uint32_t i = 0; i < c->nact; i++) {
		struct kvs_slot *s = &c->act[i];
		const struct oms_rmr *r = &c->rmr[s->conn];
		int err;

		if (s->g->table->proto != OMS_KVS_PESSIMISTIC)
			continue;
		err = ISSUE(c, oms_atomic_fadd(c->ctx, r, item_off(s), add,
					       add == 1 ? &s->lock_old : NULL));
		if (err)
			return err;
		*dests |= 1u << r->dest;
	}
	return 0;
}

static int fence_dests(struct oms_kvs_client *c, uint32_t dests)
{
	for (uint32_t d = 0; d < OMS_MAX_NODES; d++) {
		int err = dests & (1u << d) ? oms_fence(c->ctx, d) : 0;

		if (err)
			return err;
	}
	return 0;
}

static int issue_reads(struct oms_kvs_client *c)
{
	for (uint32_t i = 0; i < c->nact; i++) {
		struct kvs_slot *s = &c->act[i];
		const struct oms_kvs_table *t = s->g->table;
		const struct oms_rmr *r = &c->rmr[s->conn];
		unsigned flags = t->proto == OMS_KVS_SINGLE ||
				 t->proto == OMS_KVS_VALIDATION ?
				 OMS_READ_ACQUIRE : OMS_READ_RELAXED;
		int err = ISSUE(c, oms_get(c->ctx, s->g->buf, r, item_off(s),
					   t->l.read_size, flags));

		if (!err && t->proto == OMS_KVS_VALIDATION)
			err = ISSUE(c, oms_get(c->ctx, &s->ver2, r,
					       item_off(s), 8,
					       OMS_READ_ACQUIRE));
		if (err)
			return err;
	}
	return 0;
}

/* One round's operations, then its quiet. */
static int round_issue(struct oms_kvs_client *c)
{
	uint32_t dests = 0;
	int err, q;

	err = issue_counts(c, 1, &dests);
	if (!err)
		err = fence_dests(c, dests);
	if (!err)
		err = issue_reads(c);
	if (!err)
		err = fence_dests(c, dests);
	if (!err)
		err = issue_counts(c, (uint64_t)-1, &dests);
	/* whatever was issued completes (or fails) before we look */
	q = oms_quiet(c->ctx);
	/* A failed round is reported with its gets; the next round is
	 * independent of it, so the context forgets the failure (else the
	 * library would cancel the next round's fenced reads). */
	if (err || q)
		oms_ctx_resume(c->ctx);
	return err ? err : q;
}

/* FaRM: move each line's value bytes down over the versions, so the value
 * is one contiguous run from buf + 8. */
static void farm_strip(const struct kvs_layout *l, uint8_t *buf)
{
	for (uint32_t n = 1; n < l->lines; n++) {
		uint32_t at = n * KVS_FARM_CHUNK;
		uint32_t len = l->value_size - at < KVS_FARM_CHUNK ?
			       l->value_size - at : KVS_FARM_CHUNK;

		memmove(buf + 8 + at, buf + n * KVS_LINE + 8, len);
	}
}

/* Whether get @s may return what it read; sets its version. */
static int get_ok(struct kvs_slot *s)
{
	const struct oms_kvs_table *t = s->g->table;
	const struct kvs_layout *l = &t->l;
	uint8_t *buf = s->g->buf;
	uint64_t h = kvs_load64(buf);

	switch (t->proto) {
	case OMS_KVS_SINGLE:
	case OMS_KVS_BROKEN:
		s->g->version = h;
		return h == kvs_load64(buf + l->ftr_off);
	case OMS_KVS_VALIDATION:
		s->g->version = h;
		return h == s->ver2 && !(h & 1);
	case OMS_KVS_FARM:
		/* odd: a remote writer holds it - also an item of one line,
		 * which has no other line's version to differ from */
		if (h & 1)
			return 0;
		for (uint32_t n = 1; n < l->lines; n++)
			if (kvs_load64(buf + n * KVS_LINE) != h)
				return 0;
		farm_strip(l, buf);
		s->g->version = h;
		return 1;
	case OMS_KVS_PESSIMISTIC:
		s->g->version = kvs_load64(buf + l->ver_off);
		return !(s->lock_old & KVS_WRITER_BIT);
	}
	return 0;
}

static void finish(struct oms_kvs_client *c, uint32_t i, int status,
		   uint64_t now)
{
	struct kvs_slot *s = &c->act[i];
	struct oms_kvs_get *g = s->g;

	g->status = status;
	g->lat_ns = now - s->t0;
	if (status) {
		g->value = NULL;
		c->st.failed++;
	} else {
		g->value = (uint8_t *)g->buf + g->table->l.value_off;
		if (!(c->a.flags & OMS_KVS_F_NO_DETECT))
			g->torn = oms_kvs_value_torn(g->key, g->version,
						     g->value,
						     g->table->l.value_size)
				  == 1;
		c->st.gets++;
		c->st.torn += g->torn;
	}
	c->done[(c->done_head + c->ndone++) % c->a.batch] = g;
	*s = c->act[--c->nact];
}

static uint32_t hand_back(struct oms_kvs_client *c, struct oms_kvs_get **done,
			  uint32_t max)
{
	uint32_t n = 0;

	while (n < max && c->ndone) {
		done[n++] = c->done[c->done_head];
		c->done_head = (c->done_head + 1) % c->a.batch;
		c->ndone--;
	}
	return n;
}

OMS_EXPORT int oms_kvs_poll(struct oms_kvs_client *c,
			    struct oms_kvs_get **done, uint32_t max)
{
	uint64_t now;
	int err;

	if (!c || !done || !max)
		return -EINVAL;
	if (c->ndone || !c->nact)
		return (int)hand_back(c, done, max);
	err = round_issue(c);
	c->st.rounds++;
	now = oms_ctx_clock_ns(c->ctx);
	for (uint32_t i = c->nact; i-- > 0;) {
		struct kvs_slot *s = &c->act[i];

		if (err) {
			finish(c, i, err, now);
		} else if (get_ok(s)) {
			finish(c, i, 0, now);
		} else if (++s->g->retries > c->a.max_retries) {
			finish(c, i, -EAGAIN, now);
		} else {
			c->st.retries++;
		}
	}
	return (int)hand_back(c, done, max);
}

OMS_EXPORT int oms_kvs_client_stats(const struct oms_kvs_client *c,
				    struct oms_kvs_stats *stats)
{
	struct oms_kvs_stats s;

	if (!c || !stats || stats->size < sizeof(uint32_t))
		return -EINVAL;
	s = c->st;
	s.size = stats->size < sizeof(s) ? stats->size : (uint32_t)sizeof(s);
	memcpy(stats, &s, s.size);
	return 0;
}

OMS_EXPORT int oms_kvs_client_update(struct oms_kvs_client *c,
				    struct oms_kvs_table *t, uint64_t key,
				    uint64_t *version)
{
	uint32_t idx, conn, slot;
	uint64_t tag, ver;
	struct kvs_nic_writer w;
	int err;

	if (!c || !t || !table_ours(c, t) || t->proto == OMS_KVS_BROKEN ||
	    key >= t->items)
		return -EINVAL;
	idx = (uint32_t)(t - c->tab);
	conn = (uint32_t)(key % c->a.nconn);
	if (!(c->dir.t[idx].flags & OMS_KVS_TABLE_REMOTE_WRITE) ||
	    !(c->rmr[conn].access & OMS_ACCESS_REMOTE_WRITE))
		return -EPERM;
	if (!c->w_img) {
		uint32_t max = 0;

		for (uint32_t i = 0; i < c->dir.ntables; i++)
			if (c->tab[i].l.stride > max)
				max = c->tab[i].l.stride;
		/* a value is shorter than its item */
		c->w_img = malloc(max);
		c->w_val = malloc(max);
		if (!c->w_img || !c->w_val) {
			free(c->w_img);
			free(c->w_val);
			c->w_img = c->w_val = NULL;
			return -ENOMEM;
		}
	}
	tag = ((uint64_t)idx << 48 | key) + 1;
	slot = (uint32_t)((tag * 0x9e3779b97f4a7c15ull) >> 54) % VCACHE;
	ver = c->vcache[slot].tag == tag ? c->vcache[slot].ver :
	      KVS_FIRST_VERSION;
	w = (struct kvs_nic_writer){ .ctx = c->ctx, .rmr = &c->rmr[conn],
				     .img = c->w_img, .val = c->w_val };
	err = kvs_nic_update(&w, &t->l, t->offset + key * t->l.stride, key,
			     &ver);
	if (!err || err == -EBUSY) {
		c->vcache[slot].tag = tag;
		c->vcache[slot].ver = ver;
	}
	if (!err) {
		c->st.updates++;
		if (version)
			*version = ver;
	} else if (err == -EBUSY) {
		c->st.update_busy++;
	}
	return err;
}
