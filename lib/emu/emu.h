/* SPDX-License-Identifier: MIT */
/*
 * The emulated device: a software NIC plus root complex that owns "host
 * memory" regions and executes operations submitted by initiators, run by
 * its own thread (docs/emu-device.md says why a thread).
 *
 * Per initiator context there is one queue: a submission ring of struct
 * oms_wr released by a doorbell by count (seed 003: the initiator writes
 * the number of commands, the device executes exactly that many), and a
 * completion ring.  Both are single-producer single-consumer; the only
 * shared words are the doorbell count, the device's taken index, the
 * completion tail/head and the source-consumed count.
 *
 * The device enforces destination-side ordering with the engine: the
 * remote load-store queue (seed 004, NIC / RC / RC-opt) for reads, the
 * responder hold (seed 002) for class-2 responses, key checks with a drop
 * counter (seed 003), and the per-destination contract of lib/backend.h
 * (same bytes in order, OMS_WR_F_FENCE, sequenced streams that stop at
 * their first failure, OMS_WR_RESUME).  In chaos mode it reorders whatever
 * a fabric may: taken commands leave the pool in random order (never
 * past an older one of the queue they must follow), the lines of a read
 * execute in random order unless ordered, completions are delayed and
 * reordered.  An optional latency model charges I/O bus, root complex and
 * memory latency in model time.
 *
 * Internal: not exported, used by lib/emu/backend.c and by tests.
 */
#ifndef OMS_EMU_PRIV_H
#define OMS_EMU_PRIV_H

#include <pthread.h>
#include <stdint.h>

#include "oms_emu.h"
#include "backend.h"
#include "engine/dest_stream.h"
#include "engine/doorbell.h"
#include "engine/fabric.h"
#include "engine/hold.h"
#include "engine/key_check.h"
#include "engine/rlsq.h"
#include "util/lines.h"

#define EMU_MAX_QUEUES	1024	/* queues (contexts) per device */
#define EMU_MAX_REGIONS	OMS_KC_MAX_REGIONS
#define EMU_POOL	256	/* taken commands waiting to execute */
#define EMU_MAX_GETS	256	/* reads in progress per queue */
#define EMU_LINE	OMS_LINE
#define EMU_MAX_OP	(1u << 20)
/* The read engine names a line (region << 32 | line index): a longer
 * region's lines would alias the next region's. */
#define EMU_MAX_REGION	((uint64_t)EMU_LINE << 32)
#define EMU_KEY_THRESHOLD 16	/* drops before -EKEYREJECTED */
#define EMU_SEQ_WINDOW	256	/* reorder buffer window per stream */

struct emu_cfg {
	uint64_t chaos_seed;	/* 0: execute in order, complete at once */
	uint32_t read_order;	/* enum oms_read_order */
	uint32_t rlsq_entries;
	uint32_t lat_bus_ns, lat_rc_ns, lat_mem_ns, link_gbps;
	uint32_t time_scale;	/* 0: no latency model; else at least this
				 * many wall ns per model ns (clock.c) */
	uint32_t lat_req_ns;	/* responder NIC service time per request */
	uint32_t no_hold;	/* baseline: seed-002 hold off */
	uint32_t hold_global;	/* seed-002 hold scope: all destinations */
	uint32_t charge_cpu;	/* OMS_EMU_F_CHARGE_CPU */
};

struct emu_pend {		/* a taken command not yet performed */
	struct oms_wr wr;
	uint64_t arrive;	/* model time it reaches the responder NIC */
	uint64_t due;		/* model time it reaches the memory (once
				 * admitted: the NIC has served it) */
	uint8_t admitted;
	uint32_t idx;		/* intake index: the queue's program order */
	uint32_t gen;		/* its region's generation at intake */
	uint32_t hold_id;	/* seed-002 posted-write id */
	uint8_t posted;		/* registered with the hold tracker */
};

struct emu_done {		/* a completion on its way back */
	struct oms_wc wc;
	uint64_t due;
};

struct emu_get {
	struct oms_wr wr;
	uint32_t idx;		/* intake index of the command */
	uint32_t gen;		/* its region's generation at intake */
	/* executed: lines read for good (not speculative: never squashed
	 * after); all executed = the get has read (fences wait for it). */
	uint32_t nlines, submitted, executed, delivered;
	int status;
	uint64_t resp_due;
	uint8_t active;
};

#define EMU_Q_UNORDERED	(1u << 0)	/* control: no same-address order */
#define EMU_ANY_DEST	UINT32_MAX	/* emu_fence_ready(): every dest */

struct emu_queue {
	/* initiator side */
	struct oms_db_ring prod;
	/* shared words (accessed with __atomic) */
	uint32_t doorbell;	/* commands rung (free-running) */
	uint32_t taken;		/* commands the device took */
	uint32_t cq_tail;	/* completions written by the device */
	uint32_t cq_head;	/* completions consumed by the initiator */
	uint64_t src_done;	/* commands whose local buffer is done with */
	/* rings */
	struct oms_wr *sq;
	struct oms_wc *cq;
	/* [size], by sq slot: the model time its initiator thread posted
	 * it at (initiator.c); the device starts it no earlier */
	uint64_t *not_before;
	uint32_t size;
	uint32_t node;		/* initiator's node */
	uint32_t id;		/* index: RLSQ thread */
	uint32_t li;		/* index in the device's qlist[] */
	uint32_t gen;		/* tells a reused id from its predecessor */
	uint32_t flags;		/* EMU_Q_* */
	/* device side */
	struct oms_db_ring cons;
	struct emu_pend pool[EMU_POOL];	/* in intake order */
	uint32_t npool;
	struct emu_done *acks;	/* [size] */
	uint32_t nacks;
	uint64_t ack_due_min;	/* no ack is due before (a lower bound) */
	uint32_t unadmitted;	/* the pool's last ones: not at the NIC */
	struct emu_pend parked[EMU_SEQ_WINDOW];	/* waiting in the ROB */
	uint16_t park_free[EMU_SEQ_WINDOW];
	uint32_t npark_free;
	uint64_t park_used[EMU_SEQ_WINDOW / 64];	/* parked[] in use */
	uint16_t npark_dest[OMS_MAX_NODES];	/* parked, per destination */
	/* Sequenced streams, per destination: the member popped from the
	 * ROB that is not done yet (a get that has not read, a fenced op
	 * waiting for its fence); the ROB holds the later ones in order. */
	int16_t seq_head[OMS_MAX_NODES];	/* parked slot, or -1 */
	uint32_t seq_get[OMS_MAX_NODES];	/* head get's slot in gets[] */
	uint32_t seq_wait;	/* dests with a head */
	uint32_t seq_started;	/* dests whose head get went to the RLSQ */
	uint32_t seq_lost;	/* dests whose stream lost a refused member
				 * for want of memory: stopped until resumed */
	/* Failures since the last OMS_WR_RESUME, per destination: the
	 * intake index of the first (fenced ops after it are cancelled). */
	uint32_t failed;	/* dests with a failure */
	uint32_t fail_idx[OMS_MAX_NODES];
	struct emu_pend *flush;	/* [size]: SEQ flushes not yet covered */
	uint32_t nflush;
	uint32_t gets_pending;	/* taken gets not yet handed to the RLSQ */
	struct emu_get gets[EMU_MAX_GETS];
	uint32_t get_head, get_tail;	/* FIFO of reads (slots) */
	uint32_t get_sub;		/* first read with lines to submit */
	uint8_t in_use;
};

/*
 * A slot of the region table.  @gen changes at every registration of the
 * slot: a command whose key passed at intake carries the generation it
 * passed for, and is refused at execution if the slot has been
 * deregistered, or registered again, since (its key then names memory
 * that is gone or someone else's).  A listener's window is a slot of its
 * own on another's memory: @home names that slot (itself for a region).
 */
struct emu_region {
	uint8_t *base;
	uint64_t len;
	uint32_t node, access;
	uint32_t gen;
	uint32_t home;
	uint8_t valid;
};

#define EMU_LINE_FREE	0
#define EMU_LINE_EXEC	1	/* its access is under way, until due */
#define EMU_LINE_DONE	2

struct emu_line {		/* one line read in flight in the RLSQ */
	uint64_t due;		/* model time the access finishes */
	uint32_t rid;		/* RLSQ entry id */
	uint16_t q, g;		/* queue, get slot */
	uint32_t idx;		/* line index within the get */
	uint8_t state;		/* 0 free, 1 executing, 2 done */
	uint8_t counted;	/* in its get's executed count */
	uint8_t data[EMU_LINE];
};

/* Test hook, called with the lock held when a put or atomic becomes
 * visible and when a get's response leaves (op OMS_WR_GET). */
typedef void (*emu_observe_fn)(void *arg, uint32_t q, const struct oms_wr *wr);

/*
 * The device; oms_emu.h's object is this struct.  Each is a fabric of its
 * own (thread, regions, listeners); the process's default one serves the
 * contexts that name none.
 */
struct oms_emu {
	pthread_mutex_t lock;	/* memory, regions, engine state */
	pthread_t thread;
	struct emu_cfg cfg;
	uint64_t rng;
	uint64_t t0;		/* wall ns at start (pacing) */
	/* Model time (clock.c): ns since the start, advanced by the device
	 * thread alone, under the lock, from one event to the next; read
	 * with __atomic by anyone. */
	uint64_t clock;
	/* The threads that issue on it, each with its model time
	 * (initiator.c); the clock never passes a working one. */
	struct emu_initiator **init;
	uint32_t ninit, init_cap;
	uint64_t stuck_since;	/* wall ns the clock has waited for a
				 * working thread; 0: it has not */
	/* Under a latency model the thread sleeps on @kick when it can do
	 * nothing, and an initiator's doorbell or wait wakes it (kick.c). */
	uint32_t kick;		/* bumped at each such event (futex word) */
	uint32_t napping;	/* the device thread sleeps on @kick */
	uint32_t admit_from;	/* qlist[] index admissions start at */
	int stop;		/* ask the thread to leave, abandoning work */
	int frozen;		/* test: stop executing, stop heartbeats */
	uint32_t freeze_gen;	/* freezes asked for (emu_dev_freeze()) */
	uint32_t parked_gen;	/* the last the thread saw, frozen */
	int gone;		/* thread gone: every queue fails */
	uint64_t heartbeat;
	uint32_t refs;		/* its contexts, and its creator (atomic) */
	uint8_t is_default;	/* the process's default device */
	uint32_t queue_gen;
	struct emu_queue *q[EMU_MAX_QUEUES];	/* by id */
	struct emu_queue *qlist[EMU_MAX_QUEUES];	/* the open ones */
	uint32_t nq;
	struct emu_region reg[EMU_MAX_REGIONS];
	uint32_t next_key;
	struct oms_key_check kc;
	struct oms_rlsq rlsq;
	struct emu_line *lines;	/* [rlsq_entries] */
	uint32_t sub_turn;	/* qlist[] index whose get goes in next */
	uint32_t *line_free;
	uint32_t nline_free;
	uint32_t nline_exec;	/* lines in state EXEC */
	uint64_t line_due_min;	/* no EXEC line is due before (a lower
				 * bound, made exact when it is passed) */
	struct oms_hold hold[OMS_MAX_NODES];	/* per responder node */
	struct oms_dseq dseq[OMS_MAX_NODES];	/* streams per destination */
	uint64_t link_free[OMS_MAX_NODES]; /* model ps each responder's
				 * link is free to send the next response */
	uint64_t nic_free[OMS_MAX_NODES]; /* model ns each responder NIC
				 * is free to take the next request */
	uint64_t executed;	/* puts/atomics executed */
	emu_observe_fn observe;	/* test: called at each executed store */
	void *observe_arg;
	oms_emu_observe_fn pub_observe;	/* oms_emu_set_observer()'s */
	void *pub_observe_arg;
	pthread_mutex_t listen_lock;	/* listeners (conn.c) */
	struct emu_listeners *listeners; /* the fabric's "network" */
};

/* region.c: the region table (lock held where said), listeners'
 * windows on a region (their own slot and key) */
int emu_region_add(struct oms_emu *dev, const struct emu_region *tmpl,
		   struct oms_rmr *rmr);		/* lock held */
void emu_region_del(struct oms_emu *dev, const struct oms_rmr *rmr);
int emu_window_open(struct oms_emu *dev, const struct oms_rmr *of,
		    struct oms_rmr *win);
void emu_window_close(struct oms_emu *dev, const struct oms_rmr *win);
int emu_region_live(const struct oms_emu *dev, uint32_t region,
		    uint32_t gen, uint64_t off, uint64_t len);
void emu_invalidate(struct oms_emu *dev, uint32_t region, uint64_t off,
		    uint64_t len);

/* conn.c: listeners and connections within the device's fabric */
int emu_conn_init(struct oms_emu *dev);
void emu_conn_fini(struct oms_emu *dev);
int emu_listen(struct oms_ctx *ctx, const char *addr, const char *port,
	       const struct oms_be_region *reg, void **lpriv);
void emu_listener_close(struct oms_ctx *ctx, void *lpriv);
int emu_connect(struct oms_ctx *ctx, const char *host, const char *port,
		uint32_t timeout_ms, struct oms_rmr *rmr);
int emu_listener_peers(struct oms_ctx *ctx, void *lpriv);
void emu_conn_leave(struct oms_ctx *ctx);	/* the context goes */

/* A listener a context connected to: the entry, which listener held it
 * then (entries are reused) and how many times it connected. */
struct emu_peer {
	struct emu_listener *e;
	uint64_t gen;
	uint32_t n;
};

/* A context on the emulated device: its device, its queue and the
 * listeners it connected to (the backend's private part of the context,
 * backend.c). */
struct emu_ctx {
	struct oms_emu *dev;
	struct emu_queue *q;
	struct emu_peer *peer;
	uint32_t npeer;
};

#define EC(ctx) ((struct emu_ctx *)oms_be_view(ctx)->priv)

static inline struct oms_emu *emu_ctx_dev(struct oms_ctx *ctx)
{
	return EC(ctx)->dev;
}

/* dev.c: devices.  emu_dev_create() starts one holding one reference;
 * emu_dev_get() takes a reference to the process's default device,
 * starting it with every default (emu_cfg_defaults()) if there is none;
 * emu_dev_put() drops one (the last stops the device and frees it).  No
 * context configures the default device: what it runs with is fixed, so
 * the first context to start it decides nothing.  It is reached only
 * through its contexts: code that needs a device's insides (tests of
 * internals) makes its own with oms_emu_create(). */
int emu_dev_create(const struct emu_cfg *cfg, struct oms_emu **dev);
int emu_dev_get(struct oms_emu **dev);
void emu_cfg_defaults(struct emu_cfg *cfg);
void emu_dev_hold(struct oms_emu *dev);
void emu_dev_put(struct oms_emu *dev);
int emu_dev_destroy(struct oms_emu *dev);	/* -EBUSY unless only the
						 * creator holds it */
int emu_cfg_check(const struct emu_cfg *cfg);	/* 0 or -EINVAL */
int emu_queue_open(struct oms_emu *dev, uint32_t node, uint32_t size,
		   struct emu_queue **q);
int emu_queue_open_flags(struct oms_emu *dev, uint32_t node, uint32_t size,
			 uint32_t flags, struct emu_queue **q);
void emu_queue_close(struct oms_emu *dev, struct emu_queue *q);
void emu_dev_stop(struct oms_emu *dev);		/* abrupt: abandons work */

/* Stopped or its thread gone: setup calls (a region, a listener, a
 * connection) are refused with -ENODEV at once, as data calls fail. */
static inline int emu_dev_gone(const struct oms_emu *dev)
{
	return __atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&dev->gone, __ATOMIC_ACQUIRE);
}
void emu_dev_freeze(struct oms_emu *dev, int on);	/* hang, no heartbeat */
void emu_dev_set_observer(struct oms_emu *dev, emu_observe_fn fn, void *arg);

/* clock.c: the wall and model clocks and the chaos stream */
uint64_t emu_wall_ns(void);			/* CLOCK_MONOTONIC */
uint64_t emu_now(const struct oms_emu *dev);	/* model ns; 0 if no model */
uint64_t emu_rand(struct oms_emu *dev);

/* advance.c: the clock's move, by the device thread */
#define EMU_NO_EVENT	UINT64_MAX
uint64_t emu_next_event(struct oms_emu *dev);		/* lock held */
int emu_clock_advance(struct oms_emu *dev, uint64_t horizon); /* lock held */

/*
 * initiator.c: the threads that issue commands on a device with a
 * latency model, each with its own model time (docs/emu-device.md, "Model
 * time").  Thread side (no lock): the time to stamp a post with, a wait
 * in liboms (until @w: completions on @q, or its source count moving)
 * and its end, the thread's time.  Device side (lock held): the horizon,
 * the least time of a thread that is working (waking those whose wait is
 * met), and the look at threads that hold the clock back for long.
 */
struct emu_initiator;
uint64_t emu_initiator_stamp(struct oms_emu *dev);
int emu_initiator_wait(struct oms_emu *dev, struct emu_queue *q,
		       const struct oms_be_wait *w);
void emu_initiator_wait_end(struct oms_emu *dev);
void emu_initiator_host(struct oms_emu *dev);
uint64_t emu_initiator_time(struct oms_emu *dev);
uint64_t emu_initiators_horizon(struct oms_emu *dev);
void emu_initiators_look(struct oms_emu *dev, uint64_t next);
void emu_initiators_forget_queue(struct oms_emu *dev,
				 const struct emu_queue *q);
void emu_initiators_fini(struct oms_emu *dev);

/* kick.c: the device thread's sleep under a latency model, and the
 * initiators' nudge when they give it something to do */
uint32_t emu_kick_gen(const struct oms_emu *dev);
void emu_kick_wait(struct oms_emu *dev, uint32_t gen, long ns);
void emu_kick(struct oms_emu *dev);

/* queue.c: initiator side of the rings (any thread owning the queue) */
int emu_q_post(struct emu_queue *q, const struct oms_wr *wr);
/* the same, not to start before model time @not_before (charge_cpu) */
int emu_q_post_at(struct emu_queue *q, const struct oms_wr *wr,
		  uint64_t not_before);
int emu_q_ring(struct emu_queue *q, uint32_t n);
int emu_q_poll(struct emu_queue *q, struct oms_wc *wc, int max,
	       uint64_t *src_done);

/* exec.c: when the device works on a queue's commands (lock held) */
int emu_intake(struct oms_emu *dev, struct emu_queue *q);
int emu_exec_pool(struct oms_emu *dev, struct emu_queue *q);
int emu_admit(struct oms_emu *dev);	/* latency model: arrivals now */
int emu_deliver_acks(struct oms_emu *dev, struct emu_queue *q);
int emu_validate(struct oms_emu *dev, const struct emu_queue *q,
		 const struct oms_wr *wr);

/* perform.c: what it does to memory, and completions (lock held) */
uint64_t emu_bus_ns(const struct oms_emu *dev);
int emu_complete(struct oms_emu *dev, struct emu_queue *q, uint32_t slot,
		 int status, uint64_t value, uint64_t due);
void emu_src_done(struct emu_queue *q);
int emu_apply(struct oms_emu *dev, struct emu_queue *q,
	      const struct emu_pend *p);
void emu_fail(struct oms_emu *dev, struct emu_queue *q,
	      const struct emu_pend *p, int status);

/* order.c: fences and failure records (lock held) */
void emu_note_fail(struct emu_queue *q, uint32_t dest, uint32_t idx);
int emu_fence_failed(const struct emu_queue *q, uint32_t dest, uint32_t idx);
int emu_fence_ready(const struct emu_queue *q, uint32_t dest, uint32_t idx,
		    int member);

/* order.c: what a pool entry waits for (lock held) */
uint32_t emu_pool_first_blocker(const struct emu_queue *q, uint32_t j);
int emu_pool_ready(const struct emu_queue *q, const struct emu_pend *p,
		   uint64_t now);

/* seq_park.c: each destination's stream machine, the members parked for
 * it, a member's failure */
#define EMU_SEQ_SKIP	UINT64_MAX	/* a parked cookie: a skip */
#define EMU_SEQ_NO_HEAD	(-1)		/* a stream with no head */
int emu_seq_init(struct oms_emu *dev);
void emu_seq_fini(struct oms_emu *dev);
void emu_seq_queue_init(struct emu_queue *q);
struct oms_dseq *emu_seq_machine(struct oms_emu *dev, uint32_t dest,
				 int make);
void emu_seq_park(struct emu_queue *q, uint16_t slot,
		  const struct emu_pend *p);
void emu_seq_unpark(struct emu_queue *q, uint16_t slot);
void emu_seq_cancel(struct oms_emu *dev, struct emu_queue *q,
		    uint64_t cookie);
void emu_seq_complete_dropped(struct oms_emu *dev, struct emu_queue *q,
			      struct oms_dseq *m);
void emu_seq_failed(struct oms_emu *dev, struct emu_queue *q, uint32_t dest,
		    uint16_t seq);

/* seq.c: sequence-numbered streams through the engine's machine */
void emu_seq_arrive(struct oms_emu *dev, struct emu_queue *q,
		    const struct emu_pend *p);
void emu_seq_skip(struct oms_emu *dev, struct emu_queue *q,
		  const struct oms_wr *wr);
void emu_seq_flush(struct oms_emu *dev, struct emu_queue *q,
		   const struct emu_pend *f);
int emu_seq_step(struct oms_emu *dev, struct emu_queue *q);
void emu_seq_resume(struct oms_emu *dev, struct emu_queue *q, uint32_t dest,
		     uint16_t next);
void emu_seq_drop_queue(struct oms_emu *dev, struct emu_queue *q);

/* reads.c: gets through the RLSQ */
int emu_reads_init(struct oms_emu *dev);
void emu_reads_fini(struct oms_emu *dev);
uint64_t emu_get_due(const struct oms_emu *dev, uint64_t now,
		     uint64_t nic_wait);
int emu_get_accept(struct oms_emu *dev, struct emu_queue *q,
		   const struct emu_pend *p);
int emu_reads_step(struct oms_emu *dev);
uint64_t emu_lines_next(struct oms_emu *dev);
void emu_reads_drop_queue(struct oms_emu *dev, struct emu_queue *q);

#endif
