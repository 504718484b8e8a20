/* SPDX-License-Identifier: MIT */
/*
 * liboms - the emulated device as an object.
 *
 * The emulated device (docs/emu-device.md) is a software fabric: NICs,
 * root complexes and host memory of up to OMS_MAX_NODES nodes, run by a
 * thread of its own.  Tests, benchmarks and demos need to choose how it
 * behaves (reorder everything it may, charge a latency model, order reads
 * in the NIC or the root complex) and to break it on purpose (hang it,
 * make it gone, watch what it makes visible and when).  Those are
 * properties of the device, not of a context, so they live here:
 *
 *	struct oms_emu *emu;
 *	struct oms_emu_attr ea = {
 *		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
 *		.chaos_seed = 42,
 *	};
 *	oms_emu_create(&ea, &emu);
 *	struct oms_ctx_attr ca = {
 *		.size = sizeof(ca), .comp_mask = OMS_CTX_ATTR_EMU, .emu = emu,
 *	};
 *	oms_ctx_create(&ca, &ctx);	// node 0 of that fabric
 *	...
 *	oms_ctx_destroy(ctx);
 *	oms_emu_destroy(emu);
 *
 * Each object is a fabric of its own: its thread, its region table and
 * keys, its listeners (a context of one device cannot connect to a
 * listener of another), its read engine and hold trackers.  A process may
 * hold several at once, configured differently.
 *
 * Contexts that name no device share the process's default one, started
 * by the first such context from its attribute fields (chaos_seed, lat_*,
 * read_order, ...) and stopped with the last: the way every program
 * written before this header works, and still the simplest for one.
 *
 * Not for production I/O: with no ordering silicon anywhere, this is what
 * liboms runs its ordering rules against.  Same error convention as
 * oms.h: 0 or a negative errno; a call refused for a bad argument changes
 * nothing.
 */
#ifndef OMS_EMU_H
#define OMS_EMU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct oms_emu;

/* struct oms_emu_attr.comp_mask: which optional fields are valid. */
#define OMS_EMU_ATTR_CHAOS	(1u << 0)	/* chaos_seed */
#define OMS_EMU_ATTR_LATENCY	(1u << 1)	/* lat_*, link_gbps, time_scale */
#define OMS_EMU_ATTR_READ_ORDER	(1u << 2)	/* read_order, rlsq_entries */
#define OMS_EMU_ATTR_NIC_RATE	(1u << 3)	/* lat_req_ns */
#define OMS_EMU_ATTR_FLAGS	(1u << 4)	/* flags */
#define OMS_EMU_ATTR_ALL	0x1fu

/* struct oms_emu_attr.flags */
#define OMS_EMU_F_NO_HOLD	(1u << 0) /* baseline: no Gen-Z response
					   * hold (what the hold prevents
					   * can then be seen) */
#define OMS_EMU_F_HOLD_GLOBAL	(1u << 1) /* the Gen-Z hold waits for
					   * posted writes to any node, not
					   * only the reader's */
#define OMS_EMU_F_CHARGE_CPU	(1u << 2) /* with the latency model: each
					   * initiator thread's CPU time
					   * outside liboms costs model time
					   * (below) */
#define OMS_EMU_F_ALL		0x7u

/*
 * Device attributes.  Extensible as struct oms_ctx_attr is: @size is
 * sizeof() as the caller was compiled (bytes beyond what the library
 * knows must be zero); fields whose bit is not in @comp_mask take the
 * defaults after each.  Limits: every latency and lat_req_ns <= 1 ms,
 * time_scale <= 10^6, link_gbps 1..10000, rlsq_entries 1..4096;
 * OMS_EMU_F_CHARGE_CPU only with a latency model (time_scale > 0).
 *
 * The latency model (time_scale > 0) runs on model time, the device's own
 * clock, as a discrete-event simulator's does: the clock stands at the
 * time of what the device is doing and jumps to the next event when
 * nothing is left there, never further than any thread that issues on
 * the device could still submit something (each such thread has a model
 * time of its own: that of the last completion it waited for, plus its
 * charged CPU time; a thread waiting in liboms holds nobody back).  So
 * the figures do not depend on the host: a busy machine, a descheduled
 * device thread, sixteen client threads on two cores change how long a
 * run takes, not what it measures.  Time a run with
 * oms_emu_thread_time() (below), not the host's clock.
 *
 * time_scale is then the least number of wall ns one model ns takes: the
 * clock never runs ahead of wall time / time_scale.  1 never holds back a
 * busy model (it runs slower than real time here); a larger value slows
 * a sparse one down, so that a host thread that is not an initiator (one
 * writing with oms_mr_write()) meets the device's work in flight.  It
 * never changes a figure.
 *
 * Without OMS_EMU_F_CHARGE_CPU an initiator's work outside liboms takes
 * no model time: a client that spends 100 ns validating an item between
 * two gets issues the second at the same model time, and a protocol whose
 * cost is on the CPU (stripping versions from every line, handling a
 * lock) looks free.  With it, the CPU time each initiator thread spends
 * outside liboms between two of its calls (its thread CPU clock, so time
 * it spends descheduled does not count, minus the clock's own cost) moves
 * that thread's model time on by as many model ns.  Time inside liboms
 * (posting, polling, waiting) is not charged: it stands for the NIC
 * driver's share, which software emulation inflates.  Costs two reads of
 * the thread CPU clock (a system call each, about 1 us) per data-path
 * call, in wall time only.  That clock holds more than the thread's work
 * where the kernel does not account interrupt time apart: the interrupts
 * handled while it runs, and with more threads than cores their sharing
 * of the cores; such figures move with the machine's load.
 *
 * A thread that waits for the device's work outside liboms without its
 * CPU charged holds model time still: wait with oms_quiet(), or
 * oms_progress() (two calls in a row that find nothing are a wait), or
 * poll memory with oms_mr_read(), which is the host CPU's access and
 * takes the thread out of model time until it next issues (so does
 * oms_mr_write()).  A thread blocked in the kernel (sleeping, joining)
 * is seen as such after a while and holds nothing back.
 */
struct oms_emu_attr {
	uint32_t size;
	uint32_t comp_mask;	/* OMS_EMU_ATTR_* */
	uint64_t chaos_seed;	/* reorder all a fabric may, from this seed;
				 * 0 = execute in order, complete at once */
	uint32_t lat_bus_ns;	/* one-way I/O bus latency; 200 */
	uint32_t lat_rc_ns;	/* root complex latency; 17 */
	uint32_t lat_mem_ns;	/* memory latency per line; 50 */
	uint32_t link_gbps;	/* response link rate; 100 */
	uint32_t time_scale;	/* 0 = no latency model (everything at
				 * once); else the model is on, at least
				 * this many wall ns per model ns */
	uint32_t read_order;	/* enum oms_read_order; OMS_ORDER_RC_OPT */
	uint32_t rlsq_entries;	/* RLSQ entries; 256 */
	uint32_t lat_req_ns;	/* with the latency model: each responder
				 * NIC's service time per request; 0 = no
				 * limit */
	uint32_t flags;		/* OMS_EMU_F_*; 0 */
	uint32_t reserved;	/* must be 0 */
};

/*
 * Start a device (its thread runs from here on) into *@emu.  NULL @attr:
 * every default.  -EINVAL (bad field, unknown bit), -E2BIG (nonzero bytes
 * beyond what this library knows), -ENOMEM, -EAGAIN (no thread).
 */
int oms_emu_create(const struct oms_emu_attr *attr, struct oms_emu **emu);

/*
 * Stop the device and free it.  -EBUSY while a context made on it lives
 * (destroy those first: their memory regions are in its table); -EINVAL
 * for NULL.
 */
int oms_emu_destroy(struct oms_emu *emu);

/*
 * Fault injection.  oms_emu_freeze(emu, 1) hangs the device and returns
 * once it is hung: from then on it takes and executes nothing and its
 * heartbeat stops, so its contexts' calls that wait end in -ETIMEDOUT
 * after their timeout_ms; oms_emu_freeze(emu, 0) lets it run again
 * (before that timeout, nothing is lost).
 * oms_emu_stop() makes it gone abruptly, abandoning work in flight: every
 * operation of its contexts then fails with -ENODEV, and new contexts on
 * it are refused with -ENODEV; only oms_emu_destroy() is left to do.
 * -EINVAL for NULL.
 */
int oms_emu_freeze(struct oms_emu *emu, int on);
int oms_emu_stop(struct oms_emu *emu);

/* What oms_emu_set_observer() reports. */
enum oms_emu_event_kind {
	OMS_EMU_EV_PUT = 1,	/* a put became visible in memory */
	OMS_EMU_EV_ATOMIC = 2,	/* a fetch-and-add or compare-and-swap did */
	OMS_EMU_EV_GET = 3,	/* a get's response left the destination */
};

struct oms_emu_event {
	uint32_t kind;		/* enum oms_emu_event_kind */
	uint32_t src;		/* the initiator context's node */
	uint32_t dest;		/* the node whose memory it is */
	uint32_t region;	/* struct oms_rmr.region as the initiator
				 * named it */
	uint64_t off, len;	/* the bytes, in that region */
};

typedef void (*oms_emu_observe_fn)(void *arg, const struct oms_emu_event *ev);

/*
 * Call @fn(@arg, event) at each event, in the order the device makes them
 * happen, from the device's thread, with the device stopped around it:
 * what @fn reads of the fabric's memory is the state right after the
 * event (this is how a litmus test sees an order at the destination
 * rather than through completions).  NULL @fn removes the observer; when
 * the call returns, the old one is no longer running.  -EINVAL for NULL
 * @emu.
 *
 * @fn must not call liboms.  The calls of this header that wait for the
 * device's thread (oms_emu_freeze(), oms_emu_stop(), oms_emu_destroy(),
 * oms_emu_set_observer()) return -EDEADLK there: that thread is the one
 * running @fn.
 */
int oms_emu_set_observer(struct oms_emu *emu, oms_emu_observe_fn fn,
			 void *arg);

/*
 * From inside an observer: the host CPU of the region's node writes @len
 * bytes of @src at @off of @region (an event's region) at that instant,
 * between two events of the device.  As oms_mr_write(): coherent with the
 * device, so an ordered read that is speculating on those lines (RC-opt)
 * is squashed and retried.  This is how a test puts a host write exactly
 * where it races an ordered read; outside an observer
 * use oms_mr_write().  -EINVAL (NULL, @len 0, no such region), -ERANGE
 * (@off + @len beyond it), -EPERM (not called from the device's observer).
 */
int oms_emu_host_write(struct oms_emu *emu, uint32_t region, uint64_t off,
		       const void *src, size_t len);

/*
 * Model time, in ns since the device started (0 without a latency model).
 * oms_emu_clock(): the device's clock, the time of the last event it
 * performed (from an observer: the event being reported).
 * oms_emu_thread_time(): the calling thread's own model time on @emu (the
 * device's clock if the thread has issued nothing there): what a
 * benchmark times its operations with.  Neither waits for the device; an
 * observer may call them.  -EINVAL for NULL.
 */
int oms_emu_clock(const struct oms_emu *emu, uint64_t *ns);
int oms_emu_thread_time(struct oms_emu *emu, uint64_t *ns);

#ifdef __cplusplus
}
#endif

#endif /* OMS_EMU_H */
