// SPDX-License-Identifier: MIT
/*
 * KVS updates through the NIC: a client's remote writer
 * (oms_kvs_client_update) and a server writer on a table that clients also
 * write (oms_kvs_update on an OMS_KVS_TABLE_REMOTE_WRITE table).  CPU and
 * NIC atomics on one word are not atomic with each other on RDMA NICs, so
 * every writer of such a table goes through the NIC.
 *
 * Writers exclude each other with a compare-and-swap on a word the readers
 * already check, so no layout needs a lock word of its own:
 *   Single Read  the header version.  Odd while a writer has the item; the
 *                footer is never odd, so a reader sees header != footer
 *                and retries.
 *   Validation   the seqlock word: the CAS to odd is the protocol's first
 *                write.
 *   FaRM         line 0's version: odd differs from every other line's,
 *                and readers refuse an odd one (an item of one line has
 *                no other line to differ from).
 *   Pessimistic  the lock word, 0 -> writer bit, as readers expect.
 *
 * After the CAS (complete: its result decides) the protocol's write order
 * (why it keeps gets correct: writer.c) costs no further round trip until
 * the final quiet: a fence orders Single Read's footer before its value,
 * and the last store - the version word as an OMS_STORE_RELEASE put, or
 * Pessimistic's unlocking fetch-and-add behind a fence - is performed at
 * the server only after every earlier put of this context to it.
 */
#include <errno.h>

#include "ctx_users.h"
#include "kvs/kvs_priv.h"

#define CAS_TRIES 4	/* a stale guess costs one more round trip each */

/* Take the version word at @base from even *@ver to odd. */
static int lock_version(const struct kvs_nic_writer *w, uint64_t base,
			uint64_t *ver)
{
	uint64_t want = *ver & ~1ull;

	for (int i = 0; i < CAS_TRIES; i++) {
		uint64_t old = ~0ull;
		int err = oms_atomic_cas(w->ctx, w->rmr, base, want, want + 1,
					 &old);

		if (!err)
			err = oms_quiet(w->ctx);
		if (err)
			return err;
		if (old == want) {
			*ver = want;
			return 0;
		}
		if (old & 1) {
			/* a writer is making old + 1 */
			*ver = old + 1;
			return -EBUSY;
		}
		want = old;	/* the guess was stale: the word says */
	}
	*ver = want;
	return -EBUSY;
}

static int put(const struct kvs_nic_writer *w, uint64_t base, uint32_t from,
	       uint32_t to, enum oms_store_class cls)
{
	return oms_put(w->ctx, w->rmr, base + from, w->img + from, to - from,
		       cls);
}

/* Single Read, Validation, FaRM: locked by the odd version word. */
static int write_versioned(const struct kvs_nic_writer *w,
			   const struct kvs_layout *l, uint64_t base)
{
	uint32_t head = l->read_size < KVS_LINE ? l->read_size : KVS_LINE;
	int err = 0;

	switch (l->proto) {
	case OMS_KVS_SINGLE:
		/* footer, then the value: a reader whose last (footer) read
		 * sees the old version read no new value line */
		err = put(w, base, l->ftr_off, l->ftr_off + 8, OMS_STORE_WEAK);
		if (!err)
			err = oms_fence(w->ctx, w->rmr->dest);
		if (!err)
			err = put(w, base, 8, l->ftr_off, OMS_STORE_WEAK);
		if (!err)
			err = put(w, base, 0, 8, OMS_STORE_RELEASE);
		break;
	case OMS_KVS_VALIDATION:
		err = put(w, base, 8, l->read_size, OMS_STORE_WEAK);
		if (!err)
			err = put(w, base, 0, 8, OMS_STORE_RELEASE);
		break;
	case OMS_KVS_FARM:
		/* every line whole; line 0, which holds the lock, last */
		if (l->read_size > head)
			err = put(w, base, head, l->read_size, OMS_STORE_WEAK);
		if (!err)
			err = put(w, base, 0, head, OMS_STORE_RELEASE);
		break;
	default:
		err = -EINVAL;
	}
	return err;
}

static int update_pessimistic(const struct kvs_nic_writer *w,
			      const struct kvs_layout *l, uint64_t base,
			      uint64_t key, uint64_t *ver)
{
	uint64_t old = ~0ull, cur = 0;
	int err;

	/* the acquire read is performed after the CAS: it reads the version
	 * under the lock when the CAS took it (no second round trip) */
	err = oms_atomic_cas(w->ctx, w->rmr, base, 0, KVS_WRITER_BIT, &old);
	if (!err)
		err = oms_get(w->ctx, &cur, w->rmr, base + l->ver_off, 8,
			      OMS_READ_ACQUIRE);
	if (!err)
		err = oms_quiet(w->ctx);
	if (err)
		return err;
	if (old)
		return -EBUSY;	/* readers in, or another writer */
	kvs_item_build(l, key, cur + 2, w->val, w->img);
	err = put(w, base, l->value_off, l->read_size, OMS_STORE_WEAK);
	if (!err)
		err = put(w, base, l->ver_off, l->ver_off + 8, OMS_STORE_WEAK);
	/* the fetch-and-add waits for the fence, the fence for the puts */
	if (!err)
		err = oms_fence(w->ctx, w->rmr->dest);
	if (!err)
		err = oms_atomic_fadd(w->ctx, w->rmr, base, KVS_WRITER_BIT,
				      NULL);
	if (!err)
		err = oms_quiet(w->ctx);
	if (!err)
		*ver = cur + 2;
	return err;
}

int kvs_nic_update(const struct kvs_nic_writer *w,
		   const struct kvs_layout *l, uint64_t base, uint64_t key,
		   uint64_t *ver)
{
	int err;

	if (l->proto == OMS_KVS_PESSIMISTIC)
		return update_pessimistic(w, l, base, key, ver);
	err = lock_version(w, base, ver);
	if (err)
		return err;
	kvs_item_build(l, key, *ver + 2, w->val, w->img);
	err = write_versioned(w, l, base);
	if (!err)
		err = oms_quiet(w->ctx);
	if (!err)
		*ver += 2;
	return err;
}
