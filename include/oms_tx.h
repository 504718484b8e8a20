/* SPDX-License-Identifier: MIT */
/*
 * oms_tx - MMIO transmit: packets written inline into a write-combining
 * window, ordered by one of three classes, and a transmit receiver (the
 * NIC's side, in software: oms_tx_nic_*) that receives them (the
 * ASPLOS '26 paper, section 2.2 and Fig 4; section 5.2 for the sequence
 * numbers and the reorder buffer).
 *
 * A window is a region the CPU writes with write-combining (non-temporal)
 * stores: process memory, a shared file (the ivshmem backing file seen from
 * the host), the oms.ko window (an mmap of a PCI BAR) or a ConnectX
 * BlueFlame register (oms_tx_window_mlx5).  A transmit queue
 * owns a power-of-two number of 64-byte chunks of a window and writes
 * each packet ("message") as whole chunks:
 *
 *   OMS_TX_STRONG     plain format; a store fence before every message, so
 *                     each reaches the device after every earlier store of
 *                     the thread, to this queue or another on a mapped
 *                     window (NVIDIA's strong store; today's correct
 *                     way: one fence per message).  Later messages of
 *                     other queues may pass it, as weak stores may pass a
 *                     strong one; oms_tx_flush() pushes the last one out.
 *                     An ioctl-window queue sends at its flush: flush it
 *                     before a strong message that must follow it.
 *   OMS_TX_WEAK       plain format, no fence; the chunks of one message are
 *                     assembled by address so a message is whole, but
 *                     messages may reach the device in any order.
 *   OMS_TX_SEQUENCED  sequenced format: every chunk carries (thread id,
 *                     sequence number); the destination's reorder buffer
 *                     restores program order.  No fence, ever.
 *
 * Formats (little-endian, one 64-byte chunk = one write-combining line):
 *
 *   plain      message = 8-byte header, payload, zero padding to a chunk
 *              multiple; each message starts a message slot (the queue's
 *              max_msg rounded up to a power of two chunks), as a WQE starts
 *              a BlueFlame half.  Header: bits 0-15 payload length, 16-23
 *              magic 0x5a, 24 F (fenced before: the strong class), 30 C
 *              (check covers the payload), 31 V (1), 32-63 check.
 *              Metadata: 8 bytes per message.
 *   sequenced  every chunk = 8-byte header + 56 payload bytes.  Header:
 *              bits 0-15 sequence number (per thread, wraps), 16-27 thread
 *              id, 28 SOM (first chunk of a message), 29 EOM (last), 30 C,
 *              31 V (1), 32-37 payload bytes in this chunk (1..56), 38-39
 *              op (enum oms_tx_op, the same in every chunk of a message),
 *              40-63 check.  Metadata: 8 bytes per 64-byte chunk (12.5% of
 *              the bytes written).
 *   store      (op 1) a sequenced message whose payload is the 8-byte
 *              device address, then the bytes to write there (at least 1).
 *              The NIC writes them into its device memory when the reorder
 *              buffer releases the message: in program order.
 *   load       (op 2) one chunk, SOM and EOM, 16 payload bytes: 0-7 device
 *              address, 8-11 length (1..OMS_TX_LD_MAX), 12-15 tag.  It has a
 *              sequence number like a store: the reorder buffer performs it
 *              after every earlier store and load of the thread and before
 *              every later one.
 *   relaxed    (op 3) a load request as above without a place in program
 *   load       order: the sequence field is ignored and no number is used
 *              up; the NIC performs it when it arrives (a plain MMIO read
 *              over an unordered path), so it may miss earlier stores.
 *   response   the NIC answers a load in the thread's response area (host
 *              memory the device writes, oms_tx_nic_set_resp), slot tag %
 *              slots, OMS_TX_RESP_SLOT bytes: a 64-byte line whose first 8
 *              bytes are the done word (bits 0-31 tag, 32-47 length, 48-55
 *              status: 0 or a positive errno, 63 done; written last), then
 *              the bytes read.
 *   check      a 24/32-bit code over the header fields and, with
 *              OMS_TX_Q_PAYLOAD_CHECK (bit C), over the payload.
 *
 * Error convention: 0 (or a count) on success, a negative errno on failure;
 * a call refused for a bad argument changes nothing.  A queue is used by one
 * thread at a time; oms_tx_credit() and oms_tx_published() may be called
 * from one other (consumer) thread.
 *
 * Part 1: exported calls.  Part 2: static inline helpers.
 */
#ifndef OMS_TX_H
#define OMS_TX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "oms_order.h"	/* the class numbering, shared with oms.h */

#ifdef __cplusplus
extern "C" {
#endif

#define OMS_TX_CHUNK		64u	/* bytes per chunk (a WC line) */
#define OMS_TX_HDR		8u	/* header bytes (both formats) */
#define OMS_TX_SEQ_PAYLOAD	56u	/* payload bytes per sequenced chunk */
#define OMS_TX_MAX_MSG		16384u	/* max bytes written per message */
#define OMS_TX_MAX_THREADS	4096u	/* thread ids carried: 12 bits */
#define OMS_TX_LD_MAX		256u	/* bytes one load reads at most */
#define OMS_TX_RESP_SLOT	(64u + OMS_TX_LD_MAX)	/* response slot */
#define OMS_TX_RESP_MAX_SLOTS	64u	/* loads outstanding per queue */
#define OMS_TX_LD_TIMEOUT_MS	1000u	/* a load's wait gives up after
						 * (default of load_timeout_ms) */

/*
 * The classes of a queue, in liboms's one numbering (oms_order.h): a weak
 * message is a weak store, a strong message a strong store, as oms_put()
 * and OMS_IOC_ORDERED_STORE number them.  Any other value is refused.
 */
enum oms_tx_class {
	OMS_TX_WEAK = OMS_STORE_WEAK,
	OMS_TX_STRONG = OMS_STORE_STRONG,
	OMS_TX_SEQUENCED = OMS_STORE_SEQUENCED,
};

/* What a sequenced message asks of the destination (header bits 38-39). */
enum oms_tx_op {
	OMS_TX_OP_MSG = 0,		/* a packet: delivered */
	OMS_TX_OP_STORE = 1,		/* write device memory */
	OMS_TX_OP_LOAD = 2,		/* read it, in program order */
	OMS_TX_OP_LOAD_RELAXED = 3,	/* read it on arrival */
};

/* Chunk formats, for the transmit receiver. */
enum oms_tx_format {
	OMS_TX_FMT_PLAIN = 0,		/* weak and strong */
	OMS_TX_FMT_SEQ = 1,		/* sequenced */
};

/* ------------------------------------------------------------------ */
/* Windows                                                            */
/* ------------------------------------------------------------------ */

struct oms_tx_window;

enum oms_tx_window_kind {
	OMS_TX_WIN_MEM = 1,	/* process memory */
	OMS_TX_WIN_FILE = 2,	/* shared file mapping */
	OMS_TX_WIN_KMOD = 3,	/* oms.ko window: mmap of a BAR */
	OMS_TX_WIN_MLX5 = 4,	/* ConnectX BlueFlame register */
	OMS_TX_WIN_KMOD_IOCTL = 5, /* oms.ko window through its ioctls */
};

/*
 * Anonymous process memory of @len bytes (a multiple of 4096), zeroed,
 * page aligned.  Errors: -EINVAL, -ENOMEM.
 */
int oms_tx_window_mem(size_t len, struct oms_tx_window **out);

/* oms_tx_window_file() flags */
#define OMS_TX_FILE_CREATE	(1u << 0)	/* create/truncate to @len */
#define OMS_TX_FILE_RDONLY	(1u << 1)	/* consumer view: read only */

/*
 * A MAP_SHARED mapping of @path: a /dev/shm file shared with another
 * process, or the host side of an ivshmem BAR (its backing file).  @len 0
 * maps the whole (existing) file.  Errors: -EINVAL (flags, @len not a
 * multiple of 4096, file too short), the errno of open/ftruncate/mmap.
 */
int oms_tx_window_file(const char *path, size_t len, unsigned flags,
		       struct oms_tx_window **out);

/*
 * The window of oms.ko: open @dev (NULL: "/dev/oms"), OMS_IOC_INFO, mmap
 * the whole window shared (write-combining for a PCI BAR).  Errors:
 * -ENOENT (no such device node: oms.ko not loaded), -ENODEV (no window
 * attached), -EACCES (the window has holes, pages of the device's MSI-X
 * table that the module never maps: a ring over the whole window would
 * fault there; also the errno of open without membership of the device
 * file's group), the errno of open/ioctl/mmap.
 */
int oms_tx_window_kmod(const char *dev, struct oms_tx_window **out);

/*
 * The window of oms.ko without mapping it: every store goes through
 * OMS_IOC_ORDERED_STORE, so the module issues the stores and the fences.
 * For callers who may not map the BAR, and to measure a system call per
 * batch beside the mapped window.  Queues on it keep their ring in process
 * memory (oms_tx_window_base() is that copy, not the device) and hand the
 * module one vector of ops per batch: a message is one op, WEAK for the
 * weak and sequenced classes (touching ones merged), STRONG for the strong
 * class (the module fences before it).  A batch goes when it is full (256
 * ops or 1 MiB), and at oms_tx_flush(); each call ends with a WC drain, so
 * the order of the classes holds across calls.  The queue's fences count is
 * the barriers the module reports.  The module's errors reach the caller
 * of oms_tx_send / oms_tx_store / oms_tx_load* / oms_tx_flush as -errno
 * (-ENODEV: the window was detached; -ESTALE: it was replaced by another
 * window, open it again; -EPERM: lockdown); the batch stays
 * pending and is retried by the next flush.
 * Errors: as oms_tx_window_kmod(), -EINVAL for a window length that is not
 * a multiple of 64.
 */
int oms_tx_window_kmod_ioctl(const char *dev, struct oms_tx_window **out);

/*
 * A ConnectX send queue's BlueFlame register (the paper's Fig 4 target),
 * through mlx5dv with libibverbs.so.1 and libmlx5.so.1 loaded at run time:
 * opens @dev (NULL: the first device mlx5dv_is_supported() accepts),
 * creates a raw packet QP on @port (1-based), takes sq.buf, dbrec, bf.reg
 * and bf.size from mlx5dv_init_obj().  The window is the two BlueFlame
 * halves; send with oms_tx_mlx5_send() (oms_tx_queue_create() refuses it).
 * On failure @why (if not NULL) gets one line saying why.
 * Errors: -ENOENT (libraries not installed), -ENODEV (no RDMA device),
 * -EOPNOTSUPP (no mlx5 device; bf.size 0, i.e. no BlueFlame; built
 * without mlx5dv.h), -EPERM (raw packet QPs need CAP_NET_RAW), -EIO (a
 * verbs call failed), -EINVAL, -ENOMEM.
 */
int oms_tx_window_mlx5(const char *dev, unsigned port, char *why,
		       size_t whylen, struct oms_tx_window **out);

/*
 * Send one Ethernet frame (at least 18 bytes) inline as a BlueFlame WQE:
 * ctrl + eth segment (first 18 bytes inline) + inline data, copied into
 * the send queue and, 64 bytes at a time, into the current BlueFlame half
 * (halves alternate); the doorbell record is updated first.  Strong: a
 * store fence after the copy; weak: none (call oms_tx_mlx5_send with
 * strong, or fence yourself, before relying on order).  Sequenced:
 * -EOPNOTSUPP (the NIC has no reorder buffer).  -EAGAIN: send queue full
 * after reaping completions.  -EINVAL, -E2BIG (frame too long to inline).
 */
int oms_tx_mlx5_send(struct oms_tx_window *w, unsigned cls,
		     const void *frame, size_t len);

/*
 * Send @n frames (1..OMS_TX_MLX5_BATCH_MAX) as @n WQEs behind one doorbell
 * record and one 8-byte doorbell (no BlueFlame copy for several); strong:
 * one store fence at the end.  Returns the frames sent, from the first
 * (fewer than @n when the send queue is full or a frame cannot be built:
 * the next call reports it), or the errors of oms_tx_mlx5_send() for the
 * first frame; -EINVAL (bad vector: nothing sent), -ENOMEM.
 */
#define OMS_TX_MLX5_BATCH_MAX	16u
int oms_tx_mlx5_send_batch(struct oms_tx_window *w, unsigned cls,
			   const struct iovec *frames, unsigned n);

/* Unmap and free; NULL is a no-op. */
void oms_tx_window_close(struct oms_tx_window *w);

void *oms_tx_window_base(const struct oms_tx_window *w);
size_t oms_tx_window_len(const struct oms_tx_window *w);
int oms_tx_window_kind(const struct oms_tx_window *w);

/* ------------------------------------------------------------------ */
/* Transmit queue                                                     */
/* ------------------------------------------------------------------ */

struct oms_tx_queue;

#define OMS_TX_Q_PAYLOAD_CHECK	(1u << 0)	/* check covers the payload */
#define OMS_TX_Q_NO_CREDIT	(1u << 1)	/* free-running ring: the device
						 * is assumed to keep up */
#define OMS_TX_Q_SCALAR		(1u << 2)	/* no AVX2 path (tests) */
#define OMS_TX_Q_FLAGS		(OMS_TX_Q_PAYLOAD_CHECK | OMS_TX_Q_NO_CREDIT | \
				 OMS_TX_Q_SCALAR)

struct oms_tx_queue_attr {
	uint32_t cls;		/* enum oms_tx_class */
	uint32_t thread;	/* thread id (< OMS_TX_MAX_THREADS) */
	uint32_t flags;		/* OMS_TX_Q_* */
	uint32_t max_msg;	/* bytes written per message at most: a
				 * multiple of 64 up to OMS_TX_MAX_MSG; 0 = 256 */
	uint64_t offset;	/* the queue's region of the window */
	uint64_t length;	/* 0 = to the end; a power of two chunks */
	uint32_t load_timeout_ms; /* a load's wait gives up after this;
				 * 0 = OMS_TX_LD_TIMEOUT_MS.  Raise it where
				 * the device may be slow to answer (a
				 * software NIC on a loaded machine) */
	uint32_t reserved0;	/* must be zero */
	uint64_t reserved[1];	/* must be zero */
};

/*
 * Create a queue writing into [offset, offset + length) of @w.  The region
 * holds one message of max_msg bytes at least (the plain classes: one
 * message slot).
 * Errors: -EINVAL (class, thread, flags, reserved, max_msg, region
 * alignment or size, a read-only window), -EOPNOTSUPP (a ConnectX window:
 * it takes WQEs, see oms_tx_mlx5_send), -ENOMEM.
 */
int oms_tx_queue_create(struct oms_tx_window *w,
			const struct oms_tx_queue_attr *attr,
			struct oms_tx_queue **out);
void oms_tx_queue_destroy(struct oms_tx_queue *q);

/*
 * Write one message of @len payload bytes from @buf into the window with
 * the queue's class.  The strong class fences before it.
 * Errors: -EINVAL (NULL, @len 0 or above oms_tx_payload_max()), -EAGAIN
 * (no credit: the consumer has not freed the room; nothing written), on
 * the ioctl window the module's -errno when a full batch could not be
 * handed over (nothing written).
 */
int oms_tx_send(struct oms_tx_queue *q, const void *buf, size_t len);

/*
 * Write the @n messages of @msgs in order, as @n oms_tx_send() calls
 * would, for less: the checks, the credit and the queue's state are
 * handled once per call instead of once per message, which at 64 bytes
 * costs more than the stores (docs/mmio-tx.md).  The order and the
 * classes' fences are those of the single calls: a strong queue still
 * fences before every message.
 * Returns how many messages were written, from the first: fewer than @n
 * when the credit ran out (the rest not written) or, on the ioctl window,
 * when the module refused a full vector (the next call reports it).
 * Errors, nothing written: -EINVAL (NULL, @n 0 or above INT_MAX, any
 * message NULL, empty or above oms_tx_payload_max()), -EAGAIN (no credit
 * for the first message), the module's -errno for the first message.
 */
int oms_tx_send_batch(struct oms_tx_queue *q, const struct iovec *msgs,
		      unsigned n);

/*
 * Flush the write-combining buffers (one store fence): every chunk written
 * so far is visible.  Then publish the position for oms_tx_published().
 * On the ioctl window: hand the pending batch to the module instead.
 * Returns the published position in chunks (>= 0), -EINVAL, or (ioctl
 * window) the module's -errno: nothing published, the batch kept.
 */
int64_t oms_tx_flush(struct oms_tx_queue *q);

/* Position published by the last oms_tx_flush() (consumer side). */
uint64_t oms_tx_published(const struct oms_tx_queue *q);

/* Chunks written so far (the position of the next chunk). */
uint64_t oms_tx_pos(const struct oms_tx_queue *q);

/*
 * Consumer side: the producer may write chunk positions below @upto (the
 * consumer has consumed everything below @upto - ring chunks).  Credit
 * only grows: a smaller @upto is ignored.  Returns 0, or -EINVAL (NULL,
 * or @upto beyond the producer's position plus the ring: chunks not yet
 * written cannot have been consumed; nothing changes).
 */
int oms_tx_credit(struct oms_tx_queue *q, uint64_t upto);

/* Ring geometry: chunks in the region and chunks per message slot (1 for
 * the sequenced format). */
uint64_t oms_tx_ring_chunks(const struct oms_tx_queue *q);
uint32_t oms_tx_slot_chunks(const struct oms_tx_queue *q);
const void *oms_tx_ring(const struct oms_tx_queue *q);

struct oms_tx_stats {
	uint64_t msgs;		/* messages written */
	uint64_t chunks;	/* 64-byte chunks written */
	uint64_t wire_bytes;	/* bytes written into the window */
	uint64_t payload_bytes;	/* payload bytes carried */
	uint64_t fences;	/* store fences issued */
	uint64_t eagain;	/* sends refused for lack of credit */
	uint64_t stores;	/* oms_tx_store() messages (also in msgs) */
	uint64_t loads;		/* load requests sent (acquires included) */
	uint64_t syscalls;	/* ioctl window: ORDERED_STORE calls made */
};

int oms_tx_stats(const struct oms_tx_queue *q, struct oms_tx_stats *st);

/*
 * Largest payload of one message of at most @wire bytes written (a
 * multiple of 64) in class @cls; 0 if none fits.
 */
size_t oms_tx_payload_max(unsigned cls, size_t wire);

/* Bytes written into the window for a payload of @len bytes, 0 if @len
 * does not fit in OMS_TX_MAX_MSG. */
size_t oms_tx_wire_bytes(unsigned cls, size_t len);

/* ------------------------------------------------------------------ */
/* A doorbell: a work request posted the way a NIC driver posts it     */
/* (NVIDIA's patent application: WO(WQE) SO(dbrec) SO(db))          */
/* ------------------------------------------------------------------ */

#define OMS_TX_DB_BLUEFLAME	(1u << 0)	/* step 3 copies the WQE to
						 * the BlueFlame register */

struct oms_tx_doorbell {
	const void *wqe;	/* the work request */
	uint32_t wqe_len;	/* bytes: a multiple of 8; of 64 and at most
				 * 256 with OMS_TX_DB_BLUEFLAME */
	uint32_t flags;		/* OMS_TX_DB_* */
	uint64_t wqe_offset;	/* window offsets: the WQE (8-aligned, */
	uint64_t dbrec_offset;	/* 64 with BlueFlame), the 32-bit doorbell */
	uint64_t db_offset;	/* record (4), the doorbell (8) or the
				 * BlueFlame register (64) */
	uint64_t db;		/* the doorbell's value; 0 with BlueFlame */
	uint32_t dbrec;		/* the doorbell record's value */
	uint32_t reserved;	/* must be 0 */
};

/*
 * Post a work request through queue @q's window, in @q's program order:
 *   1. weak: the WQE at wqe_offset;
 *   2. strong: the doorbell record, visible after the WQE and after every
 *      message @q sent before;
 *   3. strong: the doorbell (or the BlueFlame copy of the WQE), visible
 *      after the record, then pushed out of the write-combining buffers.
 * On a mapped window (memory, file, oms.ko) liboms issues the stores and
 * the three store fences; on an OMS_TX_WIN_KMOD_IOCTL window it hands @q's
 * pending vector to the module, then issues OMS_IOC_DOORBELL, so the
 * module stores and fences.  The fence before the record orders the post
 * after every earlier store of the thread, of @q or another mapped-window
 * queue (as the strong class); another ioctl-window queue sends at its
 * own oms_tx_flush(), so flush it first.
 * The areas must lie inside the window and outside @q's ring.
 * Returns the store fences issued (3), or -EINVAL (NULL, flags, reserved,
 * alignment, length, db not 0 with BlueFlame, an area on @q's ring),
 * -ERANGE (an area outside the window), or the module's -errno (the
 * ioctl window); when it fails nothing of the post was stored.  Counted in
 * @q's fences (and syscalls).  A ConnectX window takes no queue: post
 * there with oms_tx_mlx5_send().
 */
int oms_tx_doorbell(struct oms_tx_queue *q, const struct oms_tx_doorbell *d);

/* ------------------------------------------------------------------ */
/* Device memory through a sequenced queue: stores, loads, acquire     */
/* (ASPLOS '26 section 4.2: MMIO-Store, MMIO-Load, MMIO-Acquire)      */
/* ------------------------------------------------------------------ */

/*
 * Where the device answers this queue's loads: @len bytes at @area (64-byte
 * aligned), a power of two of OMS_TX_RESP_SLOT slots, at most
 * OMS_TX_RESP_MAX_SLOTS.  The NIC must be given the same area for the
 * queue's thread (oms_tx_nic_set_resp).  Zeroes it.  Sequenced queues only;
 * not while loads are outstanding.
 * Errors: -EINVAL (NULL, alignment, size), -EOPNOTSUPP (not sequenced),
 * -EBUSY (loads outstanding, or a timed-out load's answer not yet come).
 */
int oms_tx_queue_set_resp(struct oms_tx_queue *q, void *area, size_t len);

/*
 * MMIO-Store: write @len bytes to device address @addr, as one sequenced
 * message (op store).  No fence: the destination's reorder buffer applies
 * it after every earlier store and load of the queue and before every
 * later one.  Visible to the device once published (oms_tx_flush, or any
 * load, which publishes).
 * Errors: -EINVAL (NULL, @len 0 or above oms_tx_payload_max() - 8, @addr +
 * @len overflows), -EOPNOTSUPP (not a sequenced queue), -EAGAIN (no
 * credit).  Nothing is written on error.  An address outside the device's
 * memory is the device's to refuse: it drops the store and counts it
 * (oms_tx_nic_stats bad_addr).
 */
int oms_tx_store(struct oms_tx_queue *q, uint64_t addr, const void *buf,
		 size_t len);

/* oms_tx_load_post() / oms_tx_load() flags */
#define OMS_TX_LD_RELAXED	(1u << 0)	/* no sequence number: performed
						 * when it arrives; may miss
						 * earlier stores (the control) */
#define OMS_TX_LD_FLAGS		OMS_TX_LD_RELAXED

/*
 * MMIO-Load, first half: send a load request for @len bytes at device
 * address @addr and publish it (one oms_tx_flush: the request must reach
 * the device; the stores before it go with it).  Returns a tag (>= 0) for
 * oms_tx_load_wait().  Orders: the request after every earlier store and
 * load of the queue, at the destination (its reorder buffer), so the value
 * read includes them (read-your-writes).  Nothing on the host waits: later
 * host operations may be observed by the device before the read is
 * performed (use oms_tx_acquire for that).
 * A load takes any free response slot; the tag names the slot and this
 * use of it, so a tag of an earlier load on the same slot is refused.
 * Errors: -EINVAL (NULL, @len 0 or above OMS_TX_LD_MAX, flags, @addr +
 * @len overflows), -EOPNOTSUPP (not sequenced), -ENXIO (no response area),
 * -EBUSY (no free slot: each has a load outstanding, or a timed-out
 * blocking load whose answer has not come), -EAGAIN (no credit): nothing
 * is written.  On the ioctl window, the module's -errno when the flush
 * that carries the request fails: the request stays in the pending
 * vector (the next successful flush sends it) and its slot stays taken
 * until the answer comes, as a timed-out load's.
 */
int oms_tx_load_post(struct oms_tx_queue *q, uint64_t addr, size_t len,
		     unsigned flags);

/*
 * MMIO-Load, second half: wait for the answer to @tag and copy its @len
 * bytes (the length posted) to @buf.  The bytes are read after the done
 * word (a from-device barrier, lib/util/barrier.h).
 * Errors: -EINVAL (NULL, @len not the length posted), -ENOENT (@tag not
 * outstanding: never posted, already collected, or of an earlier use of
 * its slot), -ETIMEDOUT (no answer within the queue's load_timeout_ms; the
 * tag stays outstanding, wait again), the device's refusal: -EFAULT
 * (outside its memory), -EIO (it answered with another status).  @buf is
 * written only on success.
 */
int oms_tx_load_wait(struct oms_tx_queue *q, int tag, void *buf, size_t len);

/* oms_tx_load_post() then oms_tx_load_wait(); the same errors, except
 * that on -ETIMEDOUT no tag is left to wait on: the slot stays taken until
 * the late answer arrives (it is then freed by a later post), so the
 * answer can never land on a later load's slot. */
int oms_tx_load(struct oms_tx_queue *q, uint64_t addr, void *buf, size_t len,
		unsigned flags);

/*
 * MMIO-Acquire: a sequenced load whose completion happens before every
 * later memory operation of the thread.  It returns only after the answer
 * arrived, then issues a read-acquire barrier (lib/util/barrier.h), so no later
 * load or store of the thread - to ordinary memory the device can read, to
 * the window, to anything - is observed by the device before the acquire's
 * read was performed.  At the destination it is ordered like any
 * sequenced load (after earlier stores: it reads them).  It does not order
 * earlier host operations (that is a release).
 * Errors: as oms_tx_load_post() (flags are not taken) and
 * oms_tx_load_wait(); on -ETIMEDOUT as oms_tx_load(): no tag is left, the
 * slot is freed when the late answer arrives.
 */
int oms_tx_acquire(struct oms_tx_queue *q, uint64_t addr, void *buf,
		   size_t len);

/* ------------------------------------------------------------------ */
/* Emulated NIC: the consumer                                         */
/* ------------------------------------------------------------------ */

struct oms_tx_nic;

/* Called for every message delivered whole and in the NIC's order. */
typedef void (*oms_tx_deliver_fn)(void *arg, unsigned thread,
				  const void *msg, size_t len);

/*
 * Called on the NIC's thread when it performs a store (@data: the bytes
 * written) or a load (@data: the bytes read, before the answer is
 * written), in the order it performs them.  @op: enum oms_tx_op.
 */
typedef void (*oms_tx_perform_fn)(void *arg, unsigned thread, unsigned op,
				  uint64_t addr, const void *data, size_t len);

struct oms_tx_nic_attr {
	uint32_t format;	/* enum oms_tx_format */
	uint32_t nthreads;	/* streams: thread ids (seq) or queue regions
				 * (plain), 1..64 */
	uint32_t rob_window;	/* seq: chunks per thread, power of two
				 * 1..256; 0 = 256 */
	uint32_t slot_chunks;	/* plain: chunks per message slot */
	uint64_t region_len;	/* plain: bytes per stream region */
	oms_tx_deliver_fn deliver;	/* may be NULL */
	void *arg;
	const char *pcap_path;	/* NULL: no capture */
	uint64_t mem_len;	/* seq: device memory bytes for stores and
				 * loads, a multiple of 64 up to 64 MiB; 0 =
				 * none (loads answered -EFAULT) */
	oms_tx_perform_fn perform;	/* may be NULL; its arg is @arg */
	uint64_t reserved[2];	/* must be zero */
};

struct oms_tx_nic_stats {
	uint64_t chunks;	/* chunks received */
	uint64_t accepted;	/* chunks kept (buffered or used) */
	uint64_t corrupted;	/* bad header, check or length: dropped */
	uint64_t duplicate;	/* seq already buffered: dropped */
	uint64_t stale;		/* seq already released: dropped */
	uint64_t out_of_window;	/* seq too far ahead: dropped */
	uint64_t malformed;	/* framing broken (SOM/EOM), or a plain
				 * slot's chunks left by a dropped header:
				 * dropped */
	uint64_t msgs;		/* messages delivered */
	uint64_t payload_bytes;	/* payload delivered */
	uint64_t pcap_errors;	/* capture writes that failed */
	uint64_t stores;	/* stores applied to device memory */
	uint64_t loads;		/* loads answered (relaxed included) */
	uint64_t bad_addr;	/* stores dropped, loads refused: outside
				 * device memory */
	uint64_t unanswered;	/* loads dropped: no response area for the
				 * thread, or a malformed request */
};

/*
 * Create a transmit receiver.  Errors: -EINVAL (format, nthreads, window,
 * plain geometry, mem_len (or mem_len on a plain NIC), reserved), -ENOMEM,
 * the errno of opening the pcap.
 */
int oms_tx_nic_create(const struct oms_tx_nic_attr *attr,
		      struct oms_tx_nic **out);
void oms_tx_nic_destroy(struct oms_tx_nic *nic);

/*
 * Sequenced NICs: where the device writes its answers to @thread's loads
 * (the area given to that thread's queue, oms_tx_queue_set_resp; same
 * rules).  NULL/0 removes it.  Call it before chunks of that thread flow.
 * Errors: -EINVAL (thread, alignment, size), -EOPNOTSUPP (plain format).
 */
int oms_tx_nic_set_resp(struct oms_tx_nic *nic, unsigned thread, void *area,
			size_t len);

/*
 * One chunk arrives (a posted write of 64 bytes), in arrival order.
 * @stream: the queue region it was written to (plain; ignored for the
 * sequenced format, whose chunks name their thread); @offset: its byte
 * offset in that region (plain; ignored for sequenced).
 * Returns 0 (kept; any message it completes is delivered, and any store
 * or load the reorder buffer releases is performed, before the call
 * returns; a relaxed load is performed at once), or the reason it was
 * dropped and counted: -EBADMSG
 * (corrupted), -EEXIST (duplicate), -ESTALE (already released), -ERANGE
 * (beyond the reorder window), -EPROTO (framing; a store or load request
 * that cannot be parsed or answered).  -EINVAL: bad argument,
 * nothing counted.
 */
int oms_tx_nic_rx(struct oms_tx_nic *nic, unsigned stream, uint64_t offset,
		  const void *chunk);

/* The path from CPU to device, as a model: a chunk is overtaken by at
 * most 2 * @reorder later ones, never across the fence before a strong
 * message (F).  oms_tx_flush()'s fence leaves no mark in the ring: drain
 * each published interval with its own oms_tx_nic_drain() call. */
struct oms_tx_fabric {
	uint64_t seed;		/* random order; same seed, same order */
	uint32_t reorder;	/* 0: arrival order = program order */
	uint32_t reserved;
};

/*
 * Read chunk positions [@from, @to) of a queue's ring (@ring of
 * @ring_chunks chunks, slot geometry as the NIC was created with) and hand
 * them to the NIC through the fabric model.  The caller makes sure the
 * producer published them (oms_tx_flush/oms_tx_published) and does not
 * overwrite them meanwhile (credits).  Returns the chunks handed over:
 * every position of a sequenced ring; on a plain ring the chunks of each
 * slot's message (a slot's unused tail is not sent).  Errors: -EINVAL,
 * -ENOMEM (the fabric's pool for @fab->reorder).
 */
int64_t oms_tx_nic_drain(struct oms_tx_nic *nic, unsigned stream,
			 const void *ring, uint64_t ring_chunks, uint64_t from,
			 uint64_t to, const struct oms_tx_fabric *fab);

int oms_tx_nic_stats(const struct oms_tx_nic *nic,
		     struct oms_tx_nic_stats *st);

/* ------------------------------------------------------------------ */
/* Part 2: static inline helpers                                      */
/* ------------------------------------------------------------------ */

/* Is @cls a class a transmit queue takes? */
static inline int oms_tx_class_valid(unsigned cls)
{
	return cls == OMS_TX_WEAK || cls == OMS_TX_STRONG ||
	       cls == OMS_TX_SEQUENCED;
}

/* Chunks one message of @len payload bytes takes in class @cls. */
static inline size_t oms_tx_msg_chunks(unsigned cls, size_t len)
{
	if (cls == OMS_TX_SEQUENCED)
		return (len + OMS_TX_SEQ_PAYLOAD - 1) / OMS_TX_SEQ_PAYLOAD;
	return (len + OMS_TX_HDR + OMS_TX_CHUNK - 1) / OMS_TX_CHUNK;
}

#ifdef __cplusplus
}
#endif

#endif /* OMS_TX_H */
