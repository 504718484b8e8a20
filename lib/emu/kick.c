// SPDX-License-Identifier: MIT
/*
 * Under a latency model the device thread often has nothing it may do:
 * the clock waits for a working initiator thread, or nothing is in
 * flight.  Spinning or yielding then takes a core from the very thread it
 * waits for, and on a machine busy with other work a yield gives the core
 * away for a whole scheduler slice.  So it sleeps on a futex, and the
 * events that can give it something to do wake it: a doorbell, and a
 * thread that starts waiting (the clock may then move).  It never sleeps
 * longer than it is told, so its heartbeat, its look at the threads that
 * hold the clock (initiator.c) and the wall-clock floor go on.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "emu/emu.h"

/* Read before a step: a kick after it is not slept through. */
uint32_t emu_kick_gen(const struct oms_emu *dev)
{
	return __atomic_load_n(&dev->kick, __ATOMIC_SEQ_CST);
}

/* The device thread: sleep up to @ns unless kicked since @gen.  @napping
 * and @kick are a Dekker pair with emu_kick(). */
void emu_kick_wait(struct oms_emu *dev, uint32_t gen, long ns)
{
	struct timespec ts = { 0, ns };

	__atomic_store_n(&dev->napping, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&dev->kick, __ATOMIC_SEQ_CST) == gen &&
	    !__atomic_load_n(&dev->stop, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &dev->kick, FUTEX_WAIT_PRIVATE, gen, &ts,
			NULL, 0);
	__atomic_store_n(&dev->napping, 0, __ATOMIC_RELAXED);
}

/* An initiator gave the device something to do. */
void emu_kick(struct oms_emu *dev)
{
	__atomic_add_fetch(&dev->kick, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&dev->napping, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &dev->kick, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
}
