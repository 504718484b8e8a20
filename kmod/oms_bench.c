// SPDX-License-Identifier: GPL-2.0
/*
 * oms_bench.c - MMIO_BENCH: write bandwidth of write-combining stores to the
 * window, with a WC drain after every message (ordered transmit) or only at
 * the end (unordered).  Timed with ktime and the TSC.
 *
 * A run uses the window (w->use for reading) and nothing else, so it blocks
 * no other call, fault, open or release.  Between chunks of
 * OMS_BENCH_CHECK_EVERY bytes it yields the CPU and stops on any pending
 * signal (reporting the part that ran) or on detach (-ENODEV).
 */
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/timex.h>
#ifdef CONFIG_X86
#include <asm/tsc.h>
#endif

#include "oms_drv.h"
#include "oms_barrier.h"

#define OMS_BENCH_DEFAULT_SPAN	SZ_256K
#define OMS_BENCH_CHECK_EVERY	SZ_256K		/* bytes between checks */

int oms_bench_check(const struct oms_bench *a)
{
	if (a->flags & ~OMS_BENCH_FENCE || a->reserved0 || a->reserved[0] ||
	    a->reserved[1])
		return -EINVAL;
	if (a->msg_size < OMS_BENCH_MIN_MSG || a->msg_size > OMS_BENCH_MAX_MSG ||
	    !is_power_of_2(a->msg_size))
		return -EINVAL;
	if (a->width != 4 && a->width != 8)
		return -EINVAL;
	if (!a->total_bytes || a->total_bytes > OMS_BENCH_MAX_TOTAL ||
	    a->total_bytes % a->msg_size)
		return -EINVAL;
	if (a->offset % a->msg_size || a->span % a->msg_size)
		return -EINVAL;
	return 0;
}

/* One message of @len bytes: @width-byte WC stores of their own offset. */
static void oms_bench_msg(void __iomem *p, u64 off, u32 len, u32 width)
{
	u32 i;

	if (width == 8) {
		for (i = 0; i < len; i += 8)
			__raw_writeq(off + i, p + i);
	} else {
		for (i = 0; i < len; i += 4)
			__raw_writel((u32)(off + i), p + i);
	}
}

int oms_bench_exec(struct oms_window *w, struct oms_bench *a)
{
	bool fence = a->flags & OMS_BENCH_FENCE;
	struct oms_order order = {};
	u64 span = a->span, pos = 0, done = 0, next_check;
	u64 t0, t1;
	cycles_t c0, c1;
	int ret;

	if (a->offset >= w->len)
		return -ERANGE;
	if (!span)
		span = rounddown(min_t(u64, OMS_BENCH_DEFAULT_SPAN,
				       w->len - a->offset), a->msg_size);
	if (span < a->msg_size)
		return -ERANGE;
	ret = oms_range_check(w, a->offset, span);
	if (ret)
		return ret;

	next_check = OMS_BENCH_CHECK_EVERY;
	t0 = ktime_get_ns();
	c0 = get_cycles();
	while (done < a->total_bytes) {
		oms_bench_msg(w->base + a->offset + pos, a->offset + pos,
			      a->msg_size, a->width);
		if (fence)
			oms_wc_drain(&order);
		done += a->msg_size;
		pos += a->msg_size;
		if (pos == span)
			pos = 0;
		if (done >= next_check && done < a->total_bytes) {
			next_check += OMS_BENCH_CHECK_EVERY;
			if (READ_ONCE(w->gone))
				return -ENODEV;
			if (signal_pending(current))
				break;	/* report what ran: bytes < total_bytes */
			cond_resched();
		}
	}
	if (!fence)
		oms_wc_drain(&order);
	c1 = get_cycles();
	t1 = ktime_get_ns();

	a->bytes = done;
	a->ns = t1 - t0;
	a->cycles = c1 - c0;
#ifdef CONFIG_X86
	a->tsc_khz = tsc_khz;
#else
	a->tsc_khz = 0;
#endif
	a->fences = oms_order_fences(&order);
	a->span = span;
	return 0;
}
