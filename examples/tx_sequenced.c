// SPDX-License-Identifier: MIT
/*
 * tx_sequenced: MMIO transmit without a fence per message.  A sequenced
 * queue writes each message into a write-combining window as 64-byte
 * chunks that carry (thread, sequence number); the chunks may reach the
 * device in any order, and the device's reorder buffer puts the messages
 * back in program order.  Here the window is process memory and the
 * device is liboms's emulated NIC, fed through a path model that reorders
 * chunks; with oms.ko loaded, oms_tx_window_kmod() gives a BAR instead.
 *
 *   cc tx_sequenced.c $(pkg-config --cflags --libs liboms) -o tx && ./tx
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <oms_tx.h>

#define NMSG	1000

static unsigned delivered, in_order = 1;

/* The NIC calls this for each whole message, in the order it releases. */
static void deliver(void *arg, unsigned thread, const void *msg, size_t len)
{
	unsigned n;

	(void)arg, (void)thread, (void)len;
	memcpy(&n, msg, sizeof(n));
	in_order &= n == delivered++;
}

/*
 * Publish what the queue wrote (one store fence), let the device take it
 * through the reordering path, and give the room back: the ring is a
 * credit loop between the queue and the device.
 */
static int hand_over(struct oms_tx_queue *q, struct oms_tx_nic *nic,
		     uint64_t *drained, const struct oms_tx_fabric *path)
{
	int64_t pub = oms_tx_flush(q);

	if (pub < 0)
		return (int)pub;
	if (oms_tx_nic_drain(nic, 0, oms_tx_ring(q), oms_tx_ring_chunks(q),
			     *drained, (uint64_t)pub, path) < 0)
		return -EIO;
	*drained = (uint64_t)pub;
	return oms_tx_credit(q, *drained);
}

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: tx_sequenced\n%d messages through a sequenced "
		"queue into a write-combining window,\ntheir chunks reordered "
		"on the way, put back in order by the device.\n", NMSG);
	return rc;
}

int main(int argc, char **argv)
{
	struct oms_tx_queue_attr qa = { .cls = OMS_TX_SEQUENCED, .thread = 0 };
	struct oms_tx_nic_attr na = { .format = OMS_TX_FMT_SEQ, .nthreads = 1,
				      .deliver = deliver };
	struct oms_tx_fabric path = { .seed = 42, .reorder = 8 };
	struct oms_tx_window *win;
	struct oms_tx_queue *q;
	struct oms_tx_nic *nic;
	uint64_t drained = 0;
	unsigned char msg[64];
	int err;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return usage(stdout, 0);
	if (argc > 1) {
		fprintf(stderr, "tx_sequenced: no arguments, '%s' given\n",
			argv[1]);
		return usage(stderr, 2);
	}

	err = oms_tx_window_mem(1 << 20, &win);
	if (!err)
		err = oms_tx_queue_create(win, &qa, &q);
	if (!err)
		err = oms_tx_nic_create(&na, &nic);
	if (err) {
		fprintf(stderr, "tx_sequenced: set-up: %s\n", strerror(-err));
		return 1;
	}
	for (unsigned i = 0; i < NMSG && !err; i++) {
		memset(msg, (int)i, sizeof(msg));
		memcpy(msg, &i, sizeof(i));	/* the message's number */
		/* no room: the device has not taken enough yet */
		while ((err = oms_tx_send(q, msg, sizeof(msg))) == -EAGAIN &&
		       !(err = hand_over(q, nic, &drained, &path)))
			;
	}
	if (!err)
		err = hand_over(q, nic, &drained, &path);
	printf("%u of %u messages delivered, %s, with no fence between them\n",
	       delivered, NMSG, in_order ? "in program order" : "OUT OF ORDER");
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	oms_tx_window_close(win);
	return !err && delivered == NMSG && in_order ? 0 : 1;
}
