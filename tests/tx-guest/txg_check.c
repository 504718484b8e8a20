// SPDX-License-Identifier: MIT
/*
 * txg_check.c - the host side of the guest transmit test: after the guest
 * powered off, read the file that backed its ivshmem BAR with the emulated
 * NIC of liboms (oms_tx_window_file + oms_tx_nic_drain), restore order with
 * the reorder buffer, and check that every message of every stream of
 * txg_stream.h came out whole, once, with the right bytes and, for the
 * sequenced and strong classes, in program order.  The chunks reach the
 * NIC through liboms's model of the CPU-to-device path, in program order
 * and with seeded reordering.
 *
 * Then the same checks run on damaged private copies of the file, and must
 * find the damage: a flipped payload bit with and without the payload
 * check, a replayed chunk, two strong messages swapped, an empty BAR.
 * Swapping two sequenced chunks is not damage: the ROB must undo it.
 * Prints TAP.
 *
 * usage: txg_check BACKING_FILE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "txg_stream.h"

#define REORDER		16u
#define NSEEDS		4u
#define BATCH		64u	/* seq: chunks drained from one thread at a time */

static int n, failed;
static unsigned want_path = TXG_PATH_MAPPED;
static const char *path_name = "mapped";

static void report(int ok, const char *what)
{
	printf("%sok %d - host, %s: %s\n", ok ? "" : "not ", ++n, path_name,
	       what);
	if (!ok)
		failed++;
}

/* What one stream delivered. */
struct tally {
	uint32_t n;		/* messages expected */
	uint32_t good, damaged, dup, out_of_order;
	int64_t last;		/* index of the previous delivery */
	uint8_t *seen;
	char first_bad[96];
};

struct run {
	struct tally t[TXG_NSTREAMS];
	struct oms_tx_nic_stats nic;	/* summed over the NICs used */
};

/* Deliveries of one NIC: thread (seq) or stream (plain) @i is stream
 * @first + i of txg_specs. */
struct sink {
	struct run *r;
	unsigned first;
};

static uint64_t end_pos[TXG_NSTREAMS];
static uint64_t *msg_pos[TXG_NSTREAMS];	/* ring position of each message */
static uint32_t counts[TXG_NSTREAMS];

static void note_bad(struct tally *t, const char *fmt, int64_t id, size_t len)
{
	if (!t->first_bad[0])
		snprintf(t->first_bad, sizeof(t->first_bad), fmt, (long long)id,
			 len);
}

static void on_msg(void *arg, unsigned thread, const void *msg, size_t len)
{
	static uint8_t want[OMS_TX_MAX_MSG];
	struct sink *k = arg;
	unsigned s = k->first + thread;
	struct tally *t = &k->r->t[s];
	int64_t id = txg_tag(s, msg, len);

	if (id < 0)		/* short messages carry no tag: the next one */
		id = t->last + 1;
	if (id >= t->n || len != txg_len(s, (uint32_t)id)) {
		t->damaged++;
		note_bad(t, "delivery taken for message %lld: %zu bytes, wrong length", id, len);
		return;
	}
	txg_fill(s, (uint32_t)id, want, len);
	if (memcmp(want, msg, len)) {
		t->damaged++;
		note_bad(t, "message %lld (%zu bytes): content differs", id, len);
	} else if (t->seen[id]) {
		t->dup++;
		note_bad(t, "message %lld (%zu bytes) delivered twice", id, len);
	} else {
		t->seen[id] = 1;
		t->good++;
		if (id != t->last + 1) {
			t->out_of_order++;
			note_bad(t, "message %lld (%zu bytes) out of order", id, len);
		}
	}
	t->last = id;
}

static void run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	for (unsigned s = 0; s < TXG_NSTREAMS; s++) {
		r->t[s].n = counts[s];
		r->t[s].last = -1;
		r->t[s].seen = calloc(counts[s] ? counts[s] : 1, 1);
		if (!r->t[s].seen)
			abort();
	}
}

static void run_fini(struct run *r)
{
	for (unsigned s = 0; s < TXG_NSTREAMS; s++)
		free(r->t[s].seen);
}

static void add_stats(struct run *r, const struct oms_tx_nic *nic)
{
	struct oms_tx_nic_stats st;

	oms_tx_nic_stats(nic, &st);
	r->nic.chunks += st.chunks;
	r->nic.corrupted += st.corrupted;
	r->nic.duplicate += st.duplicate;
	r->nic.stale += st.stale;
	r->nic.out_of_window += st.out_of_window;
	r->nic.malformed += st.malformed;
	r->nic.msgs += st.msgs;
}

static uint64_t nic_drops(const struct run *r)
{
	return r->nic.corrupted + r->nic.duplicate + r->nic.stale +
	       r->nic.out_of_window + r->nic.malformed;
}

/*
 * Both sequenced streams through one NIC (thread ids 0 and 1), drained
 * BATCH chunks of one thread, then of the other, each batch through the
 * path model with @reorder and @seed.
 */
static int drain_seq(const uint8_t *bar, uint32_t reorder, uint64_t seed,
		     struct run *r)
{
	struct sink k = { r, 0 };
	struct oms_tx_nic_attr na = { .format = OMS_TX_FMT_SEQ, .nthreads = 2,
				      .deliver = on_msg, .arg = &k };
	struct oms_tx_fabric fab = { .seed = seed, .reorder = reorder };
	struct oms_tx_nic *nic;
	uint64_t top = end_pos[0] > end_pos[1] ? end_pos[0] : end_pos[1];
	int err = oms_tx_nic_create(&na, &nic);

	if (err)
		return err;
	for (uint64_t from = 0; from < top; from += BATCH) {
		for (unsigned s = 0; s < 2; s++) {
			uint64_t to = from + BATCH < end_pos[s] ? from + BATCH :
								  end_pos[s];

			if (from >= to)
				continue;
			fab.seed = seed + from * 2 + s;
			if (oms_tx_nic_drain(nic, 0, bar + txg_specs[s].offset,
					     txg_specs[s].length / OMS_TX_CHUNK,
					     from, to, &fab) < 0)
				err = -EINVAL;
		}
	}
	add_stats(r, nic);
	oms_tx_nic_destroy(nic);
	return err;
}

/* One plain stream through its own NIC, in one pass of the path model. */
static int drain_plain(const uint8_t *bar, unsigned s, uint32_t reorder,
		       uint64_t seed, struct run *r)
{
	struct sink k = { r, s };
	struct oms_tx_nic_attr na = {
		.format = OMS_TX_FMT_PLAIN, .nthreads = 1,
		.slot_chunks = (uint32_t)txg_advance(s, 1),
		.region_len = txg_specs[s].length,
		.deliver = on_msg, .arg = &k,
	};
	struct oms_tx_fabric fab = { .seed = seed, .reorder = reorder };
	struct oms_tx_nic *nic;
	int err = oms_tx_nic_create(&na, &nic);
	int64_t got;

	if (err)
		return err;
	got = oms_tx_nic_drain(nic, 0, bar + txg_specs[s].offset,
			       txg_specs[s].length / OMS_TX_CHUNK, 0, end_pos[s],
			       &fab);
	add_stats(r, nic);
	oms_tx_nic_destroy(nic);
	return got < 0 ? (int)got : 0;
}

/* Every message once, whole, right; in program order if @ordered. */
static int stream_ok(const struct tally *t, int ordered)
{
	return t->good == t->n && !t->damaged && !t->dup &&
	       (!ordered || !t->out_of_order);
}

static void show(const struct run *r, unsigned s)
{
	const struct tally *t = &r->t[s];

	printf("#   %-6s %u/%u whole and right, %u damaged, %u twice, %u out of order%s%s\n",
	       txg_specs[s].name, t->good, t->n, t->damaged, t->dup,
	       t->out_of_order, t->first_bad[0] ? "; first: " : "",
	       t->first_bad);
}

static void show_nic(const struct run *r)
{
	printf("#   NIC: %llu chunks, %llu messages; dropped: %llu corrupted, %llu duplicate, %llu stale, %llu out of window, %llu malformed\n",
	       (unsigned long long)r->nic.chunks, (unsigned long long)r->nic.msgs,
	       (unsigned long long)r->nic.corrupted,
	       (unsigned long long)r->nic.duplicate,
	       (unsigned long long)r->nic.stale,
	       (unsigned long long)r->nic.out_of_window,
	       (unsigned long long)r->nic.malformed);
}

/* The sequenced streams, every message in order, nothing dropped. */
static int seq_ok(const uint8_t *bar, uint32_t reorder, uint64_t seed,
		  int verbose)
{
	struct run r;
	int ok;

	run_init(&r);
	ok = !drain_seq(bar, reorder, seed, &r) && stream_ok(&r.t[0], 1) &&
	     stream_ok(&r.t[1], 1) && !nic_drops(&r) &&
	     r.nic.msgs == counts[0] + counts[1];
	if (verbose || !ok) {
		show(&r, 0);
		show(&r, 1);
		show_nic(&r);
	}
	run_fini(&r);
	return ok;
}

static int report_ok(const uint8_t *bar)
{
	struct txg_report rep;
	int ok;

	memcpy(&rep, bar + TXG_REPORT, sizeof(rep));
	ok = rep.magic == TXG_REPORT_MAGIC && rep.nstreams == TXG_NSTREAMS;
	if (!ok) {
		printf("#   no guest report at 0x%x\n", TXG_REPORT);
		return 0;
	}
	if (rep.path != want_path) {
		printf("#   the guest wrote through path %u, not %u\n", rep.path,
		       want_path);
		return 0;
	}
	for (unsigned s = 0; s < TXG_NSTREAMS; s++) {
		const struct txg_report_q *q = &rep.q[s];
		uint64_t chunks = 0;

		for (uint32_t i = 0; i < counts[s]; i++)
			chunks += oms_tx_msg_chunks(txg_specs[s].cls,
						    txg_len(s, i));
		printf("#   %-6s guest: %llu messages, %llu chunks, position %llu, %llu fences, %llu system calls, next send %lld\n",
		       txg_specs[s].name, (unsigned long long)q->msgs,
		       (unsigned long long)q->chunks, (unsigned long long)q->pos,
		       (unsigned long long)q->fences,
		       (unsigned long long)q->syscalls, (long long)q->last_send);
		ok &= q->msgs == counts[s] && q->chunks == chunks &&
		      q->pos == end_pos[s] &&
		      txg_fences_ok(s, q, counts[s],
				    want_path == TXG_PATH_IOCTL) &&
		      q->eagain == 1 && q->last_send == -EAGAIN;
	}
	printf("#   guest CPU %s AVX2 (the sequenced stream without payload check took the %s path)\n",
	       rep.avx2 ? "had" : "lacked", rep.avx2 ? "AVX2" : "portable");
	return ok;
}

/* Nothing written outside the streams and the report. */
static int zero_outside(const uint8_t *bar)
{
	struct { uint64_t from, to; } gap[TXG_NSTREAMS + 2];
	unsigned g = 0;
	int ok = 1;

	for (unsigned s = 0; s < TXG_NSTREAMS; s++) {
		gap[g].from = txg_specs[s].offset + end_pos[s] * OMS_TX_CHUNK;
		gap[g++].to = txg_specs[s].offset + txg_specs[s].length;
	}
	gap[g].from = TXG_UNTOUCHED;
	gap[g++].to = TXG_REPORT;
	gap[g].from = TXG_REPORT + sizeof(struct txg_report);
	gap[g++].to = TXG_BAR_LEN;
	for (unsigned i = 0; i < g; i++)
		for (uint64_t o = gap[i].from; o < gap[i].to; o++)
			if (bar[o]) {
				printf("#   byte 0x%llx is 0x%02x, want 0\n",
				       (unsigned long long)o, bar[o]);
				ok = 0;
				break;
			}
	return ok;
}

/* First message of stream @s at or after @from that takes 2+ chunks. */
static uint32_t multi_chunk_msg(unsigned s, uint32_t from)
{
	uint32_t i = from;

	while (i + 1 < counts[s] && msg_pos[s][i + 1] - msg_pos[s][i] < 2)
		i++;
	return i;
}

static uint8_t *chunk_at(uint8_t *bar, unsigned s, uint64_t pos)
{
	return bar + txg_specs[s].offset + pos * OMS_TX_CHUNK;
}

static void swap_bytes(uint8_t *a, uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/*
 * A copy of @bar with one payload bit flipped in the second chunk of a
 * message of sequenced stream @s, drained into @r (run_fini is the
 * caller's).  Returns the damaged message's index.
 */
static uint32_t flip_payload_bit(uint8_t *copy, const uint8_t *bar,
				 unsigned s, struct run *r)
{
	uint32_t k = multi_chunk_msg(s, 100);

	memcpy(copy, bar, TXG_BAR_LEN);
	chunk_at(copy, s, msg_pos[s][k] + 1)[OMS_TX_HDR + 20] ^= 0x08;
	printf("# control: one payload bit of %s message %u (chunk %llu) flipped\n",
	       txg_specs[s].name, k, (unsigned long long)msg_pos[s][k] + 1);
	run_init(r);
	drain_seq(copy, REORDER, 1, r);
	show(r, 0);
	show(r, 1);
	show_nic(r);
	return k;
}

int main(int argc, char **argv)
{
	static uint8_t copy[TXG_BAR_LEN];
	struct oms_tx_window *w;
	const uint8_t *bar;
	struct run r;
	uint64_t ooo;
	uint32_t k;
	int err, ok;
	char what[256];

	if (argc != 2 && !(argc == 3 && (!strcmp(argv[2], "mapped") ||
					 !strcmp(argv[2], "ioctl")))) {
		fprintf(stderr, "usage: %s BACKING_FILE [mapped|ioctl]\n",
			argv[0]);
		return 2;
	}
	if (argc == 3 && !strcmp(argv[2], "ioctl")) {
		want_path = TXG_PATH_IOCTL;
		path_name = "ioctl";
	}
	printf("TAP version 13\n1..13\n");
	for (unsigned s = 0; s < TXG_NSTREAMS; s++) {
		msg_pos[s] = malloc(txg_specs[s].length / OMS_TX_CHUNK *
				    sizeof(uint64_t));
		if (!msg_pos[s])
			return 1;
		counts[s] = txg_count(s, &end_pos[s], msg_pos[s]);
	}

	err = oms_tx_window_file(argv[1], 0, OMS_TX_FILE_RDONLY, &w);
	if (err)
		printf("# oms_tx_window_file(%s): %d\n", argv[1], err);
	report(!err && oms_tx_window_len(w) == TXG_BAR_LEN,
	       "backing file mapped read-only, 4 MiB");
	if (err)
		return 1;
	bar = oms_tx_window_base(w);

	report(report_ok(bar), "the guest's report matches the streams (messages, chunks, positions, fences, -EAGAIN)");

	printf("# sequenced, chunks in program order, threads interleaved every %u chunks\n",
	       BATCH);
	snprintf(what, sizeof(what),
		 "sequenced, arrival in program order: seq0 %u and seq1 %u messages whole, right, in order, nothing dropped",
		 counts[0], counts[1]);
	report(seq_ok(bar, 0, 1, 1), what);

	ok = 1;
	for (uint64_t seed = 1; seed <= NSEEDS; seed++)
		ok &= seq_ok(bar, REORDER, seed, seed == 1);
	snprintf(what, sizeof(what),
		 "sequenced, reordered by up to %u chunks (%u seeds): the ROB restores program order, nothing dropped",
		 2 * REORDER, NSEEDS);
	report(ok, what);

	ok = 1;
	for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
		run_init(&r);
		ok &= !drain_plain(bar, 2, REORDER, seed, &r) &&
		      stream_ok(&r.t[2], 1) && !nic_drops(&r);
		if (seed == 1 || !ok) {
			show(&r, 2);
			show_nic(&r);
		}
		run_fini(&r);
	}
	snprintf(what, sizeof(what),
		 "strong, chunks reordered but never across a fence (%u seeds): %u messages whole, right, in order",
		 NSEEDS, counts[2]);
	report(ok, what);

	ok = 1;
	ooo = 0;
	for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
		run_init(&r);
		ok &= !drain_plain(bar, 3, REORDER, seed, &r) &&
		      stream_ok(&r.t[3], 0) && !nic_drops(&r);
		ooo += r.t[3].out_of_order;
		if (seed == 1 || !ok) {
			show(&r, 3);
			show_nic(&r);
		}
		run_fini(&r);
	}
	printf("#   weak: %llu deliveries out of order over %u seeds\n",
	       (unsigned long long)ooo, NSEEDS);
	snprintf(what, sizeof(what),
		 "weak, same path: %u messages whole and right, each once, and without a fence they came out of order (the order check can fail)",
		 counts[3]);
	report(ok && ooo > 0, what);

	report(zero_outside(bar), "nothing written past the streams, in the unused 508 KiB or after the report");

	/*
	 * Controls on private copies.  Each must be caught by the check
	 * that it targets, and only that one.
	 */
	k = flip_payload_bit(copy, bar, 0, &r);
	report(r.nic.corrupted == 1 && r.t[0].good == k && !r.t[0].damaged &&
	       stream_ok(&r.t[1], 1),
	       "control, payload bit flipped with the payload check: the NIC drops the chunk, seq0 stops before that message, seq1 is unaffected");
	run_fini(&r);

	k = flip_payload_bit(copy, bar, 1, &r);
	report(!nic_drops(&r) && r.t[1].damaged == 1 &&
	       r.t[1].good == counts[1] - 1 && !r.t[1].out_of_order &&
	       stream_ok(&r.t[0], 1),
	       "control, payload bit flipped without the payload check: the NIC passes it, the content check finds exactly that message");
	run_fini(&r);

	memcpy(copy, bar, TXG_BAR_LEN);
	k = multi_chunk_msg(0, 200);
	swap_bytes(chunk_at(copy, 0, msg_pos[0][k]),
		   chunk_at(copy, 0, msg_pos[0][k] + 7), OMS_TX_CHUNK);
	printf("# control: seq0 chunks %llu and %llu swapped in the copy\n",
	       (unsigned long long)msg_pos[0][k],
	       (unsigned long long)msg_pos[0][k] + 7);
	report(seq_ok(copy, 0, 1, 0) && seq_ok(copy, REORDER, 1, 0),
	       "control, two sequenced chunks swapped: not damage, the ROB puts them back");

	memcpy(copy, bar, TXG_BAR_LEN);
	k = multi_chunk_msg(0, 300);
	memcpy(chunk_at(copy, 0, msg_pos[0][k] + 1),
	       chunk_at(copy, 0, msg_pos[0][k]), OMS_TX_CHUNK);
	printf("# control: seq0 chunk %llu replayed over chunk %llu\n",
	       (unsigned long long)msg_pos[0][k],
	       (unsigned long long)msg_pos[0][k] + 1);
	run_init(&r);
	drain_seq(copy, 0, 1, &r);
	show(&r, 0);
	show_nic(&r);
	report(r.nic.stale + r.nic.duplicate == 1 && r.t[0].good == k &&
	       stream_ok(&r.t[1], 1),
	       "control, a chunk replayed over the next: the ROB refuses the old sequence number, seq0 stops at the lost chunk");
	run_fini(&r);

	memcpy(copy, bar, TXG_BAR_LEN);
	for (k = 300; txg_len(2, k) < 8 || txg_len(2, k + 1) < 8; k++)
		;			/* both tagged, so both identified */
	swap_bytes(chunk_at(copy, 2, msg_pos[2][k]),
		   chunk_at(copy, 2, msg_pos[2][k + 1]),
		   txg_advance(2, 1) * OMS_TX_CHUNK);
	printf("# control: strong messages %u and %u swapped in the copy\n", k,
	       k + 1);
	run_init(&r);
	drain_plain(copy, 2, REORDER, 1, &r);
	show(&r, 2);
	report(r.t[2].good == counts[2] && r.t[2].out_of_order > 0 &&
	       !r.t[2].damaged && !stream_ok(&r.t[2], 1),
	       "control, two strong messages swapped: each is whole and right, the order check fails");
	run_fini(&r);

	memset(copy, 0, TXG_BAR_LEN);
	run_init(&r);
	drain_seq(copy, REORDER, 1, &r);
	drain_plain(copy, 2, REORDER, 1, &r);
	drain_plain(copy, 3, REORDER, 1, &r);
	ok = !report_ok(copy) && r.nic.msgs == 0;
	for (unsigned s = 0; s < TXG_NSTREAMS; s++)
		ok &= r.t[s].good == 0 && !stream_ok(&r.t[s], 0);
	report(ok, "control, a BAR the guest never wrote: no report, no message, every stream fails");
	run_fini(&r);

	oms_tx_window_close(w);
	for (unsigned s = 0; s < TXG_NSTREAMS; s++)
		free(msg_pos[s]);
	return failed ? 1 : 0;
}
