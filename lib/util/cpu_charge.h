/* SPDX-License-Identifier: MIT */
/*
 * The CPU time a thread spends outside liboms between its data-path
 * calls: what the emulated device's latency model charges on the thread's
 * model clock when told to (OMS_EMU_F_CHARGE_CPU, oms_emu.h says why).
 * The context layer opens a scope in each data-path call (OMS_CPU_SCOPE);
 * the thread's total so far is oms_cpu_charged(), which the backend reads
 * when it stamps the thread's next operation.
 *
 * Which clock.  The thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID), at
 * every interval length: a thread that waits for a core, or sleeps, is not
 * working.  It is read on the way into each counting call and on the way
 * out, so an interval holds the thread's work and the two reads' halves
 * that fall into it.  That clock has no vDSO: a read is a system call,
 * about 1.1 us on this project's 2-core VMs, so a counting call costs
 * 2.2 us more of wall time and nothing of model time.
 *
 * What is not the thread's work is taken off (lib/util/cpu_charge.c):
 *  - the reads' own cost, which moves by tens of ns with the machine: the
 *    median of the thread's own intervals over the last few thousand
 *    (most of a client's intervals are two calls back to back, whose few
 *    ns of work it leaves uncharged); until it has had enough of them, the
 *    median of a few pairs of reads made as a call's exit and the next
 *    call's entry make them.  An interval shorter than the cost counts
 *    against the next ones, but the total never goes back;
 *  - nothing for a context switch: an interval in which the thread lost
 *    its core holds only its own work (measured here: a preempted
 *    interval of two back-to-back reads holds the same 1.1 us of CPU time
 *    as one that was not), so it is an interval like the others.  A
 *    thread's intervals are never charged less than they hold for being
 *    preempted: a cap on them from what the thread usually did would
 *    undercharge a thread whose work grew;
 *  - interrupts': the kernel charges the interrupts it handles to the
 *    thread that runs (on these VMs, without IRQ time accounting, a
 *    rescheduling or function-call interrupt is tens of us), and a thread
 *    that is woken often is interrupted often.  So an interval is charged
 *    at most the thread's 99th percentile of what its intervals held
 *    beyond the cost (over the last few thousand): the top one in a
 *    hundred of a thread's intervals is taken for an interrupt.  A
 *    thread whose work between calls grows past that cap is charged the
 *    cap until the next measurement, at most OMS_CPU_RECAL intervals on.
 * What stays charged beyond the work is the reads' tail, a read now and
 * then taking longer (an interrupt handled on the thread's time), a few
 * tens of ns a call on average here.
 *
 * Per thread, not per context: the time between a call on one context
 * and a call on another is the thread's work too.  A nested call adds
 * nothing; a call of a context that does not count (no charging device)
 * ends the interval without charging it.
 */
#ifndef OMS_UTIL_CPU_CHARGE_H
#define OMS_UTIL_CPU_CHARGE_H

#include <stdint.h>
#include <time.h>

/* Intervals between two measurements of the cost. */
#define OMS_CPU_RECAL	1024u
/* The thread's intervals are kept by length around its first pairs'
 * median: OMS_CPU_BINS bins of OMS_CPU_BIN_NS, half below, half above. */
#define OMS_CPU_BIN_NS	4u
#define OMS_CPU_BINS	128u
/* What intervals held beyond the cost, by length: OMS_CPU_LOG_SUB bins
 * per power of two from 16 ns (the 99th percentile's). */
#define OMS_CPU_LOG_SUB	4u
#define OMS_CPU_LOG_BINS 96u

struct oms_cpu_thread {
	uint64_t charged;	/* CPU ns outside liboms so far (counting);
				 * never goes back */
	int64_t acc;		/* the same, each interval less the cost */
	uint64_t left_cpu;	/* thread CPU clock when the last counting
				 * call returned; 0: none to count from */
	uint64_t cost;		/* an empty interval's (0: not measured) */
	uint64_t base;		/* the intervals' bins start here */
	uint32_t since_cost;	/* intervals since it was measured */
	uint32_t depth;		/* data-path calls in progress */
	uint32_t counting;	/* the outermost one counts */
	uint64_t cap;		/* the most an interval is charged (0: no
				 * cap yet) */
	uint32_t bins[OMS_CPU_BINS];	/* intervals by length (decaying) */
	uint32_t over[OMS_CPU_LOG_BINS];	/* by what they held beyond
						 * the cost (decaying) */
};

/* This thread's (lib/util/cpu_charge.c). */
extern __thread struct oms_cpu_thread oms_cpu_self
	__attribute__((visibility("hidden")));

/* Measure @t's cost again (lib/util/cpu_charge.c). */
void oms_cpu_measure_cost(struct oms_cpu_thread *t)
	__attribute__((visibility("hidden")));

static inline uint64_t oms_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The CPU ns this thread has spent outside liboms since it started
 * counting: a backend charges the difference between two readings. */
static inline uint64_t oms_cpu_charged(void)
{
	return oms_cpu_self.charged;
}

/* The log bin of @x ns. */
static inline uint32_t oms_cpu_log_bin(uint64_t x)
{
	uint32_t msb, b;

	if (x < 16)
		return 0;
	msb = 63 - (uint32_t)__builtin_clzll(x);
	b = (msb - 4) * OMS_CPU_LOG_SUB +
	    (uint32_t)((x >> (msb - 2)) & (OMS_CPU_LOG_SUB - 1));
	return b < OMS_CPU_LOG_BINS ? b : OMS_CPU_LOG_BINS - 1;
}

/* Charge an interval that held @x ns beyond the reads' cost (negative: it
 * was quicker than the median), at most the cap. */
static inline void oms_cpu_charge(struct oms_cpu_thread *t, int64_t x)
{
	t->over[oms_cpu_log_bin(x > 0 ? (uint64_t)x : 0)]++;
	if (t->cap && x > (int64_t)t->cap)
		x = (int64_t)t->cap;
	t->acc += x;
	if (t->acc > (int64_t)t->charged)
		t->charged = (uint64_t)t->acc;
}

/* One interval of @d ns between two reads: charge what is beyond the
 * reads' own cost.  (Measuring the cost here puts its reads inside the
 * call, after the interval's end.) */
static inline void oms_cpu_interval(struct oms_cpu_thread *t, uint64_t d)
{
	if (!t->cost || ++t->since_cost >= OMS_CPU_RECAL)
		oms_cpu_measure_cost(t);
	if (d >= t->base && d - t->base < OMS_CPU_BINS * OMS_CPU_BIN_NS)
		t->bins[(d - t->base) / OMS_CPU_BIN_NS]++;
	oms_cpu_charge(t, (int64_t)d - (int64_t)t->cost);
}

static inline int oms_cpu_enter(int on)
{
	struct oms_cpu_thread *t = &oms_cpu_self;
	uint64_t now;

	if (t->depth++)
		return 0;		/* nested: the outer call counts */
	t->counting = on;
	if (!on) {
		t->left_cpu = 0;	/* nothing to count across it */
		return 0;
	}
	now = oms_thread_cpu_ns();
	if (t->left_cpu && now >= t->left_cpu)
		oms_cpu_interval(t, now - t->left_cpu);
	return 0;
}

static inline void oms_cpu_leave(int *unused)
{
	struct oms_cpu_thread *t = &oms_cpu_self;

	(void)unused;
	if (--t->depth || !t->counting)
		return;
	t->left_cpu = oms_thread_cpu_ns();
}

/* The rest of the calling function is one call, counted (when @on) from
 * its entry to its return, whichever return that is. */
#define OMS_CPU_SCOPE(on)						\
	int oms_cpu_scope_						\
		__attribute__((cleanup(oms_cpu_leave), unused)) =	\
		oms_cpu_enter(on)

#endif /* OMS_UTIL_CPU_CHARGE_H */
