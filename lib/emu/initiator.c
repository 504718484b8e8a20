// SPDX-License-Identifier: MIT
/*
 * The threads that issue commands on a device with a latency model, and
 * their model time: what keeps the device's clock (clock.c) from running
 * past anything a thread could still submit.
 *
 * Each thread has a record per device, made at its first command there.
 * A record is
 *   working (ACTIVE): the thread runs outside liboms, or inside without
 *     waiting; its model time is that of the last completion it was woken
 *     for, plus the CPU it has been charged since (OMS_EMU_F_CHARGE_CPU),
 *     and every command it posts is stamped with it.  The device never
 *     moves its clock past the least such time (the horizon);
 *   waiting (WAITING): the thread waits in liboms for completions of one
 *     queue, or its source count (oms_quiet(), a full queue, a second
 *     empty oms_progress()).  It holds nobody back: the clock runs on, and
 *     stops where the wait comes true, where the device makes the record
 *     working again at that time (a wake-up, at the start of a step);
 *   away (AWAY): the thread is blocked in the kernel (sleeping, joining,
 *     waiting on a lock or a pipe), seen from /proc when the clock has
 *     waited for it for long, or it waits in liboms on another device, or
 *     it has read or written its own memory as the host CPU does
 *     (oms_mr_read(), oms_mr_write(): a host CPU polling a flag is not an
 *     initiator).  It holds nobody back, and at its next command it joins
 *     again at the device's clock.
 *
 * Why it is safe: a working thread's next command is stamped no earlier
 * than its time, which is at or after the clock (the clock never passed
 * it); a waiting thread issues nothing until it is working again, which
 * is at the clock, under the device lock (the device's wake, or the
 * thread's own join); and what a thread rang before it waited is taken
 * by the device before it moves the clock (the horizon is read first).
 * So no command arrives at a model time the device has already passed,
 * except a thread's that comes back from the kernel.  Its cost: the
 * device waits, in wall time, for every working thread, and a thread that
 * spins outside liboms for the device's work (on memory a put writes)
 * without its CPU charged holds the clock still for ever.
 *
 * A record belongs to its thread and to the device: each holds a
 * reference, and whichever lets go last frees it, so a thread may exit
 * before the device is destroyed, or after.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emu/emu.h"
#include "util/cpu_charge.h"

enum { I_ACTIVE, I_WAITING, I_AWAY };

/* The clock has waited this long (wall) for working threads: look at
 * them in /proc. */
#define LOOK_NS		500000ull
/* A waiting thread sleeps until the device wakes it, or this long (the
 * wait's liveness checks go on meanwhile). */
#define NAP_NS		1000000l

struct emu_initiator {
	/* read by the device thread: __atomic */
	uint64_t time;			/* model ns */
	uint32_t state;			/* I_* */
	uint32_t thread_gone, dev_gone;
	uint32_t refs;			/* its thread's, its device's */
	uint32_t napping;		/* its thread sleeps on @state */
	/* WAITING: what ends it (written before the state) */
	const struct emu_queue *wq;
	uint32_t cq_target;		/* wq's completions produced */
	uint32_t want_src;
	uint64_t src_target;		/* wq's source count */
	pid_t tid;
	/* the thread's own */
	struct oms_emu *dev;
	uint64_t charged_seen;		/* oms_cpu_charged() in time */
	struct emu_initiator *next;	/* the thread's records */
};

static __thread struct emu_initiator *mine_list;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void put_ref(struct emu_initiator *r)
{
	if (!__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL))
		free(r);
}

/* The thread exits: its records stop holding anyone back. */
static void thread_exit(void *unused)
{
	(void)unused;
	while (mine_list) {
		struct emu_initiator *r = mine_list;

		mine_list = r->next;
		__atomic_store_n(&r->thread_gone, 1, __ATOMIC_RELEASE);
		put_ref(r);
	}
}

static void make_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit))
		exit_key = (pthread_key_t)-1;
}

static uint32_t load_state(const struct emu_initiator *r)
{
	return __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
}

static void set_time(struct emu_initiator *r, uint64_t t)
{
	__atomic_store_n(&r->time, t, __ATOMIC_RELEASE);
}

static struct emu_initiator *enrol(struct oms_emu *dev)
{
	struct emu_initiator *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	pthread_once(&key_once, make_key);
	r->refs = 2;
	r->dev = dev;
	r->tid = (pid_t)syscall(SYS_gettid);
	r->charged_seen = oms_cpu_charged();
	pthread_mutex_lock(&dev->lock);
	if (dev->ninit == dev->init_cap) {
		uint32_t cap = dev->init_cap ? 2 * dev->init_cap : 16;
		void *n = realloc(dev->init, cap * sizeof(*dev->init));

		if (!n) {
			pthread_mutex_unlock(&dev->lock);
			free(r);
			return NULL;
		}
		dev->init = n;
		dev->init_cap = cap;
	}
	dev->init[dev->ninit++] = r;
	r->time = dev->clock;
	r->state = I_ACTIVE;
	pthread_mutex_unlock(&dev->lock);
	r->next = mine_list;
	mine_list = r;
	if (exit_key != (pthread_key_t)-1)
		pthread_setspecific(exit_key, r);	/* non-NULL: run it */
	return r;
}

/* This thread's record on @dev; @make: enrol if it has none. */
static struct emu_initiator *mine(struct oms_emu *dev, int make)
{
	struct emu_initiator **pp = &mine_list, *r;

	while ((r = *pp)) {
		if (__atomic_load_n(&r->dev_gone, __ATOMIC_ACQUIRE)) {
			*pp = r->next;		/* its device is gone */
			put_ref(r);
			continue;
		}
		if (r->dev == dev)
			return r;
		pp = &r->next;
	}
	return make ? enrol(dev) : NULL;
}

/* The CPU the thread was charged since the record last looked. */
static void charge(struct emu_initiator *r)
{
	uint64_t c = oms_cpu_charged();

	if (r->dev->cfg.charge_cpu && c > r->charged_seen)
		set_time(r, r->time + (c - r->charged_seen));
	r->charged_seen = c;
}

/* Working again, at the device's clock if that is later (under the lock:
 * the clock does not move meanwhile, and the device's own wake-up does
 * not race it). */
static void rejoin(struct emu_initiator *r)
{
	struct oms_emu *dev = r->dev;

	pthread_mutex_lock(&dev->lock);
	if (load_state(r) != I_ACTIVE) {
		if (r->time < dev->clock)
			set_time(r, dev->clock);
		__atomic_store_n(&r->wq, NULL, __ATOMIC_RELAXED);
		__atomic_store_n(&r->state, I_ACTIVE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&dev->lock);
}

/*
 * A thread whose wait stands sleeps until the device wakes it (or for
 * NAP_NS): on a machine with fewer cores than threads, waiting threads
 * that spun would take the cores from the device and from the one thread
 * it waits for.  @napping and @state are a Dekker pair with wake().
 */
static void nap(struct emu_initiator *r)
{
	struct timespec ts = { 0, NAP_NS };

	__atomic_store_n(&r->napping, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->state, __ATOMIC_SEQ_CST) == I_WAITING)
		syscall(SYS_futex, &r->state, FUTEX_WAIT_PRIVATE, I_WAITING,
			&ts, NULL, 0);
	__atomic_store_n(&r->napping, 0, __ATOMIC_RELAXED);
}

static void wake(struct emu_initiator *r)
{
	if (__atomic_load_n(&r->napping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &r->state, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
}

uint64_t emu_initiator_stamp(struct oms_emu *dev)
{
	struct emu_initiator *r = mine(dev, 1);

	if (!r)
		return emu_now(dev);	/* no memory: the clock's time */
	if (load_state(r) != I_ACTIVE)
		rejoin(r);
	charge(r);
	return r->time;
}

uint64_t emu_initiator_time(struct oms_emu *dev)
{
	struct emu_initiator *r = mine(dev, 0);

	if (!r)
		return emu_now(dev);
	if (load_state(r) != I_ACTIVE)
		rejoin(r);
	charge(r);
	return r->time;
}

int emu_initiator_wait(struct oms_emu *dev, struct emu_queue *q,
		       const struct oms_be_wait *w)
{
	struct emu_initiator *r = mine(dev, 1), *o;
	uint32_t st, want = I_WAITING;

	if (!r)
		return 0;
	st = load_state(r);
	if (st == I_WAITING) {
		if (__atomic_load_n(&r->wq, __ATOMIC_RELAXED) == q) {
			nap(r);		/* the wait stands */
			return 1;
		}
		/* another queue's wait: out of it before the targets change
		 * (the device wakes only from WAITING) */
		if (!__atomic_compare_exchange_n(&r->state, &want, I_AWAY, 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			return 0;	/* woken meanwhile: next pass */
	}
	charge(r);
	__atomic_store_n(&r->cq_target,
			 q->cq_head + (w->completions ? w->completions : 1),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->want_src, w->src, __ATOMIC_RELAXED);
	__atomic_store_n(&r->src_target, w->src_seen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->wq, q, __ATOMIC_RELAXED);
	__atomic_store_n(&r->state, I_WAITING, __ATOMIC_RELEASE);
	emu_kick(dev);		/* the clock may move now */
	/* waiting in liboms, it holds no other device back either */
	for (o = mine_list; o; o = o->next) {
		uint32_t act = I_ACTIVE;

		if (o != r)
			__atomic_compare_exchange_n(&o->state, &act, I_AWAY, 0,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
	}
	/* what it waits for may have come while it declared the wait: the
	 * device then wakes it at its next step, and the nap ends there */
	nap(r);
	return 1;
}

/* The thread accesses its own memory as the host CPU (oms_mr_read(),
 * oms_mr_write()): outside model time, like a thread in the kernel, until
 * it next issues. */
void emu_initiator_host(struct oms_emu *dev)
{
	struct emu_initiator *r = mine(dev, 0);
	uint32_t act = I_ACTIVE;

	if (r && __atomic_compare_exchange_n(&r->state, &act, I_AWAY, 0,
					     __ATOMIC_ACQ_REL,
					     __ATOMIC_ACQUIRE))
		emu_kick(dev);	/* the clock may move now */
}

void emu_initiator_wait_end(struct oms_emu *dev)
{
	struct emu_initiator *r = mine(dev, 0);

	if (r && load_state(r) != I_ACTIVE)
		rejoin(r);
}

/* ---- the device's side (lock held) ------------------------------------ */

static int wait_met(const struct emu_initiator *r)
{
	const struct emu_queue *q = __atomic_load_n(&r->wq, __ATOMIC_RELAXED);

	if (!q)
		return 0;
	if ((int32_t)(q->cq_tail -
		      __atomic_load_n(&r->cq_target, __ATOMIC_RELAXED)) >= 0)
		return 1;
	return __atomic_load_n(&r->want_src, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&q->src_done, __ATOMIC_ACQUIRE) >=
	       __atomic_load_n(&r->src_target, __ATOMIC_RELAXED);
}

static void drop(struct oms_emu *dev, uint32_t i)
{
	struct emu_initiator *r = dev->init[i];

	dev->init[i] = dev->init[--dev->ninit];
	put_ref(r);
}

/*
 * The least model time of a working thread (EMU_NO_EVENT: none works).
 * A waiting thread whose wait came true works again from now on, at the
 * clock's time: it was woken where the completion it waited for became
 * visible.  Read before the device takes new commands, so that whatever
 * a thread rang before it waited is taken before the clock moves.
 */
uint64_t emu_initiators_horizon(struct oms_emu *dev)
{
	uint64_t h = EMU_NO_EVENT;

	for (uint32_t i = 0; i < dev->ninit; i++) {
		struct emu_initiator *r = dev->init[i];
		uint32_t st;
		uint64_t t;

		if (__atomic_load_n(&r->thread_gone, __ATOMIC_ACQUIRE)) {
			drop(dev, i--);
			continue;
		}
		st = load_state(r);
		if (st == I_WAITING) {
			if (!wait_met(r))
				continue;
			if (r->time < dev->clock)
				set_time(r, dev->clock);
			if (!__atomic_compare_exchange_n(&r->state, &st,
							 I_ACTIVE, 0,
							 __ATOMIC_SEQ_CST,
							 __ATOMIC_ACQUIRE))
				continue;	/* it left the wait itself */
			wake(r);
		} else if (st != I_ACTIVE) {
			continue;
		}
		t = __atomic_load_n(&r->time, __ATOMIC_ACQUIRE);
		if (t < h)
			h = t;
	}
	return h;
}

/* A thread's scheduler state from /proc: 'R' running or waiting for a
 * core, 'S'/'D' blocked, ...; 0 if it has gone. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : 'R';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 'R';
	buf[n] = 0;
	p = strrchr(buf, ')');		/* the name may hold anything */
	return p && p[1] == ' ' && p[2] ? p[2] : 'R';
}

/*
 * The clock waits for working threads to reach @next.  Once it has waited
 * LOOK_NS, look at those behind @next: one blocked in the kernel is away
 * (it holds the clock no longer), one that has gone is forgotten; one
 * that runs or waits for a core is waited for.
 */
void emu_initiators_look(struct oms_emu *dev, uint64_t next)
{
	uint64_t now = emu_wall_ns();

	if (!dev->stuck_since) {
		dev->stuck_since = now;
		return;
	}
	if (now - dev->stuck_since < LOOK_NS)
		return;
	dev->stuck_since = now;
	for (uint32_t i = 0; i < dev->ninit; i++) {
		struct emu_initiator *r = dev->init[i];
		uint32_t act = I_ACTIVE;
		char s;

		if (load_state(r) != I_ACTIVE ||
		    __atomic_load_n(&r->time, __ATOMIC_ACQUIRE) >= next)
			continue;
		s = thread_state(r->tid);
		if (!s)
			__atomic_store_n(&r->thread_gone, 1, __ATOMIC_RELEASE);
		else if (s != 'R')
			__atomic_compare_exchange_n(&r->state, &act, I_AWAY, 0,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
	}
}

/* Queue @q closes: a thread still waiting on it (an empty oms_progress()
 * left it so) is away from then on. */
void emu_initiators_forget_queue(struct oms_emu *dev,
				 const struct emu_queue *q)
{
	for (uint32_t i = 0; i < dev->ninit; i++) {
		struct emu_initiator *r = dev->init[i];
		uint32_t st = I_WAITING;

		if (__atomic_load_n(&r->wq, __ATOMIC_RELAXED) != q)
			continue;
		if (__atomic_compare_exchange_n(&r->state, &st, I_AWAY, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			__atomic_store_n(&r->wq, NULL, __ATOMIC_RELAXED);
	}
}

/* The device goes: its records are its threads' alone. */
void emu_initiators_fini(struct oms_emu *dev)
{
	while (dev->ninit) {
		struct emu_initiator *r = dev->init[--dev->ninit];

		__atomic_store_n(&r->dev_gone, 1, __ATOMIC_RELEASE);
		put_ref(r);
	}
	free(dev->init);
	dev->init = NULL;
	dev->init_cap = 0;
}
