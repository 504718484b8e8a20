// SPDX-License-Identifier: MIT
/*
 * Device memory through a sequenced queue (seed 004 section 4.2, litmus
 * L40): MMIO-Store, MMIO-Load and MMIO-Acquire.
 *
 * A store is a sequenced message (op store): the destination's reorder
 * buffer applies it in program order.  A load is a sequenced one-chunk
 * request (op load), so the same reorder buffer performs it after the
 * thread's earlier stores: that is what makes a load read its own writes
 * with no fence, whatever order the chunks took on the way.  The device
 * answers in a response slot in host memory; the CPU polls the slot's done
 * word.  An acquire is a load that returns only with its answer, followed
 * by oms_barrier_rd_acquire(), so the thread's later operations come after the
 * device performed the read.  Formats: include/oms_tx.h.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "tx/tx_priv.h"
#include "util/clock.h"

#define TX_RESP_DONE	(1ull << 63)
#define TX_TAG_MASK	0x7fffffffu	/* tags are returned as an int */

/*
 * Response slots.  A load takes any free slot; its tag is (count of loads
 * posted on the queue << log2(slots)) | slot, so the device finds the slot
 * in the tag's low bits and a tag of an earlier use of the same slot never
 * names the current one (until the count wraps, after 2^25 loads or more).
 * ld_busy: slots whose tag a caller still holds.  ld_lost: slots whose
 * blocking load gave up (-ETIMEDOUT) and whose answer nobody will collect:
 * not reused until that answer arrives, or a late answer would land on a
 * later load's slot.
 */
static uint64_t tx_slots_mask(const struct oms_tx_queue *q)
{
	return q->resp_slots == 64 ? ~0ull : (1ull << q->resp_slots) - 1;
}

static uint64_t *tx_resp_word(const struct oms_tx_queue *q, uint32_t tag)
{
	return (uint64_t *)(void *)(q->resp + (size_t)(tag & (q->resp_slots - 1)) *
				    OMS_TX_RESP_SLOT);
}

static int tx_answered(const struct oms_tx_queue *q, uint32_t tag)
{
	uint64_t w = __atomic_load_n(tx_resp_word(q, tag), __ATOMIC_ACQUIRE);

	return (w & TX_RESP_DONE) && (uint32_t)w == tag;
}

/* Free the lost slots whose answer has come. */
static void tx_reclaim_lost(struct oms_tx_queue *q)
{
	for (uint64_t m = q->ld_lost; m; m &= m - 1) {
		unsigned slot = (unsigned)__builtin_ctzll(m);

		if (tx_answered(q, q->ld_tags[slot]))
			q->ld_lost &= ~(1ull << slot);
	}
}

/* A free slot (lowest first), or -1. */
static int tx_free_slot(struct oms_tx_queue *q)
{
	uint64_t free = ~(q->ld_busy | q->ld_lost) & tx_slots_mask(q);

	if (!free && q->ld_lost) {
		tx_reclaim_lost(q);
		free = ~(q->ld_busy | q->ld_lost) & tx_slots_mask(q);
	}
	return free ? __builtin_ctzll(free) : -1;
}

OMS_EXPORT int oms_tx_queue_set_resp(struct oms_tx_queue *q, void *area,
				     size_t len)
{
	size_t n = len / OMS_TX_RESP_SLOT;

	if (!q || !area || (uintptr_t)area % 64 || len % OMS_TX_RESP_SLOT ||
	    !n || n > OMS_TX_RESP_MAX_SLOTS || (n & (n - 1)))
		return -EINVAL;
	if (q->cls != OMS_TX_SEQUENCED)
		return -EOPNOTSUPP;
	if (q->resp)
		tx_reclaim_lost(q);
	if (q->ld_busy || q->ld_lost)
		return -EBUSY;
	memset(area, 0, len);
	q->resp = area;
	q->resp_slots = (uint32_t)n;
	return 0;
}

OMS_EXPORT int oms_tx_store(struct oms_tx_queue *q, uint64_t addr,
			    const void *buf, size_t len)
{
	int r;

	if (!q || !buf || !len || addr > UINT64_MAX - len)
		return -EINVAL;
	if (q->cls != OMS_TX_SEQUENCED)
		return -EOPNOTSUPP;
	if (len > q->max_payload - 8)
		return -EINVAL;
	memcpy(q->stbuf, &addr, 8);
	memcpy(q->stbuf + 8, buf, len);
	r = tx_send_op(q, OMS_TX_OP_STORE, q->stbuf, len + 8);
	if (!r)
		q->st.stores++;
	return r;
}

/* Argument checks shared by every load; 0 or the -errno to return. */
static int tx_load_check(struct oms_tx_queue *q, uint64_t addr,
			 size_t len, unsigned flags)
{
	if (!q || !len || len > OMS_TX_LD_MAX || (flags & ~OMS_TX_LD_FLAGS) ||
	    addr > UINT64_MAX - len)
		return -EINVAL;
	if (q->cls != OMS_TX_SEQUENCED)
		return -EOPNOTSUPP;
	if (!q->resp)
		return -ENXIO;
	if (tx_free_slot(q) < 0)
		return -EBUSY;
	return 0;
}

static int tx_load_send(struct oms_tx_queue *q, uint64_t addr, size_t len,
			unsigned flags)
{
	uint32_t slot = (uint32_t)tx_free_slot(q);	/* checked: >= 0 */
	uint32_t shift = (uint32_t)__builtin_ctz(q->resp_slots);
	uint32_t tag = ((q->ld_count << shift) | slot) & TX_TAG_MASK;
	uint32_t len32 = (uint32_t)len;
	uint8_t req[16];
	int64_t pub;
	int r;

	memcpy(req, &addr, 8);
	memcpy(req + 8, &len32, 4);
	memcpy(req + 12, &tag, 4);
	r = tx_send_op(q, (flags & OMS_TX_LD_RELAXED) ? OMS_TX_OP_LOAD_RELAXED :
							OMS_TX_OP_LOAD,
		       req, sizeof(req));
	if (r)
		return r;
	q->ld_len[slot] = (uint16_t)len;
	q->ld_tags[slot] = tag;
	q->ld_count++;
	q->st.loads++;
	/* the request has to reach the device, and the stores before it
	 * with it: publishing is the emulation's way out of the WC buffers.
	 * Only the ioctl window can fail here (the module refused the call);
	 * the request stays queued for a later flush and may still be
	 * answered, so its slot is held like a timed-out load's. */
	pub = oms_tx_flush(q);
	if (pub < 0) {
		q->ld_lost |= 1ull << slot;
		return (int)pub;
	}
	q->ld_busy |= 1ull << slot;
	return (int)tag;
}

OMS_EXPORT int oms_tx_load_post(struct oms_tx_queue *q, uint64_t addr,
				size_t len, unsigned flags)
{
	int r = tx_load_check(q, addr, len, flags);

	return r ? r : tx_load_send(q, addr, len, flags);
}

/* Spin until the done word answers @tag; 0 or -ETIMEDOUT.  Yields now and
 * then: the device may be a thread on the same core. */
static int tx_resp_poll(const uint64_t *word, uint32_t tag,
			uint32_t timeout_ms, uint64_t *out)
{
	uint64_t deadline = 0;

	for (unsigned spin = 1;; spin++) {
		uint64_t w = __atomic_load_n(word, __ATOMIC_RELAXED);

		if ((w & TX_RESP_DONE) && (uint32_t)w == tag) {
			*out = w;
			return 0;
		}
		if (spin % 64)
			continue;
		sched_yield();
		if (!deadline)
			deadline = oms_now_ns() + timeout_ms * 1000000ull;
		else if (oms_now_ns() > deadline)
			return -ETIMEDOUT;
	}
}

static int tx_tag_check(const struct oms_tx_queue *q, int tag, size_t len)
{
	uint32_t slot;

	if (tag < 0 || !q->resp)
		return -ENOENT;
	slot = (uint32_t)tag & (q->resp_slots - 1);
	/* outstanding, and the slot's current use, not an earlier one */
	if (!(q->ld_busy & (1ull << slot)) || q->ld_tags[slot] != (uint32_t)tag)
		return -ENOENT;
	return len == q->ld_len[slot] ? 0 : -EINVAL;
}

/* Collect the answer to @tag; @acquire picks the barrier after the done
 * word: only the answer's bytes, or everything the thread does next. */
static int tx_load_finish(struct oms_tx_queue *q, int tag, void *buf,
			  size_t len, int acquire)
{
	uint64_t *word = tx_resp_word(q, (uint32_t)tag), w;
	unsigned status;
	int r = tx_resp_poll(word, (uint32_t)tag, q->ld_timeout_ms, &w);

	if (r)
		return r;
	if (acquire)
		oms_barrier_rd_acquire();
	else
		oms_barrier_from_device();
	q->ld_busy &= ~(1ull << ((uint32_t)tag & (q->resp_slots - 1)));
	status = (unsigned)(w >> 48) & 0xff;
	if (status)
		return status == EFAULT ? -EFAULT : -EIO;
	if (((w >> 32) & 0xffff) != len)
		return -EIO;
	memcpy(buf, (uint8_t *)word + 64, len);
	return 0;
}

OMS_EXPORT int oms_tx_load_wait(struct oms_tx_queue *q, int tag, void *buf,
				size_t len)
{
	int r;

	if (!q || !buf)
		return -EINVAL;
	r = tx_tag_check(q, tag, len);
	return r ? r : tx_load_finish(q, tag, buf, len, 0);
}

/* A blocking load: post, wait; on -ETIMEDOUT nobody holds the tag, so
 * the slot is lost until its answer comes (see tx_free_slot). */
static int tx_load_blocking(struct oms_tx_queue *q, uint64_t addr, void *buf,
			    size_t len, unsigned flags, int acquire)
{
	int tag = buf ? tx_load_check(q, addr, len, flags) : -EINVAL;
	uint32_t slot;
	int r;

	if (tag)
		return tag;
	tag = tx_load_send(q, addr, len, flags);
	if (tag < 0)
		return tag;
	r = tx_load_finish(q, tag, buf, len, acquire);
	if (r == -ETIMEDOUT) {
		slot = (uint32_t)tag & (q->resp_slots - 1);
		q->ld_busy &= ~(1ull << slot);
		q->ld_lost |= 1ull << slot;
	}
	return r;
}

OMS_EXPORT int oms_tx_load(struct oms_tx_queue *q, uint64_t addr, void *buf,
			   size_t len, unsigned flags)
{
	return tx_load_blocking(q, addr, buf, len, flags, 0);
}

OMS_EXPORT int oms_tx_acquire(struct oms_tx_queue *q, uint64_t addr,
			      void *buf, size_t len)
{
	return tx_load_blocking(q, addr, buf, len, 0, 1);
}
