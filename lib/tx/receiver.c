// SPDX-License-Identifier: MIT
/*
 * The transmit receiver (oms_tx_nic_*): the NIC's side of a transmit
 * window, in software.  It receives chunks in arrival order
 * (oms_tx_nic_rx), one posted 64-byte write at a time, and delivers whole
 * messages:
 *
 *   sequenced  every chunk is checked (valid bit, lengths, check code),
 *              then inserted into the engine's reorder buffer (engine/rob.h)
 *              by (thread, sequence number); chunks leave it in program
 *              order and are assembled from SOM to EOM.  Corrupted,
 *              duplicate, stale and out-of-window chunks are counted and
 *              dropped.
 *   plain      chunks are placed by address into the NIC's copy of the
 *              stream's region, a message slot at a time, as a BlueFlame
 *              write is; a message is transmitted as soon as all its chunks
 *              are there.  With nothing but arrival order to go by, messages
 *              leave in the order they complete.
 *
 * oms_tx_nic_drain() plays the path from the CPU to the device: it reads
 * positions of a queue's ring in program order and hands the chunks over
 * in an order where a chunk may be overtaken by a bounded number of later
 * ones, never across a store fence: the queue fences before each strong
 * message (its header's F bit), so everything handed before it arrives
 * first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine/fabric.h"
#include "engine/rob.h"
#include "tx/tx_priv.h"

#define TX_NIC_MAX_STREAMS	64u
#define TX_NIC_MAX_REGION	(64ull << 20)

struct tx_seq_stream {
	uint8_t *msg;		/* assembly buffer, OMS_TX_MAX_MSG bytes */
	size_t mlen;
	int in_msg;
	unsigned op;		/* enum oms_tx_op of the message */
	uint8_t *resp;		/* response area (host memory), or NULL */
	uint32_t resp_slots;
};

struct oms_tx_nic {
	struct oms_tx_nic_attr a;
	struct oms_tx_nic_stats st;
	struct oms_rob rob;
	int have_rob;
	uint8_t *stage;		/* seq: [nthreads][window] chunks;
				 * plain: [nthreads] region images */
	struct tx_seq_stream *ss;
	uint64_t *have;		/* plain: [nthreads][nslots][words] bitmaps */
	uint64_t nslots;
	uint32_t words;
	FILE *pcap;
	struct oms_fab_path path;	/* the path of the last drain */
	int have_path;
	uint8_t *mem;		/* seq: device memory, a.mem_len bytes */
};

/* ---- capture ---- */

static void tx_pcap_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);	/* pcap is written in host order */
}

static int tx_pcap_open(struct oms_tx_nic *nic, const char *path)
{
	uint16_t major = 2, minor = 4;
	uint8_t g[24];

	nic->pcap = fopen(path, "wb");
	if (!nic->pcap)
		return -errno;
	tx_pcap_u32(g, 0xa1b2c3d4u);		/* microsecond timestamps */
	memcpy(g + 4, &major, 2);
	memcpy(g + 6, &minor, 2);
	tx_pcap_u32(g + 8, 0);			/* thiszone */
	tx_pcap_u32(g + 12, 0);			/* sigfigs */
	tx_pcap_u32(g + 16, OMS_TX_MAX_MSG);	/* snaplen */
	tx_pcap_u32(g + 20, 1);			/* LINKTYPE_ETHERNET */
	if (fwrite(g, sizeof(g), 1, nic->pcap) != 1) {
		fclose(nic->pcap);
		nic->pcap = NULL;
		return -EIO;
	}
	return 0;
}

static void tx_pcap_write(struct oms_tx_nic *nic, const uint8_t *msg,
			  size_t len)
{
	struct timespec ts;
	uint8_t r[16];

	clock_gettime(CLOCK_REALTIME, &ts);
	tx_pcap_u32(r, (uint32_t)ts.tv_sec);
	tx_pcap_u32(r + 4, (uint32_t)(ts.tv_nsec / 1000));
	tx_pcap_u32(r + 8, (uint32_t)len);
	tx_pcap_u32(r + 12, (uint32_t)len);
	if (fwrite(r, sizeof(r), 1, nic->pcap) != 1 ||
	    fwrite(msg, len, 1, nic->pcap) != 1)
		nic->st.pcap_errors++;
}

static void tx_deliver(struct oms_tx_nic *nic, unsigned thread,
		       const uint8_t *msg, size_t len)
{
	nic->st.msgs++;
	nic->st.payload_bytes += len;
	if (nic->pcap)
		tx_pcap_write(nic, msg, len);
	if (nic->a.deliver)
		nic->a.deliver(nic->a.arg, thread, msg, len);
}

/* ---- create / destroy ---- */

static int tx_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

OMS_EXPORT int oms_tx_nic_create(const struct oms_tx_nic_attr *attr,
				 struct oms_tx_nic **out)
{
	struct oms_tx_nic *nic;
	int err = -ENOMEM;
	unsigned n;

	if (!attr || !out || attr->format > OMS_TX_FMT_SEQ || !attr->nthreads ||
	    attr->nthreads > TX_NIC_MAX_STREAMS || attr->reserved[0] ||
	    attr->reserved[1] || attr->mem_len % OMS_TX_CHUNK ||
	    attr->mem_len > TX_NIC_MAX_REGION ||
	    (attr->mem_len && attr->format != OMS_TX_FMT_SEQ))
		return -EINVAL;
	n = attr->nthreads;
	if (attr->format == OMS_TX_FMT_SEQ) {
		unsigned win = attr->rob_window ? attr->rob_window :
						  OMS_ROB_MAX_WINDOW;

		if (!tx_pow2(win) || win > OMS_ROB_MAX_WINDOW)
			return -EINVAL;
	} else {
		uint64_t slot = attr->slot_chunks, len = attr->region_len;

		if (!tx_pow2(slot) || slot * OMS_TX_CHUNK > OMS_TX_MAX_MSG ||
		    !len || len % OMS_TX_CHUNK || !tx_pow2(len / OMS_TX_CHUNK) ||
		    len > TX_NIC_MAX_REGION || len < slot * OMS_TX_CHUNK)
			return -EINVAL;
	}
	nic = calloc(1, sizeof(*nic));
	if (!nic)
		return -ENOMEM;
	nic->a = *attr;
	nic->a.pcap_path = NULL;
	if (attr->format == OMS_TX_FMT_SEQ) {
		if (!nic->a.rob_window)
			nic->a.rob_window = OMS_ROB_MAX_WINDOW;
		if (oms_rob_init(&nic->rob, n, nic->a.rob_window, NULL, 0))
			goto err;
		nic->have_rob = 1;
		nic->stage = malloc((size_t)n * nic->a.rob_window * OMS_TX_CHUNK);
		nic->ss = calloc(n, sizeof(*nic->ss));
		nic->mem = calloc(1, attr->mem_len ? attr->mem_len : 1);
		if (!nic->stage || !nic->ss || !nic->mem)
			goto err;
		for (unsigned i = 0; i < n; i++) {
			nic->ss[i].msg = malloc(OMS_TX_MAX_MSG);
			if (!nic->ss[i].msg)
				goto err;
		}
	} else {
		nic->nslots = attr->region_len / (attr->slot_chunks * OMS_TX_CHUNK);
		nic->words = (attr->slot_chunks + 63) / 64;
		nic->stage = calloc(n, attr->region_len);
		nic->have = calloc((size_t)n * nic->nslots * nic->words,
				   sizeof(uint64_t));
		if (!nic->stage || !nic->have)
			goto err;
	}
	if (attr->pcap_path) {
		err = tx_pcap_open(nic, attr->pcap_path);
		if (err)
			goto err;
	}
	*out = nic;
	return 0;
err:
	oms_tx_nic_destroy(nic);
	return err;
}

OMS_EXPORT void oms_tx_nic_destroy(struct oms_tx_nic *nic)
{
	if (!nic)
		return;
	if (nic->pcap)
		fclose(nic->pcap);
	if (nic->ss)
		for (unsigned i = 0; i < nic->a.nthreads; i++)
			free(nic->ss[i].msg);
	free(nic->ss);
	if (nic->have_rob)
		oms_rob_destroy(&nic->rob);
	free(nic->stage);
	free(nic->have);
	if (nic->have_path)
		oms_fab_path_destroy(&nic->path);
	free(nic->mem);
	free(nic);
}

OMS_EXPORT int oms_tx_nic_stats(const struct oms_tx_nic *nic,
				struct oms_tx_nic_stats *st)
{
	if (!nic || !st)
		return -EINVAL;
	*st = nic->st;
	return 0;
}

/* ---- device memory: stores and loads (L40) ---- */

OMS_EXPORT int oms_tx_nic_set_resp(struct oms_tx_nic *nic, unsigned thread,
				   void *area, size_t len)
{
	size_t n = len / OMS_TX_RESP_SLOT;

	if (!nic || thread >= nic->a.nthreads)
		return -EINVAL;
	if (nic->a.format != OMS_TX_FMT_SEQ)
		return -EOPNOTSUPP;
	if (area && ((uintptr_t)area % 64 || len % OMS_TX_RESP_SLOT || !n ||
		     n > OMS_TX_RESP_MAX_SLOTS || (n & (n - 1))))
		return -EINVAL;
	if (!area && len)
		return -EINVAL;
	nic->ss[thread].resp = area;
	nic->ss[thread].resp_slots = (uint32_t)n;
	return 0;
}

static int tx_mem_range_ok(const struct oms_tx_nic *nic, uint64_t addr,
			   uint64_t len)
{
	return addr < nic->a.mem_len && len <= nic->a.mem_len - addr;
}

static void tx_perform(struct oms_tx_nic *nic, unsigned tid, unsigned op,
		       uint64_t addr, const void *data, size_t len)
{
	if (nic->a.perform)
		nic->a.perform(nic->a.arg, tid, op, addr, data, len);
}

/* A store message, released in program order: address, then bytes. */
static int tx_mem_store(struct oms_tx_nic *nic, unsigned tid,
			const uint8_t *msg, size_t len)
{
	uint64_t addr = tx_load64(msg);

	if (len <= 8) {
		nic->st.malformed++;
		return -EPROTO;
	}
	if (!tx_mem_range_ok(nic, addr, len - 8)) {
		nic->st.bad_addr++;
		return 0;
	}
	memcpy(nic->mem + addr, msg + 8, len - 8);
	nic->st.stores++;
	tx_perform(nic, tid, OMS_TX_OP_STORE, addr, msg + 8, len - 8);
	return 0;
}

/*
 * Perform a load request (16 bytes: address, length, tag) and answer it in
 * the thread's response slot, as a DMA write: the bytes, then the done
 * word with release order, so the CPU that sees the word sees the bytes.
 */
static int tx_mem_load(struct oms_tx_nic *nic, unsigned tid, unsigned op,
		       const uint8_t *req, size_t len)
{
	struct tx_seq_stream *s = &nic->ss[tid];
	uint64_t addr = tx_load64(req), w;
	uint32_t n, tag;
	uint8_t *slot;

	memcpy(&n, req + 8, 4);
	memcpy(&tag, req + 12, 4);
	if (len != 16 || !n || n > OMS_TX_LD_MAX || !s->resp) {
		nic->st.unanswered++;
		return -EPROTO;
	}
	slot = s->resp + (size_t)(tag & (s->resp_slots - 1)) * OMS_TX_RESP_SLOT;
	w = (1ull << 63) | ((uint64_t)n << 32) | tag;
	if (tx_mem_range_ok(nic, addr, n)) {
		tx_perform(nic, tid, op, addr, nic->mem + addr, n);
		memcpy(slot + 64, nic->mem + addr, n);
	} else {
		nic->st.bad_addr++;
		w |= (uint64_t)EFAULT << 48;
	}
	nic->st.loads++;
	__atomic_store_n((uint64_t *)(void *)slot, w, __ATOMIC_RELEASE);
	return 0;
}

/* ---- sequenced ---- */

/* A whole message left the reorder buffer: do what its op says. */
static int tx_seq_done(struct oms_tx_nic *nic, unsigned tid,
		       struct tx_seq_stream *s)
{
	switch (s->op) {
	case OMS_TX_OP_STORE:
		return tx_mem_store(nic, tid, s->msg, s->mlen);
	case OMS_TX_OP_LOAD:
		return tx_mem_load(nic, tid, s->op, s->msg, s->mlen);
	case OMS_TX_OP_MSG:
		tx_deliver(nic, tid, s->msg, s->mlen);
		return 0;
	default:	/* a relaxed load never enters the reorder buffer */
		nic->st.malformed++;
		return -EPROTO;
	}
}

/* Use one in-order chunk; returns -EPROTO if it was dropped. */
static int tx_seq_use(struct oms_tx_nic *nic, unsigned tid, const uint8_t *c)
{
	struct tx_seq_stream *s = &nic->ss[tid];
	uint64_t h = tx_load64(c);
	size_t n = (h >> TXS_LEN_SHIFT) & TXS_LEN_MASK;
	unsigned op = (unsigned)((h >> TXS_OP_SHIFT) & TXS_OP_MASK);

	if (h & TXS_SOM) {
		if (s->in_msg)
			nic->st.malformed++;	/* the partial message */
		s->in_msg = 1;
		s->mlen = 0;
		s->op = op;
	} else if (!s->in_msg || op != s->op) {
		if (s->in_msg)
			s->in_msg = 0;	/* the partial message goes too */
		nic->st.malformed++;
		return -EPROTO;
	}
	if (s->mlen + n > OMS_TX_MAX_MSG) {
		nic->st.malformed++;
		s->in_msg = 0;
		return -EPROTO;
	}
	memcpy(s->msg + s->mlen, c + OMS_TX_HDR, n);
	s->mlen += n;
	if (h & TXS_EOM) {
		s->in_msg = 0;
		return tx_seq_done(nic, tid, s);
	}
	return 0;
}

/* A relaxed load is performed on arrival: it has no place in program
 * order, so it reads whatever the device memory holds right now. */
static int tx_seq_relaxed(struct oms_tx_nic *nic, unsigned tid,
			  const uint8_t *chunk, size_t n)
{
	uint64_t h = tx_load64(chunk);

	if ((h & (TXS_SOM | TXS_EOM)) != (TXS_SOM | TXS_EOM)) {
		nic->st.malformed++;
		return -EPROTO;
	}
	nic->st.accepted++;
	return tx_mem_load(nic, tid, OMS_TX_OP_LOAD_RELAXED, chunk + OMS_TX_HDR, n);
}

static int tx_seq_rx(struct oms_tx_nic *nic, const uint8_t *chunk)
{
	uint64_t h = tx_load64(chunk), ph = 0;
	size_t n = (h >> TXS_LEN_SHIFT) & TXS_LEN_MASK;
	unsigned tid = (h >> TXS_TID_SHIFT) & TXS_TID_MASK;
	oms_rob_seq_t seq = h & TXS_SEQ_MASK, s;
	unsigned mask = nic->a.rob_window - 1;
	int r, ret = 0;

	nic->st.chunks++;
	if (!(h & TXH_V) || !n || n > OMS_TX_SEQ_PAYLOAD ||
	    (!(h & TXS_EOM) && n != OMS_TX_SEQ_PAYLOAD))
		goto corrupt;
	if (h & TXH_C)
		ph = tx_payload_hash(chunk + OMS_TX_HDR, OMS_TX_SEQ_PAYLOAD);
	if (tx_seq_check(h, ph) != h >> TXS_CHECK_SHIFT || tid >= nic->a.nthreads)
		goto corrupt;
	if (((h >> TXS_OP_SHIFT) & TXS_OP_MASK) == OMS_TX_OP_LOAD_RELAXED)
		return tx_seq_relaxed(nic, tid, chunk, n);
	r = oms_rob_insert(&nic->rob, tid, seq, seq);
	switch (r) {
	case -EEXIST:
		nic->st.duplicate++;
		return r;
	case -ESTALE:
		nic->st.stale++;
		return r;
	case -ERANGE:
		nic->st.out_of_window++;
		return r;
	default:
		if (r < 0)
			return r;
	}
	nic->st.accepted++;
	memcpy(nic->stage + ((size_t)tid * nic->a.rob_window + (seq & mask)) *
		       OMS_TX_CHUNK, chunk, OMS_TX_CHUNK);
	if (r != 1)
		return 0;
	while (oms_rob_pop(&nic->rob, tid, &s, NULL) == 1) {
		const uint8_t *c = nic->stage + ((size_t)tid * nic->a.rob_window +
						 (s & mask)) * OMS_TX_CHUNK;

		if (tx_seq_use(nic, tid, c) && s == seq)
			ret = -EPROTO;
	}
	return ret;
corrupt:
	nic->st.corrupted++;
	return -EBADMSG;
}

/* ---- plain ---- */

static int tx_plain_hdr_ok(uint64_t h, uint64_t slot_bytes)
{
	uint64_t len = h & TXP_LEN_MASK;

	return (h & TXH_V) && (h & TXP_MAGIC_MASK) == TXP_MAGIC &&
	       !(h & TXP_RSV_MASK) && len && len + OMS_TX_HDR <= slot_bytes;
}

static int tx_plain_rx(struct oms_tx_nic *nic, unsigned stream,
		       uint64_t offset, const uint8_t *chunk)
{
	uint64_t slot_bytes = (uint64_t)nic->a.slot_chunks * OMS_TX_CHUNK;
	uint64_t slot = offset / slot_bytes;
	unsigned ci = (unsigned)(offset % slot_bytes / OMS_TX_CHUNK);
	uint8_t *img = nic->stage + stream * nic->a.region_len + slot * slot_bytes;
	uint64_t *bits = nic->have + (stream * nic->nslots + slot) * nic->words;
	uint64_t h, len, ph = 0;
	unsigned need, present = 0;

	nic->st.chunks++;
	if (ci == 0 && !tx_plain_hdr_ok(tx_load64(chunk), slot_bytes)) {
		/* the chunks already here were the dropped message's: they
		 * must not complete the slot's next message */
		for (unsigned w = 0; w < nic->words; w++) {
			nic->st.malformed +=
				(uint64_t)__builtin_popcountll(bits[w]);
			bits[w] = 0;
		}
		nic->st.corrupted++;
		return -EBADMSG;
	}
	memcpy(img + (size_t)ci * OMS_TX_CHUNK, chunk, OMS_TX_CHUNK);
	bits[ci / 64] |= 1ull << (ci % 64);
	nic->st.accepted++;
	if (!(bits[0] & 1))
		return 0;		/* the header has not arrived */
	h = tx_load64(img);
	len = h & TXP_LEN_MASK;
	need = (unsigned)oms_tx_msg_chunks(OMS_TX_WEAK, len);
	for (unsigned w = 0; w < nic->words; w++) {
		uint64_t m = need >= (w + 1) * 64 ? ~0ull :
			     need <= w * 64 ? 0 : (1ull << (need - w * 64)) - 1;

		if ((bits[w] & m) != m)
			return 0;	/* not complete yet */
		present += (unsigned)__builtin_popcountll(bits[w]);
	}
	/* complete: chunks written beyond the message are stray */
	nic->st.malformed += present - need;
	memset(bits, 0, nic->words * sizeof(*bits));
	if (h & TXH_C)
		ph = tx_payload_hash(img + OMS_TX_HDR, len);
	if (tx_plain_check(h, ph) != h >> TXP_CHECK_SHIFT) {
		nic->st.corrupted++;
		return -EBADMSG;
	}
	tx_deliver(nic, stream, img + OMS_TX_HDR, len);
	return 0;
}

OMS_EXPORT int oms_tx_nic_rx(struct oms_tx_nic *nic, unsigned stream,
			     uint64_t offset, const void *chunk)
{
	if (!nic || !chunk)
		return -EINVAL;
	if (nic->a.format == OMS_TX_FMT_SEQ)
		return tx_seq_rx(nic, chunk);
	if (stream >= nic->a.nthreads || offset % OMS_TX_CHUNK ||
	    offset >= nic->a.region_len)
		return -EINVAL;
	return tx_plain_rx(nic, stream, offset, chunk);
}

/* ---- the path from CPU to device ---- */

/*
 * The chaos fabric's path (engine/fabric.h): chunk positions in, in ring
 * order; out, mixed, to the NIC.  A fenced (strong) message empties it
 * first, as the store fence before it drains the CPU's buffers.
 */
static void tx_path_out(struct oms_tx_nic *nic, unsigned stream,
			const uint8_t *ring, uint64_t mask, uint64_t pos)
{
	uint64_t off = (pos & mask) * OMS_TX_CHUNK;

	oms_tx_nic_rx(nic, stream, off, ring + off);
}

static void tx_path_push(struct oms_tx_nic *nic, unsigned stream,
			 const uint8_t *ring, uint64_t mask, uint64_t pos)
{
	uint64_t out;

	if (oms_fab_path_push(&nic->path, pos, &out))
		tx_path_out(nic, stream, ring, mask, out);
}

static void tx_path_empty(struct oms_tx_nic *nic, unsigned stream,
			  const uint8_t *ring, uint64_t mask)
{
	uint64_t out;

	while (oms_fab_path_take(&nic->path, &out))
		tx_path_out(nic, stream, ring, mask, out);
}

OMS_EXPORT int64_t oms_tx_nic_drain(struct oms_tx_nic *nic, unsigned stream,
				    const void *ring, uint64_t ring_chunks,
				    uint64_t from, uint64_t to,
				    const struct oms_tx_fabric *fab)
{
	const uint8_t *r = ring;
	uint32_t reorder = fab ? fab->reorder : 0;
	uint64_t slot, mask, seed, handed = 0;

	if (!nic || !ring || !tx_pow2(ring_chunks) || from > to ||
	    to - from > ring_chunks || stream >= nic->a.nthreads ||
	    (fab && (fab->reserved || fab->reorder > OMS_FAB_MAX_WINDOW)))
		return -EINVAL;
	slot = nic->a.slot_chunks;
	if (nic->a.format == OMS_TX_FMT_PLAIN &&
	    (ring_chunks * OMS_TX_CHUNK != nic->a.region_len || from % slot ||
	     to % slot))
		return -EINVAL;
	mask = ring_chunks - 1;
	/* every interval its own draw, reproducible from the seed */
	seed = (fab ? fab->seed : 0) ^ (from * 0xd48219c350f73ac5ull);
	if (!nic->have_path || nic->path.window != reorder) {
		if (nic->have_path)
			oms_fab_path_destroy(&nic->path);
		nic->have_path = 0;
		if (oms_fab_path_init(&nic->path, reorder, seed, NULL, 0))
			return -ENOMEM;
		nic->have_path = 1;
	}
	oms_fab_path_reseed(&nic->path, seed);
	if (nic->a.format == OMS_TX_FMT_SEQ) {
		for (uint64_t pos = from; pos < to; pos++)
			tx_path_push(nic, stream, r, mask, pos);
		handed = to - from;
	} else {
		uint64_t slot_bytes = slot * OMS_TX_CHUNK;

		for (uint64_t pos = from; pos < to; pos += slot) {
			uint64_t h = tx_load64(r + (pos & mask) * OMS_TX_CHUNK);
			uint64_t nch = 1;

			/* a valid header's length, and the fence before a
			 * strong message (F); garbage is one chunk, unfenced */
			if (tx_plain_hdr_ok(h, slot_bytes)) {
				nch = oms_tx_msg_chunks(OMS_TX_WEAK, h & TXP_LEN_MASK);
				if (h & TXP_F)
					tx_path_empty(nic, stream, r, mask);
			}
			for (uint64_t i = 0; i < nch; i++)
				tx_path_push(nic, stream, r, mask, pos + i);
			handed += nch;	/* a slot's padding is not sent */
		}
	}
	tx_path_empty(nic, stream, r, mask);
	return (int64_t)handed;
}
