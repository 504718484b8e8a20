/* SPDX-License-Identifier: MIT */
/*
 * txg_stream.h - the packet streams of the guest transmit test, shared by
 * the program that sends them in the QEMU guest (txg_guest.c) and the
 * host-side consumer that checks the ivshmem backing file afterwards
 * (txg_check.c).  Everything is a pure function of (stream, index), so the
 * host knows every byte the guest should have sent without being told.
 *
 * Layout of the 4 MiB ivshmem BAR (the oms.ko window):
 *
 *   0x000000  1 MiB    stream 0  sequenced, thread 0, payload check
 *   0x100000  1 MiB    stream 1  sequenced, thread 1
 *   0x200000  1 MiB    stream 2  strong (fence before every message)
 *   0x300000  512 KiB  stream 3  weak (no fence)
 *   0x380000  508 KiB  untouched: must stay zero
 *   0x3ff000  4 KiB    the guest's report (struct txg_report), written
 *                      after every queue was flushed
 *
 * No ring wraps: the consumer runs on the host after the guest has
 * stopped, so nobody can give credit back while the guest sends.  Each
 * stream is as many messages as fit its region without wrapping
 * (txg_count); the send after the last one must be refused with -EAGAIN,
 * which shows the queue's flow control stopping the producer from
 * overwriting what the consumer has not taken.
 */
#ifndef TXG_STREAM_H
#define TXG_STREAM_H

#include <stdint.h>
#include <string.h>

#include "oms_tx.h"

#define TXG_BAR_LEN		(4u << 20)
#define TXG_NSTREAMS		4u
#define TXG_UNTOUCHED		0x380000u
#define TXG_REPORT		0x3ff000u
#define TXG_REPORT_MAGIC	0x31304758544d4f53ull	/* "SOMTXG01" */

/* How the guest wrote the BAR: stores into the oms.ko mapping, or the
 * module's OMS_IOC_ORDERED_STORE (oms_tx_window_kmod_ioctl). */
#define TXG_PATH_MAPPED		1u
#define TXG_PATH_IOCTL		2u

/* Messages of 8 bytes or more start with this tag. */
#define TXG_TAG_MAGIC		0x7467ull	/* "gt" */

struct txg_spec {
	const char *name;
	uint32_t cls;		/* enum oms_tx_class */
	uint32_t thread;	/* the sequenced format's thread id */
	uint32_t flags;		/* OMS_TX_Q_* */
	uint32_t max_msg;	/* bytes written per message at most */
	uint32_t min_len;	/* shortest payload */
	uint64_t offset, length;	/* region of the BAR */
};

static const struct txg_spec txg_specs[TXG_NSTREAMS] = {
	{ "seq0", OMS_TX_SEQUENCED, 0, OMS_TX_Q_PAYLOAD_CHECK, 1024, 1,
	  0x000000, 0x100000 },
	{ "seq1", OMS_TX_SEQUENCED, 1, 0, 1024, 1, 0x100000, 0x100000 },
	{ "strong", OMS_TX_STRONG, 0, 0, 1024, 1, 0x200000, 0x100000 },
	/* The weak stream is checked out of order: every message is tagged. */
	{ "weak", OMS_TX_WEAK, 0, 0, 1024, 8, 0x300000, 0x80000 },
};

/* What the guest leaves at TXG_REPORT for the host to compare. */
struct txg_report_q {
	uint64_t msgs, pos, chunks, fences, eagain;
	uint64_t syscalls;	/* ORDERED_STORE calls (the ioctl path) */
	int64_t last_send;	/* the refused send's return value */
};

struct txg_report {
	uint64_t magic;
	uint32_t nstreams;
	uint32_t avx2;		/* the guest CPU had AVX2 */
	uint32_t path;		/* TXG_PATH_*: how the guest reached the BAR */
	uint32_t reserved;
	struct txg_report_q q[TXG_NSTREAMS];
};

/* A keyed byte source: the 64-bit finalizer of MurmurHash3. */
static inline uint64_t txg_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ull;
	return key ^ (key >> 33);
}

static inline size_t txg_max_len(unsigned s)
{
	return oms_tx_payload_max(txg_specs[s].cls, txg_specs[s].max_msg);
}

/*
 * Payload length of message @i of stream @s: first the lengths around the
 * chunk boundaries of the stream's format, then a mix: half of them fit
 * one chunk, the rest are spread up to the largest.
 */
static inline size_t txg_len(unsigned s, uint32_t i)
{
	static const uint16_t seq_edges[] = { 1, 55, 56, 57, 111, 112, 113 };
	static const uint16_t plain_edges[] = { 1, 7, 8, 55, 56, 57, 119, 120,
						121 };
	const struct txg_spec *sp = &txg_specs[s];
	size_t lo = sp->min_len, hi = txg_max_len(s), one, len;
	const uint16_t *e = sp->cls == OMS_TX_SEQUENCED ? seq_edges : plain_edges;
	uint32_t ne = sp->cls == OMS_TX_SEQUENCED ?
		      sizeof(seq_edges) / sizeof(*seq_edges) :
		      sizeof(plain_edges) / sizeof(*plain_edges);
	uint64_t h = txg_hash(((uint64_t)s << 32) | i);

	one = sp->cls == OMS_TX_SEQUENCED ? OMS_TX_SEQ_PAYLOAD :
					    OMS_TX_CHUNK - OMS_TX_HDR;
	if (i < ne)
		len = e[i];
	else if (i == ne)
		len = hi;
	else if (h & 1)
		len = 1 + (h >> 8) % one;
	else
		len = 1 + (h >> 8) % hi;
	return len < lo ? lo : len;
}

/* The payload of message @i of stream @s: a tag, then a keyed pattern. */
static inline void txg_fill(unsigned s, uint32_t i, uint8_t *buf, size_t len)
{
	uint64_t key = ((uint64_t)(s + 1) << 56) ^ ((uint64_t)i << 20);
	size_t j = 0;

	if (len >= 8) {
		uint64_t tag = (TXG_TAG_MAGIC << 48) | ((uint64_t)s << 32) | i;

		memcpy(buf, &tag, 8);
		j = 8;
	}
	for (; j < len; j++)
		buf[j] = (uint8_t)(txg_hash(key + j / 8) >> (8 * (j % 8)));
}

/* The message index a tag names, or -1 if @msg carries no tag of @s. */
static inline int64_t txg_tag(unsigned s, const uint8_t *msg, size_t len)
{
	uint64_t tag;

	if (len < 8)
		return -1;
	memcpy(&tag, msg, 8);
	if (tag >> 48 != TXG_TAG_MAGIC || ((tag >> 32) & 0xffff) != s)
		return -1;
	return (int64_t)(tag & 0xffffffffu);
}

/* Chunk positions one message takes in the ring of stream @s. */
static inline uint64_t txg_advance(unsigned s, size_t len)
{
	const struct txg_spec *sp = &txg_specs[s];
	uint64_t slot = 1;

	if (sp->cls == OMS_TX_SEQUENCED)
		return oms_tx_msg_chunks(sp->cls, len);
	while (slot < sp->max_msg / OMS_TX_CHUNK)
		slot <<= 1;
	return slot;
}

/*
 * Messages of stream @s that fit its region without wrapping; @pos gets
 * the ring position after the last one, @first (if not NULL) the position
 * of each message (@first has room for the count).
 */
static inline uint32_t txg_count(unsigned s, uint64_t *pos, uint64_t *first)
{
	uint64_t ring = txg_specs[s].length / OMS_TX_CHUNK, p = 0;
	uint32_t i = 0;

	for (;; i++) {
		uint64_t adv = txg_advance(s, txg_len(s, i));

		if (p + adv > ring)
			break;
		if (first)
			first[i] = p;
		p += adv;
	}
	*pos = p;
	return i;
}

/*
 * The fences and system calls a stream's class needs.  Mapped: one fence
 * per strong message and one for the final flush.  Through the module:
 * the module fences before every strong op, a call's first too, and ends
 * every call with one flush, so a strong stream costs one per message
 * plus one per call, any other stream one per call; and a call carries
 * many messages (a batch is up to 256 ops or 1 MiB), which the bound on
 * calls checks.
 */
static inline int txg_fences_ok(unsigned s, const struct txg_report_q *q,
				uint32_t cnt, int ioctl_path)
{
	int strong = txg_specs[s].cls == OMS_TX_STRONG;

	if (!ioctl_path)
		return q->fences == (strong ? cnt + 1ull : 1) && !q->syscalls;
	if (q->syscalls < 1 || q->syscalls > cnt / 64 + 2)
		return 0;
	return q->fences == (strong ? cnt + q->syscalls : q->syscalls);
}

#endif /* TXG_STREAM_H */
