/* SPDX-License-Identifier: MIT */
/*
 * liboms KVS: an item table in one registered region and the four get
 * protocols of the ASPLOS '26 paper, section 6.4 (Single Read,
 * Validation, FaRM, Pessimistic) plus a deliberately broken baseline,
 * over the public API of oms.h only, so the same code runs on every
 * backend.  See docs/kvs.md.
 *
 * Server side: oms_kvs_server_create() lays out one or more tables (one
 * protocol's item layout, a value size, a number of items) in one region,
 * registers it, and oms_kvs_server_listen() serves it with oms_listen().
 * Writers (oms_kvs_writer_create(), one per thread) update items in each
 * protocol's correct write order.  Client side: oms_kvs_client_create()
 * connects, reads and checks the table directory; gets are submitted with
 * oms_kvs_submit() and advanced by oms_kvs_poll(), up to the client's batch
 * outstanding at once.
 *
 * Values are derived from (key, version) (oms_kvs_value_fill()), so a
 * reader can tell a torn value: one whose bytes are not all those of the
 * version the protocol accepted (oms_kvs_value_torn()).  Clients count the
 * torn values they return; for the four correct protocols that count must
 * stay 0 however writers race with readers.
 *
 * Error convention as oms.h: 0 (or a count) on success, a negative errno
 * on failure; a call refused for a bad argument changes no state.
 *
 * Lifetimes: a server, client or writer uses the context it was made
 * with until it is destroyed (its region, listener, connections), so that
 * context refuses oms_ctx_destroy() with -EBUSY, changing nothing, while
 * it exists.  Destroy writers, then their server; clients; then the
 * contexts.  Any other order is safe too: the calls refused with -EBUSY
 * (a context with KVS objects, a server with writers) can be repeated
 * once what they wait for has gone.
 * Threads: a client and a writer are used by one thread at a time, with
 * that thread's context.
 *
 * Part 1: exported calls.  Part 2: static inline helpers.
 */
#ifndef OMS_KVS_H
#define OMS_KVS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "oms.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Get protocols (ASPLOS '26, 6.4); also a table's item layout. */
enum oms_kvs_proto {
	OMS_KVS_SINGLE = 0,	/* header and footer version; one acquire
				 * read; versions equal -> accept */
	OMS_KVS_VALIDATION = 1,	/* seqlock version; acquire read of version
				 * and item, acquire re-read of the version;
				 * equal and even -> accept */
	OMS_KVS_FARM = 2,	/* a version in every cache line; one
				 * relaxed read; all equal -> strip the
				 * versions out into a contiguous value */
	OMS_KVS_PESSIMISTIC = 3, /* lock word: reader count by fetch-and-add,
				 * writer bit by compare-and-swap */
	OMS_KVS_BROKEN = 4,	/* client only: Single Read's layout read
				 * relaxed (lines in any order): tears, which
				 * shows the detector works */
	OMS_KVS_NPROTO = 5,
};

#define OMS_KVS_MAX_TABLES	32
#define OMS_KVS_MAX_VALUE	65536u	/* bytes; values are multiples of 8 */
#define OMS_KVS_MAX_BATCH	512u	/* the paper's Fig 6 goes to 500 */

/* struct oms_kvs_table_spec.flags */
#define OMS_KVS_TABLE_REMOTE_WRITE (1u << 0) /* clients may update items
					   * (oms_kvs_client_update); the
					   * region is then registered for
					   * remote writes */
#define OMS_KVS_TABLE_F_ALL	0x1u

/* One table of a server: @proto is its layout (not OMS_KVS_BROKEN, whose
 * gets use a Single Read table). */
struct oms_kvs_table_spec {
	uint32_t proto;
	uint32_t value_size;	/* 8..OMS_KVS_MAX_VALUE, multiple of 8 */
	uint32_t items;		/* >= 1; keys are 0..items-1 */
	uint32_t flags;		/* OMS_KVS_TABLE_* (was reserved, 0) */
};

/* What a client needs to know of a table (oms_kvs_table_info). */
struct oms_kvs_info {
	uint32_t size;		/* set to sizeof before the call */
	uint32_t proto;		/* as opened (OMS_KVS_BROKEN possible) */
	uint32_t value_size;
	uint32_t items;
	uint32_t buf_size;	/* bytes struct oms_kvs_get.buf must hold */
	uint32_t read_size;	/* bytes the get's main read carries */
	uint32_t stride;	/* bytes per item in the region */
	uint32_t flags;		/* the table's OMS_KVS_TABLE_* */
};

/* struct oms_kvs_client_attr.flags */
#define OMS_KVS_F_NO_DETECT	(1u << 0) /* do not check returned values
					   * against (key, version) */
#define OMS_KVS_F_ALL		0x1u

struct oms_kvs_client_attr {
	uint32_t size;		/* sizeof as the caller was compiled */
	uint32_t flags;		/* OMS_KVS_F_* */
	uint32_t batch;		/* gets outstanding; 0 = 32 */
	uint32_t nconn;		/* connections (QPs on verbs), gets spread
				 * over them; 0 = 1, at most OMS_MAX_NODES */
	uint32_t timeout_ms;	/* oms_connect timeout; 0 = 5000 */
	uint32_t max_retries;	/* a get retried more often fails with
				 * -EAGAIN; 0 = 1000000 */
};

/* One get.  The caller fills the inputs, owns it again when oms_kvs_poll()
 * returns it.  @buf is where the read lands: registered with oms_mr_reg()
 * on the client's context, it is read into without a bounce copy (verbs). */
struct oms_kvs_get {
	struct oms_kvs_table *table;	/* in */
	uint64_t key;			/* in: < items */
	void *buf;			/* in: info.buf_size bytes */
	void *user;			/* in: untouched */
	const void *value;		/* out: value_size bytes in @buf */
	uint64_t version;		/* out: the version returned */
	uint64_t lat_ns;		/* out: submit to return, ns: model
					 * time on an emulated device with a
					 * latency model, else wall time */
	uint32_t retries;		/* out: reads repeated */
	int32_t status;			/* out: 0 or -errno */
	uint32_t torn;			/* out: 1 if the value returned is
					 * not that of (key, version) */
	uint32_t pad;
};

/* Client counters (oms_kvs_client_stats).  @size first: set it. */
struct oms_kvs_stats {
	uint32_t size;
	uint32_t pad;
	uint64_t gets;		/* returned with status 0 */
	uint64_t torn;		/* of those, torn */
	uint64_t retries;	/* reads repeated */
	uint64_t failed;	/* returned with an error */
	uint64_t rounds;	/* issue + quiet rounds */
	uint64_t updates;	/* oms_kvs_client_update() that wrote */
	uint64_t update_busy;	/* of its calls, -EBUSY */
};

struct oms_kvs_server;
struct oms_kvs_writer;
struct oms_kvs_client;
struct oms_kvs_table;

/* ---- Part 1: exported calls ------------------------------------------ */

/*
 * Lay out @n tables (OMS_KVS_MAX_TABLES at most) in one region of @ctx's
 * node: a directory, then each table's items at version 2 with their
 * derived values, and register it for remote reads and atomics (and
 * remote writes if a table has OMS_KVS_TABLE_REMOTE_WRITE: registration
 * is per region, so clients may then write anywhere in it).
 * Errors: -EINVAL (NULL, n 0 or too many, bad spec), -E2BIG (region over
 * 1 GiB), -ENOMEM, and oms_mr_reg()'s errors.
 */
int oms_kvs_server_create(struct oms_ctx *ctx,
			  const struct oms_kvs_table_spec *spec, uint32_t n,
			  struct oms_kvs_server **out);

/*
 * Serve the region with oms_listen(@addr, @port) (@addr NULL or "" = every
 * address).  Errors: -EINVAL, -EALREADY (listening), oms_listen()'s.
 */
int oms_kvs_server_listen(struct oms_kvs_server *s, const char *addr,
			  const char *port);

/* Stop listening, deregister, free.  -EINVAL; -EBUSY while writers of it
 * exist (nothing is changed then). */
int oms_kvs_server_destroy(struct oms_kvs_server *s);

/*
 * A writer for one thread.  @ctx is that thread's own context; it is
 * needed when a table is Pessimistic (may be NULL otherwise): the writer
 * takes and drops the item's lock with compare-and-swap and fetch-and-add
 * through the NIC, over a connection to the server's own listener at
 * @host (NULL: the address the server listens on, or 127.0.0.1), so that
 * its atomics and the readers' are atomic with each other on every
 * backend; the connection waits as long as @ctx's timeout_ms (at least
 * oms_connect()'s 5 s).  Errors: -EINVAL, -ENOTCONN (Pessimistic table, server not
 * listening), -EPROTO (the listener reached serves another server's
 * region: the directory's nonce differs), -ENOMEM, oms_connect()'s, and
 * oms_get()'s / oms_quiet()'s for the nonce's read.
 */
int oms_kvs_writer_create(struct oms_kvs_server *s, struct oms_ctx *ctx,
			  const char *host, struct oms_kvs_writer **out);

/*
 * Write the next version of item @key of table @table (index in the
 * server's spec array) with host stores (oms_mr_write) in the table's
 * protocol's write order.  On a table with OMS_KVS_TABLE_REMOTE_WRITE the
 * writer locks, writes and unlocks through the NIC exactly as a client's
 * oms_kvs_client_update() does (CPU and NIC atomics on one word are not
 * atomic with each other), so @ctx is needed for such tables too.
 * Returns 0; -EBUSY when another writer has the item or (Pessimistic)
 * readers hold it: nothing was written, try later; -EINVAL; the context's
 * errors (Pessimistic, remote-write tables).
 */
int oms_kvs_update(struct oms_kvs_writer *w, uint32_t table, uint64_t key);

/* Free a writer.  -EINVAL. */
int oms_kvs_writer_destroy(struct oms_kvs_writer *w);

/*
 * Connect @ctx to a server at @host:@port (attr->nconn connections), read
 * its directory and check every field against the region's length before
 * use.  @attr may be NULL (defaults).
 * Errors: -EINVAL, -E2BIG (attr tail), -EPROTO (malformed directory),
 * -ENOMEM, oms_connect()'s and oms_quiet()'s.
 */
int oms_kvs_client_create(struct oms_ctx *ctx, const char *host,
			  const char *port,
			  const struct oms_kvs_client_attr *attr,
			  struct oms_kvs_client **out);

/* Free a client; gets submitted but not polled are dropped.  -EINVAL. */
int oms_kvs_client_destroy(struct oms_kvs_client *c);

/*
 * The server's table of @value_size bytes laid out for @proto (Single
 * Read's for OMS_KVS_BROKEN); the handle lives as long as the client.
 * Errors: -EINVAL, -ENOENT (the server has no such table).
 */
int oms_kvs_table_open(struct oms_kvs_client *c, uint32_t proto,
		       uint32_t value_size, struct oms_kvs_table **out);

/* Sizes of a table.  info->size must be set.  -EINVAL. */
int oms_kvs_table_info(const struct oms_kvs_table *t,
		       struct oms_kvs_info *info);

/*
 * Queue @g; its reads are issued by the next oms_kvs_poll().  Errors:
 * -EINVAL (NULL, foreign table, key out of range, no buf), -EAGAIN (batch
 * gets outstanding).
 */
int oms_kvs_submit(struct oms_kvs_client *c, struct oms_kvs_get *g);

/*
 * Advance every outstanding get by one round: issue the operations each
 * needs next (atomics, fences and reads, pipelined), wait for them
 * (oms_quiet), then accept, retry or fail each.  Hands finished gets back
 * in @done (at most @max; more are kept for the next call, which then runs
 * no round) and returns how many, 0 when none finished this round or
 * nothing is outstanding.  A get's own outcome is in its status: 0, the
 * round's error (-ENODEV, -ETIMEDOUT, -EACCES, ...: every get of a round
 * that failed fails with it, nothing hangs), or -EAGAIN after max_retries.
 * Between two calls nothing is in flight.  Errors: -EINVAL.
 */
int oms_kvs_poll(struct oms_kvs_client *c, struct oms_kvs_get **done,
		 uint32_t max);

/*
 * A remote writer (the RDMA synchronization harness's writers, the
 * ASPLOS '26 paper, section 6.4): write the next version of item @key of
 * @t from this client over the NIC, in @t's protocol's write order:
 *
 *   Single Read, Validation, FaRM: compare-and-swap the item's version
 *   word (header, seqlock word, line 0's version) from even v to odd v+1:
 *   that is the writers' lock, and readers reject an odd or unequal
 *   version; then WRITE the rest (Single Read: the footer, a fence, the
 *   value) and last a RELEASE store of the version word, v+2, which is
 *   performed only after every earlier put of this context to the server.
 *   Pessimistic: compare-and-swap the lock word 0 -> writer bit, read the
 *   version, WRITE value and version, fence, fetch-and-add the bit away.
 *
 * Blocks until the update is complete and visible (oms_quiet).  Call it
 * between oms_kvs_poll() calls (nothing of the client is in flight then).
 * If @version is not NULL it gets the version written.
 * Returns 0; -EBUSY: another writer has the item, or (Pessimistic) readers
 * hold it: nothing was written, try later; -EPERM: the table was not made
 * with OMS_KVS_TABLE_REMOTE_WRITE; -EINVAL (NULL, foreign or Broken table,
 * key out of range); the context's errors.  A device that dies in the
 * middle leaves the item locked (odd): its gets then retry until their
 * max_retries.
 */
int oms_kvs_client_update(struct oms_kvs_client *c, struct oms_kvs_table *t,
			  uint64_t key, uint64_t *version);

/* Counters of @c.  stats->size must be set.  -EINVAL. */
int oms_kvs_client_stats(const struct oms_kvs_client *c,
			 struct oms_kvs_stats *stats);

/*
 * The torn-value detector.  fill: the value of (@key, @version), @len
 * bytes (a multiple of 8).  torn: 0 if @buf holds exactly that value, 1
 * if any byte differs.  -EINVAL for NULL or a bad length.
 */
int oms_kvs_value_fill(uint64_t key, uint64_t version, void *buf,
		       size_t len);
int oms_kvs_value_torn(uint64_t key, uint64_t version, const void *buf,
		       size_t len);

/* ---- Part 2: static inline helpers ---------------------------------- */

static inline const char *oms_kvs_proto_name(uint32_t proto)
{
	static const char *const name[OMS_KVS_NPROTO] = {
		"single", "validation", "farm", "pessimistic", "broken",
	};

	return proto < OMS_KVS_NPROTO ? name[proto] : "?";
}

static inline struct oms_kvs_client_attr oms_kvs_client_attr_default(void)
{
	struct oms_kvs_client_attr a;

	/* memset, not "= { 0 }": C++ -Wextra warns about the fields left out. */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	return a;
}

#ifdef __cplusplus
}
#endif
#endif
