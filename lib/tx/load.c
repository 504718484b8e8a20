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
 * by oms_tx_rd_acquire(), so the thread's later operations come after the
 * device performed the read.  Formats: include/oms_tx.h.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "tx/tx_priv.h"

#define TX_RESP_DONE	(1ull << 63)
#define TX_TAG_MASK	0x7fffffffu	/* tags are returned as an int */

OMS_TX_EXPORT int oms_tx_queue_set_resp(struct oms_tx_queue *q, void *area,
					size_t len)
{
	size_t n = len / OMS_TX_RESP_SLOT;

	if (!q || !area || (uintptr_t)area % 64 || len % OMS_TX_RESP_SLOT ||
	    !n || n > OMS_TX_RESP_MAX_SLOTS || (n & (n - 1)))
		return -EINVAL;
	if (q->cls != OMS_TX_SEQUENCED)
		return -EOPNOTSUPP;
	if (q->ld_busy)
		return -EBUSY;
	memset(area, 0, len);
	q->resp = area;
	q->resp_slots = (uint32_t)n;
	return 0;
}

OMS_TX_EXPORT int oms_tx_store(struct oms_tx_queue *q, uint64_t addr,
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

static uint64_t *tx_resp_word(const struct oms_tx_queue *q, uint32_t tag)
{
	return (uint64_t *)(void *)(q->resp + (size_t)(tag & (q->resp_slots - 1)) *
				    OMS_TX_RESP_SLOT);
}

/* Argument checks shared by every load; 0 or the -errno to return. */
static int tx_load_check(const struct oms_tx_queue *q, uint64_t addr,
			 size_t len, unsigned flags)
{
	if (!q || !len || len > OMS_TX_LD_MAX || (flags & ~OMS_TX_LD_FLAGS) ||
	    addr > UINT64_MAX - len)
		return -EINVAL;
	if (q->cls != OMS_TX_SEQUENCED)
		return -EOPNOTSUPP;
	if (!q->resp)
		return -ENXIO;
	if (q->ld_busy & (1ull << (q->ld_tag & (q->resp_slots - 1))))
		return -EBUSY;
	return 0;
}

static int tx_load_send(struct oms_tx_queue *q, uint64_t addr, size_t len,
			unsigned flags)
{
	uint32_t tag = q->ld_tag, slot = tag & (q->resp_slots - 1);
	uint32_t len32 = (uint32_t)len;
	uint8_t req[16];
	int r;

	memcpy(req, &addr, 8);
	memcpy(req + 8, &len32, 4);
	memcpy(req + 12, &tag, 4);
	r = tx_send_op(q, (flags & OMS_TX_LD_RELAXED) ? OMS_TX_OP_LOAD_RELAXED :
							OMS_TX_OP_LOAD,
		       req, sizeof(req));
	if (r)
		return r;
	q->ld_busy |= 1ull << slot;
	q->ld_len[slot] = (uint16_t)len;
	q->ld_tag = (tag + 1) & TX_TAG_MASK;
	q->st.loads++;
	/* the request has to reach the device, and the stores before it
	 * with it: publishing is the emulation's way out of the WC buffers */
	oms_tx_flush(q);
	return (int)tag;
}

OMS_TX_EXPORT int oms_tx_load_post(struct oms_tx_queue *q, uint64_t addr,
				   size_t len, unsigned flags)
{
	int r = tx_load_check(q, addr, len, flags);

	return r ? r : tx_load_send(q, addr, len, flags);
}

static uint64_t tx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin until the done word answers @tag; 0 or -ETIMEDOUT.  Yields now and
 * then: the device may be a thread on the same core. */
static int tx_resp_poll(const uint64_t *word, uint32_t tag, uint64_t *out)
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
			deadline = tx_now_ns() + OMS_TX_LD_TIMEOUT_MS * 1000000ull;
		else if (tx_now_ns() > deadline)
			return -ETIMEDOUT;
	}
}

static int tx_tag_check(const struct oms_tx_queue *q, int tag, size_t len)
{
	uint32_t slot;

	if (tag < 0 || !q->resp)
		return -ENOENT;
	slot = (uint32_t)tag & (q->resp_slots - 1);
	/* the slot's load is the one posted last with that slot */
	if (!(q->ld_busy & (1ull << slot)) ||
	    ((q->ld_tag - (uint32_t)tag - 1) & TX_TAG_MASK) >= q->resp_slots)
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
	int r = tx_resp_poll(word, (uint32_t)tag, &w);

	if (r)
		return r;
	if (acquire)
		oms_tx_rd_acquire();
	else
		oms_tx_from_device();
	q->ld_busy &= ~(1ull << ((uint32_t)tag & (q->resp_slots - 1)));
	status = (unsigned)(w >> 48) & 0xff;
	if (status)
		return status == EFAULT ? -EFAULT : -EIO;
	if (((w >> 32) & 0xffff) != len)
		return -EIO;
	memcpy(buf, (uint8_t *)word + 64, len);
	return 0;
}

OMS_TX_EXPORT int oms_tx_load_wait(struct oms_tx_queue *q, int tag, void *buf,
				   size_t len)
{
	int r;

	if (!q || !buf)
		return -EINVAL;
	r = tx_tag_check(q, tag, len);
	return r ? r : tx_load_finish(q, tag, buf, len, 0);
}

OMS_TX_EXPORT int oms_tx_load(struct oms_tx_queue *q, uint64_t addr, void *buf,
			      size_t len, unsigned flags)
{
	int tag = buf ? tx_load_check(q, addr, len, flags) : -EINVAL;

	if (tag)
		return tag;
	tag = tx_load_send(q, addr, len, flags);
	return tag < 0 ? tag : tx_load_finish(q, tag, buf, len, 0);
}

OMS_TX_EXPORT int oms_tx_acquire(struct oms_tx_queue *q, uint64_t addr,
				 void *buf, size_t len)
{
	int tag = buf ? tx_load_check(q, addr, len, 0) : -EINVAL;

	if (tag)
		return tag;
	tag = tx_load_send(q, addr, len, 0);
	return tag < 0 ? tag : tx_load_finish(q, tag, buf, len, 1);
}
