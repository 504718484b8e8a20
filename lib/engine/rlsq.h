/* SPDX-License-Identifier: MIT */
/*
 * oms_rlsq: remote load-store queue with acquire/release ordering.
 *
 * Implements seed 004 (Liew et al., ASPLOS'26), section 5.1 "Remote
 * Load-Store-Queue": PCIe reads/writes carry a thread id and an ordering
 * attribute (relaxed read, acquire read, relaxed write, release write); the
 * RLSQ at the destination enforces acquire/release per thread ("thread-
 * specific ordering", a single logically partitioned queue) and, in the
 * optimised mode, executes reads after an acquire speculatively, buffers
 * their results, delivers them in order, and squashes and retries only a
 * read whose line is invalidated by a host write while it is speculative.
 * Litmus L29 (DMA flag->data), L30 (order inside one read), L31
 * (speculative ordered reads).
 *
 * The engine decides; the driver (an emulated device, a verbs backend)
 * acts.  Driver loop:
 *   oms_rlsq_submit(thread, kind, line, cookie) -> entry id
 *   oms_rlsq_poll() -> actions:
 *     EXECUTE(id)  perform the memory access now (read the line / write the
 *                  data the cookie names); later call oms_rlsq_complete(id,
 *                  value) with the value read (writes: any value).
 *     RETRY(id)    the same, for a read whose earlier result was squashed.
 *     DELIVER(id)  hand the result (action.value) to the requester; the
 *                  entry is freed and its id becomes invalid.
 *   oms_rlsq_invalidate(line) whenever the line's memory changes -- a host
 *   write, and also the driver's own EXECUTEd writes -- at the moment of the
 *   change (the coherence invalidation the RLSQ snoops as a sharer).
 * Every submitted entry gets exactly one DELIVER (writes too: it is their
 * completion), and one EXECUTE plus one RETRY per squash.
 *
 * Ordering rules, per thread, by program (submission) order.  "Done" = the
 * access completed with a value that was not squashed; "resolved" = done and
 * no earlier acquire of the thread is unresolved (non-speculative).  An
 * entry is delivered once resolved.
 *   R1 acquire:  nothing after an unresolved acquire is performed
 *                non-speculatively; in NIC and RC modes it is not executed
 *                at all until the acquire resolves.
 *   R2 release:  a release executes only when every earlier op is resolved.
 *   R3 writes:   writes (relaxed and release) execute one at a time in
 *                program order: a write waits until earlier writes are done.
 *   R4 no write passes an earlier read of the same line (line hashed into
 *                16 buckets: a false match only delays), and no read passes
 *                an earlier write (PCIe: reads do not pass posted writes).
 *   Relaxed reads are otherwise unordered among themselves; different
 *   threads are never ordered against each other.
 * Modes:
 *   OMS_RLSQ_NIC    ordering at the source: the engine runs in the NIC and
 *                   EXECUTE means "send the request"; an op after an
 *                   acquire is not issued until the acquire's response
 *                   came back (serialised round trips).
 *   OMS_RLSQ_RC     ordering at the destination (root complex): the NIC
 *                   pipelines everything; EXECUTE means "issue the coherent
 *                   access"; a read after an acquire is blocked at the RC
 *                   until the acquire completes.  NIC and RC obey the same
 *                   rules R1-R4; they differ in where the engine runs and
 *                   hence in the latency the driver charges per EXECUTE.
 *   OMS_RLSQ_RC_OPT speculative: reads (relaxed or acquire) after an
 *                   unresolved acquire execute at once and in parallel;
 *                   their results are buffered (DONE, speculative) and
 *                   delivered only after every earlier acquire resolved.
 *                   oms_rlsq_invalidate(line) squashes exactly the reads of
 *                   that line that are speculative and already executing or
 *                   done; each is re-executed (RETRY).  Non-speculative
 *                   reads and reads of other lines are never squashed.
 *                   Writes are never speculative (rules as in RC).
 * Result: each thread's delivered values equal those of a serial execution
 * in which every op happens at one instant, acquires in program order and
 * before everything after them, releases after everything before them.
 *
 * Errors (negative errno; never an abort):
 *   -EINVAL  bad argument (NULL, thread >= nthreads, unknown kind/mode,
 *            bad geometry): no state change.
 *   -EAGAIN  queue full (capacity entries live): no state change.
 *   -ENOENT  complete() with an id that is not live (never issued, already
 *            delivered, or from an older generation of the slot).
 *   -EPROTO  complete() for a live entry that is not executing.
 *   -ENOMEM  init could not allocate.
 * Refusals change nothing, counters included.
 *
 * Cost: submit, poll (per action) and the common complete are O(1); a
 * complete that unblocks or resolves others walks that thread's live entries
 * (bounded by capacity; in NIC/RC the walk stops at the first unresolved
 * acquire); invalidate is O(1) when nothing is speculative, else
 * O(capacity).  No allocation after init.  Not thread-safe.
 */
#ifndef OMS_ENGINE_RLSQ_H
#define OMS_ENGINE_RLSQ_H

#include <stddef.h>
#include <stdint.h>

enum oms_rlsq_mode {
	OMS_RLSQ_NIC = 0,
	OMS_RLSQ_RC = 1,
	OMS_RLSQ_RC_OPT = 2,
};

enum oms_rlsq_kind {
	OMS_RLSQ_READ = 0,	/* relaxed read */
	OMS_RLSQ_ACQUIRE = 1,	/* acquire read */
	OMS_RLSQ_WRITE = 2,	/* relaxed write */
	OMS_RLSQ_RELEASE = 3,	/* release write */
};

enum oms_rlsq_action_type {
	OMS_RLSQ_EXECUTE = 1,
	OMS_RLSQ_RETRY = 2,
	OMS_RLSQ_DELIVER = 3,
};

#define OMS_RLSQ_MAX_ENTRIES	4096u	/* the paper's Table 2 uses 256 */
#define OMS_RLSQ_MAX_THREADS	4096u
#define OMS_RLSQ_BUCKETS	16u	/* line hash buckets for rule R4 */

struct oms_rlsq_action {
	uint8_t type;		/* enum oms_rlsq_action_type */
	uint8_t kind;		/* enum oms_rlsq_kind */
	uint16_t thread;
	uint32_t id;		/* entry id (from submit) */
	uint64_t line;
	uint64_t cookie;	/* from submit */
	uint64_t value;		/* DELIVER: the completed value */
};

struct oms_rlsq_counters {
	uint64_t submitted;
	uint64_t executed;	/* EXECUTE + RETRY actions handed out */
	uint64_t retried;	/* RETRY actions handed out */
	uint64_t squashed;	/* speculative results squashed */
	uint64_t delivered;	/* DELIVER actions handed out */
	uint64_t completed;	/* accepted oms_rlsq_complete() calls */
	uint64_t invalidations;	/* oms_rlsq_invalidate() calls */
};

struct oms_rlsq_entry {
	uint64_t line, cookie, value;
	uint16_t prev, next;	/* thread program-order list */
	uint16_t qnext;		/* execute / deliver / free queue */
	uint16_t thread;
	uint16_t gen;		/* bumped on free: stale ids are refused */
	uint8_t kind, state, flags, pad;
};

struct oms_rlsq_thread {
	uint16_t head, tail;	/* live entries in program order */
	uint16_t queued;	/* waiting for ordering */
	uint16_t unres;		/* not resolved */
	uint16_t unres_acq;	/* acquires not resolved */
	uint16_t undone_wr;	/* writes not done */
	uint16_t rd_undone[OMS_RLSQ_BUCKETS];	/* reads not done, by bucket */
};

struct oms_rlsq {
	struct oms_rlsq_entry *e;	/* [cap] */
	struct oms_rlsq_thread *t;	/* [nthreads] */
	unsigned cap, nthreads, mode;
	uint16_t free_head;
	uint16_t xq_head, xq_tail;	/* EXECUTE/RETRY pending */
	uint16_t dq_head, dq_tail;	/* DELIVER pending */
	unsigned live;			/* entries not free */
	unsigned nspec;			/* entries flagged speculative */
	int owns_mem;
	struct oms_rlsq_counters cnt;
};

/* Bytes oms_rlsq_init() needs (0 if the geometry is invalid). */
size_t oms_rlsq_memsize(unsigned capacity, unsigned nthreads);

/*
 * @capacity entries (1..4096) shared by @nthreads threads (1..4096), in
 * @mode (enum oms_rlsq_mode).  @mem: caller memory of oms_rlsq_memsize()
 * bytes, 8-byte aligned, or NULL to malloc once.
 */
int oms_rlsq_init(struct oms_rlsq *q, unsigned capacity, unsigned nthreads,
		  unsigned mode, void *mem, size_t memlen);

void oms_rlsq_destroy(struct oms_rlsq *q);

/*
 * Accept an operation of @thread, after all its earlier ones in program
 * order.  *@id receives the entry id.  0, -EINVAL, or -EAGAIN (full).
 */
int oms_rlsq_submit(struct oms_rlsq *q, unsigned thread, unsigned kind,
		    uint64_t line, uint64_t cookie, uint32_t *id);

/*
 * 1 if an operation of @kind on @line that @thread submitted now would
 * wait for earlier ones of the thread before it may execute, 0 if it
 * could execute at once, -EINVAL.  A source that orders its own reads
 * (the NIC) keeps such an operation back instead of taking an entry.
 */
int oms_rlsq_would_wait(const struct oms_rlsq *q, unsigned thread,
			unsigned kind, uint64_t line);

/*
 * Fill up to @max actions (DELIVERs first, then EXECUTE/RETRY in the order
 * they became executable).  Returns how many (0: nothing to do), -EINVAL.
 */
int oms_rlsq_poll(struct oms_rlsq *q, struct oms_rlsq_action *act,
		  unsigned max);

/* The access of EXECUTE/RETRY @id finished with @value.  0 or -errno. */
int oms_rlsq_complete(struct oms_rlsq *q, uint32_t id, uint64_t value);

/*
 * The memory of @line changed (host write, or a write this RLSQ executed).
 * Returns how many speculative reads were squashed (each gets a RETRY), or
 * -EINVAL.
 */
int oms_rlsq_invalidate(struct oms_rlsq *q, uint64_t line);

/* Live entries (submitted, not yet delivered), or -EINVAL. */
int oms_rlsq_live(const struct oms_rlsq *q);

/*
 * 1 if entry @id is live and its value may still be thrown away (it is
 * speculative, or was squashed while in flight and will be read again),
 * 0 if live and its next value is final, -ENOENT if not live.
 */
int oms_rlsq_speculative(const struct oms_rlsq *q, uint32_t id);

#endif
