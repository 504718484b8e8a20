// SPDX-License-Identifier: MIT
/*
 * oms_probe on an oms.ko window (a write-combining mapping of a PCI BAR,
 * or the same window through the module's ordered-store ioctl): what each
 * ordering costs the CPU that writes it: a weak message, a strong one (a
 * store fence before it), a flush, on the mapped path and through the
 * module.  The order the device sees is checked elsewhere: bench/mmio_tx
 * --verify-mib reads the BAR back after each pass, and the emulated
 * transmit NIC proves L27, L28, L40 (tests/litmus_emu_mmio.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oms_tx.h"
#include "probe.h"

#define BATCH	64u	/* messages per timed sample */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Median ns per message of @cls on @w (and of a flush, when @flush). */
static int tx_cost(struct oms_tx_window *w, unsigned cls, int flush,
		   const struct probe_opts *o, struct probe_result *res)
{
	struct oms_tx_queue_attr qa = { .cls = cls,
					.flags = OMS_TX_Q_NO_CREDIT };
	uint64_t *t = calloc(o->cost_rounds, sizeof(*t));
	size_t len = oms_tx_payload_max(cls, OMS_TX_CHUNK);
	uint8_t msg[OMS_TX_CHUNK] = { 1 };
	struct oms_tx_queue *q = NULL;
	unsigned i, k;
	int err = t ? 0 : -ENOMEM;

	if (!err)
		err = oms_tx_queue_create(w, &qa, &q);
	for (i = 0; i < o->cost_rounds && !err; i++) {
		uint64_t t0 = now_ns();

		if (flush) {
			err = oms_tx_send(q, msg, len);
			t0 = now_ns();
			if (!err && oms_tx_flush(q) < 0)
				err = -EIO;
			t[i] = now_ns() - t0;
			continue;
		}
		for (k = 0; k < BATCH && !err; k++)
			err = oms_tx_send(q, msg, len);
		if (!err && oms_tx_flush(q) < 0)
			err = -EIO;
		t[i] = (now_ns() - t0) / BATCH;
	}
	if (!err) {
		res->cost_ns = probe_median(t, o->cost_rounds);
		res->rounds = o->cost_rounds;
		res->measured = 1;
	} else {
		snprintf(res->note, sizeof(res->note), "%s", strerror(-err));
	}
	if (q)
		oms_tx_queue_destroy(q);
	free(t);
	return err;
}

int probe_kmod(const struct probe_opts *o, struct probe_report *rep)
{
	static const char *const path_name[2] = { "mmio", "ioctl" };
	struct oms_tx_window *w[2] = { NULL, NULL };
	struct probe_result *r;
	int err, k;

	err = oms_tx_window_kmod(o->dev, &w[0]);
	if (!err)
		err = oms_tx_window_kmod_ioctl(o->dev, &w[1]);
	r = probe_add(rep, "kmod", "window", "", "OMS_IOC_INFO, mmap",
		      PR_INFO);
	if (err) {
		if (r)
			snprintf(r->note, sizeof(r->note), "%s: %s",
				 o->dev ? o->dev : "/dev/oms",
				 err == -ENOENT ? "no device node (oms.ko "
				 "not loaded)" : err == -ENODEV ?
				 "no window attached" : strerror(-err));
		goto out;
	}
	if (r) {
		snprintf(r->value, sizeof(r->value), "%zu bytes, mapped "
			 "write-combining", oms_tx_window_len(w[0]));
		r->measured = 1;
	}
	r = probe_add(rep, "kmod", "device_order", "L27",
		      "WC stores as the device sees them", PR_INFO);
	if (r)
		snprintf(r->note, sizeof(r->note), "not probed here: "
			 "bench/mmio_tx --verify-mib reads the BAR back; the "
			 "transmit receiver proves L27/L28/L40");
	for (k = 0; k < 2; k++) {
		static const char *const names[2][3] = {
			{ "cost_mmio_weak", "cost_mmio_strong",
			  "cost_mmio_flush" },
			{ "cost_ioctl_weak", "cost_ioctl_strong",
			  "cost_ioctl_flush" },
		};
		static const char *const pats[3] = {
			"64 B weak message (no fence), per message",
			"64 B strong message (store fence before), per message",
			"one message then a WC drain (sfence), the flush",
		};
		int j;

		for (j = 0; j < 3; j++) {
			r = probe_add(rep, "kmod", names[k][j], j == 2 ?
				      "L10" : "L03", pats[j], PR_INFO);
			if (!r)
				break;
			int e = tx_cost(w[k], j == 1 ? OMS_TX_STRONG :
					OMS_TX_WEAK, j == 2, o, r);

			if (e) {
				fprintf(stderr, "%s: kmod %s path: %s\n",
					probe_prog, path_name[k], r->note);
				err = err ? err : e;
			}
		}
	}
	if (w[1])
		oms_tx_window_close(w[1]);
	if (w[0])
		oms_tx_window_close(w[0]);
	return err;
out:
	/* no module or no window: a row that says so, not a failure */
	if (w[0])
		oms_tx_window_close(w[0]);
	return 0;
}
