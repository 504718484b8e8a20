// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for whole programs: the store orderer on the model
 * device of tests/helpers.h (t_mx_*), checked with the reference model of
 * tests/ordering_model.h - beyond the mixed explorer's bound: up to 16
 * ops, 2 or 3 destinations, any number of injected failures, random
 * schedules, stale and duplicate acks mixed in.
 *
 * Input: byte 0 = layout (bits 0-1, 2-3, 4-5: kind of channel 0, 1, 2 as
 * ACKED, POSTED, SEQ, ACKED; bit 6: a third channel); then one byte per
 * program op until a 0xff separator: bits 0-3 = shape (0 U, 1 W, 2 S,
 * 3 REL, 4 G, 5 ACQ, 6 FAA, 7 CAS, 8-11 fence(dest), 12-15 fence_global),
 * bits 4-5 = destination (mod the channels), bit 6 = address 0 or 1,
 * bit 7 = injected failure; then one byte per scheduling step: it picks
 * an enabled event (mod their number); 0xf0..0xfe instead replay a stale
 * ack (must change nothing but the stale count).  After the input the run
 * is finished taking the first enabled event.
 *
 * Invariants (abort on violation): no engine call fails; the run ends
 * (nothing left to happen within a bound); the terminal trace satisfies
 * the reference model (with the precision check); the orderer drained
 * with balanced counters and the first error is the injected failure's
 * (t_mx_finish()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_model.h"

/* Abort, saying which invariant broke. */
#define check(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "mixed_order: line %d: %s\n", __LINE__, \
			#cond); \
		abort(); \
	} \
} while (0)

/* A stale ack (at or below what is known) changes nothing but the count. */
static void stale_ack(struct t_mx *f, uint8_t b)
{
	struct oms_so *so = &f->so;
	uint16_t c = (uint16_t)(b % f->nch);
	struct oms_so_chan before = so->chan[c];
	struct oms_so_counters ctr = so->ctr;
	uint64_t count = before.completed ? before.completed - (b >> 4) %
			 (before.completed + 1) : 0;

	if (!count && !before.completed)
		count = 0;
	check(oms_so_ack(so, c, count, (b & 8) ? -EIO : 0) == 0);
	check(so->ctr.stale_acks == ctr.stale_acks + 1);
	ctr.stale_acks++;
	check(!memcmp(&ctr, &so->ctr, sizeof(ctr)));
	check(!memcmp(&before, &so->chan[c], sizeof(before)));
}

static const uint8_t kinds[4] = {
	OMS_CHAN_ACKED, OMS_CHAN_POSTED, OMS_CHAN_SEQ, OMS_CHAN_ACKED,
};

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static const uint8_t shape_kind[8] = {
		OM_PUT, OM_PUT, OM_PUT, OM_PUT, OM_GET, OM_GET, OM_FAA, OM_CAS,
	};
	struct t_mx f;
	struct om_prog p;
	struct om_result r;
	struct t_event ev[96];
	char why[200], prog[200];
	uint8_t k[T_MX_CH];
	uint32_t nch, steps = 0, m;
	size_t i = 1;

	if (n < 2)
		return 0;
	nch = (d[0] >> 6) & 1 ? 3 : 2;
	for (uint32_t c = 0; c < nch; c++)
		k[c] = kinds[(d[0] >> (2 * c)) & 3];
	check(!t_mx_init(&f, nch, k, T_MX_MUT_NONE));
	memset(&p, 0, sizeof(p));
	for (; i < n && d[i] != 0xff && p.n < 16; i++) {
		struct om_op *o = &p.op[p.n++];
		uint8_t b = d[i], s = b & 15;

		o->dest = (uint8_t)(((b >> 4) & 3) % nch);
		if (s >= 12) {
			o->kind = OM_FENCE_ALL;
			o->dest = 0;
		} else if (s >= 8) {
			o->kind = OM_FENCE;
		} else {
			o->kind = shape_kind[s];
			o->cls = s < 4 ? s : OM_W;
			o->acquire = s == 5;
			o->addr = (b >> 6) & 1;
			o->fail = b >> 7;
		}
	}
	if (!p.n) {
		t_mx_fini(&f);
		return 0;
	}
	t_mx_set_prog(&f, &p);
	for (i++; i < n; i++) {
		if (d[i] >= 0xf0 && d[i] != 0xff) {
			stale_ack(&f, d[i]);
			continue;
		}
		m = t_mx_events(&f, ev, 96);
		if (!m)
			break;
		t_mx_step(&f, &ev[d[i] % m]);
		if (f.err)
			fprintf(stderr, "mixed_order: %s\n", f.why);
		check(!f.err);
	}
	while ((m = t_mx_events(&f, ev, 96)) && steps++ < 10000)
		t_mx_step(&f, &ev[0]);
	if (f.err)
		fprintf(stderr, "mixed_order: %s\n", f.why);
	check(!f.err && !m);
	if (om_check(&f.prog, &f.tr, OM_CHECK_PRECISION, &r, why,
		     sizeof(why))) {
		om_format(&f.prog, prog, sizeof(prog));
		fprintf(stderr, "mixed_order: %s: %s (%s)\n", prog, why,
			om_verdict_name(r.verdict));
		abort();
	}
	if (t_mx_finish(&f)) {
		om_format(&f.prog, prog, sizeof(prog));
		fprintf(stderr, "mixed_order: %s: %s\n", prog, f.why);
		abort();
	}
	t_mx_fini(&f);
	return 0;
}
