// SPDX-License-Identifier: MIT
/*
 * txg_guest.c - runs in the QEMU guest after oms.ko was loaded on BAR 2 of
 * the ivshmem device (tests/vm/run-tx-guest.sh).  Opens the oms.ko window
 * with liboms, checks with OMS_IOC_INFO that it is that PCI BAR, and sends
 * the streams of txg_stream.h through oms_tx queues: the two sequenced
 * ones from two threads at once, strong and weak from the main thread.
 * Each stream fills its region; one more send must be refused (-EAGAIN).
 * Last, it leaves a report at TXG_REPORT.  Prints TAP; the host checks
 * the bytes (txg_check.c).
 *
 * With --ioctl the same streams go through the module's ioctls instead of
 * the mapping (oms_tx_window_kmod_ioctl): the library hands oms.ko one
 * OMS_IOC_ORDERED_STORE vector per batch and the module stores and fences.
 * The host checks the bytes the same way; the guest checks that the
 * module issued the fences the class needs and that sends were batched.
 *
 * usage: txg_guest [--ioctl] [DEVICE]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "oms_uapi.h"
#include "txg_stream.h"

static int n, failed;
static const char *path_name = "mapped";

static void report(int ok, const char *fmt, const char *name)
{
	printf("%sok %d - %s: ", ok ? "" : "not ", ++n, path_name);
	printf(fmt, name);
	printf("\n");
	if (!ok)
		failed++;
}

struct sender {
	unsigned s;
	struct oms_tx_queue *q;
	uint8_t buf[OMS_TX_MAX_MSG];
	int err;		/* first failed send, 0 if none */
	uint32_t sent;
	struct txg_report_q r;
};

/* Send the whole stream, then one more message that must not fit. */
static void *send_stream(void *arg)
{
	struct sender *sd = arg;
	uint64_t pos;
	uint32_t cnt = txg_count(sd->s, &pos, NULL), i;
	struct oms_tx_stats st;
	size_t len;

	for (i = 0; i < cnt; i++) {
		len = txg_len(sd->s, i);
		txg_fill(sd->s, i, sd->buf, len);
		sd->err = oms_tx_send(sd->q, sd->buf, len);
		if (sd->err)
			break;
		sd->sent++;
	}
	len = txg_len(sd->s, cnt);
	txg_fill(sd->s, cnt, sd->buf, len);
	sd->r.last_send = oms_tx_send(sd->q, sd->buf, len);
	sd->r.pos = (uint64_t)oms_tx_flush(sd->q);
	oms_tx_stats(sd->q, &st);
	sd->r.msgs = st.msgs;
	sd->r.chunks = st.chunks;
	sd->r.fences = st.fences;
	sd->r.eagain = st.eagain;
	sd->r.syscalls = st.syscalls;
	return NULL;
}

static int check_info(const char *dev)
{
	struct oms_info info;
	int fd = open(dev, O_RDWR);
	int ok;

	if (fd < 0)
		return 0;
	memset(&info, 0, sizeof(info));
	ok = !ioctl(fd, OMS_IOC_INFO, &info);
	close(fd);
	printf("# INFO: kind %u flags 0x%x length %llu bar %u at %04x:%02x:%02x.%x\n",
	       info.kind, info.flags, (unsigned long long)info.length, info.bar,
	       info.domain, info.bus, info.slot, info.func);
	return ok && info.kind == OMS_WINDOW_PCI && info.bar == 2 &&
	       (info.flags & OMS_INFO_WC) && info.length == TXG_BAR_LEN;
}

/* The report, through the path under test. */
static int leave_report(struct oms_tx_window *w, const struct txg_report *rep,
			const char *dev, int ioctl_path)
{
	struct oms_store_op op = {
		.offset = TXG_REPORT, .length = (sizeof(*rep) + 7) & ~7u,
		.cls = OMS_STORE_WEAK, .buf = (uint64_t)(uintptr_t)rep,
	};
	struct oms_ordered_store a = {
		.flags = OMS_STORE_F_FLUSH, .count = 1,
		.ops = (uint64_t)(uintptr_t)&op,
	};
	int fd, r;

	if (!ioctl_path) {
		memcpy((uint8_t *)oms_tx_window_base(w) + TXG_REPORT, rep,
		       sizeof(*rep));
		return 0;
	}
	fd = open(dev, O_RDWR);
	if (fd < 0)
		return -errno;
	r = ioctl(fd, OMS_IOC_ORDERED_STORE, &a) ? -errno : 0;
	close(fd);
	return r;
}

int main(int argc, char **argv)
{
	int ioctl_path = argc > 1 && !strcmp(argv[1], "--ioctl");
	const char *dev = argc > 1 + ioctl_path ? argv[1 + ioctl_path] :
						  "/dev/" OMS_DEVICE_NAME;
	int want_kind = ioctl_path ? OMS_TX_WIN_KMOD_IOCTL : OMS_TX_WIN_KMOD;
	static struct sender sd[TXG_NSTREAMS];
	struct txg_report rep;
	struct oms_tx_window *w;
	pthread_t th[2];
	unsigned s;
	int err, ok;

	if (ioctl_path)
		path_name = "ioctl";
	printf("TAP version 13\n1..%u\n", 3 + TXG_NSTREAMS);
	err = ioctl_path ? oms_tx_window_kmod_ioctl(dev, &w) :
			   oms_tx_window_kmod(dev, &w);
	ok = !err && oms_tx_window_kind(w) == want_kind &&
	     oms_tx_window_len(w) == TXG_BAR_LEN;
	if (err)
		printf("# open %s: %d\n", dev, err);
	report(ok, "%s: a 4 MiB oms.ko window, of the kind asked for", dev);
	if (!ok)
		return 1;
	report(check_info(dev), "%s: the window is BAR 2 of a PCI device, write-combining", dev);

	for (s = 0; s < TXG_NSTREAMS; s++) {
		const struct txg_spec *sp = &txg_specs[s];
		struct oms_tx_queue_attr qa = {
			.cls = sp->cls, .thread = sp->thread, .flags = sp->flags,
			.max_msg = sp->max_msg, .offset = sp->offset,
			.length = sp->length,
		};

		sd[s].s = s;
		err = oms_tx_queue_create(w, &qa, &sd[s].q);
		if (err) {
			printf("# %s: oms_tx_queue_create: %d\n", sp->name, err);
			report(0, "%s: queue created", sp->name);
			return 1;
		}
	}
	/* The two sequenced streams at the same time, on both vCPUs. */
	for (s = 0; s < 2; s++)
		if (pthread_create(&th[s], NULL, send_stream, &sd[s]))
			return 1;
	send_stream(&sd[2]);
	send_stream(&sd[3]);
	for (s = 0; s < 2; s++)
		pthread_join(th[s], NULL);

	for (s = 0; s < TXG_NSTREAMS; s++) {
		const struct txg_spec *sp = &txg_specs[s];
		struct sender *d = &sd[s];
		uint64_t pos;
		uint32_t cnt = txg_count(s, &pos, NULL);

		printf("# %s: %u messages, %llu chunks, position %llu, %llu fences, %llu system calls, next send %lld\n",
		       sp->name, d->sent, (unsigned long long)d->r.chunks,
		       (unsigned long long)d->r.pos, (unsigned long long)d->r.fences,
		       (unsigned long long)d->r.syscalls, (long long)d->r.last_send);
		if (d->err)
			printf("# %s: send %u failed: %d\n", sp->name, d->sent, d->err);
		report(!d->err && d->sent == cnt && d->r.msgs == cnt &&
		       d->r.pos == pos && txg_fences_ok(s, &d->r, cnt, ioctl_path) &&
		       d->r.last_send == -EAGAIN && d->r.eagain == 1,
		       "%s: every message sent, fences (and calls) as the class needs, the one that does not fit refused with -EAGAIN",
		       sp->name);
	}

	/* The report goes last, after every queue's flush. */
	memset(&rep, 0, sizeof(rep));
	rep.magic = TXG_REPORT_MAGIC;
	rep.nstreams = TXG_NSTREAMS;
	rep.path = ioctl_path ? TXG_PATH_IOCTL : TXG_PATH_MAPPED;
#if defined(__x86_64__)
	__builtin_cpu_init();
	rep.avx2 = !!__builtin_cpu_supports("avx2");
#endif
	for (s = 0; s < TXG_NSTREAMS; s++) {
		rep.q[s] = sd[s].r;
		oms_tx_queue_destroy(sd[s].q);
	}
	err = leave_report(w, &rep, dev, ioctl_path);
	oms_tx_window_close(w);
	report(!err, "%s: the report left after every queue's flush", dev);
	printf("# report left at 0x%x (%d); guest CPU %s AVX2\n", TXG_REPORT,
	       err, rep.avx2 ? "has" : "lacks");
	return failed ? 1 : 0;
}
