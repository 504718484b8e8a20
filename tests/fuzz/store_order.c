// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the store orderer: the input is a program and a
 * schedule for the model fabric of tests/helpers.h, with bad calls mixed
 * in.  Invariants (abort on violation): no forbidden ordering is observed;
 * refused calls change nothing; after the input the fabric drains with the
 * orderer quiescent and its counters balanced.
 *
 * Input: byte 0 = channel layout; then one byte per program operation until
 * a 0xff separator (at most 24 operations); then one byte per scheduling
 * step: low bits pick an enabled event, 0xf0..0xfe inject a bad call.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_model.h"

static const struct oms_so_chan_cfg layouts[3][2] = {
	{ { 0, OMS_CHAN_POSTED }, { 1, OMS_CHAN_ACKED } },
	{ { 0, OMS_CHAN_ACKED }, { 0, OMS_CHAN_POSTED } },
	{ { 0, OMS_CHAN_ACKED }, { 1, OMS_CHAN_ACKED } },
};

static void check(int cond)
{
	if (!cond)
		abort();
}

/* A refused call must leave the orderer exactly as it was. */
static void bad_call(struct t_fabric *f, uint8_t b)
{
	struct oms_so *so = &f->so;
	struct oms_so_counters before = so->ctr;
	struct oms_so_chan ch[T_MAX_CH];
	struct oms_so_store st = { .len = 1, .cls = OMS_STORE_WEAK };
	uint32_t count = so->count;
	uint64_t seq;
	int r = 0;

	memcpy(ch, so->chan, so->nchan * sizeof(ch[0]));
	switch (b & 7) {
	case 0:
		r = oms_so_ack(so, 0, so->chan[0].issued + 1 + b, 0);
		break;
	case 1:
		r = oms_so_ack(so, (uint16_t)(so->nchan + b), 0, 0);
		break;
	case 2:
		r = oms_so_flush_done(so, 1, so->chan[1].flush_token + 1, 0);
		break;
	case 3:
		st.chan = (uint16_t)so->nchan;
		r = oms_so_submit(so, &st, &seq);
		break;
	case 4:
		st.cls = 3 + (b >> 3);
		r = oms_so_submit(so, &st, &seq);
		break;
	case 5:
		st.len = 0;
		r = oms_so_submit(so, &st, &seq);
		break;
	case 6:
		st.addr = UINT64_MAX;
		st.len = 2;
		r = oms_so_submit(so, &st, &seq);
		break;
	default:
		r = oms_so_fence(so, (uint16_t)(so->ndest + b));
		break;
	}
	check(r == -22);	/* -EINVAL */
	check(!memcmp(&before, &so->ctr, sizeof(before)));
	check(!memcmp(ch, so->chan, so->nchan * sizeof(ch[0])));
	check(count == so->count);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct t_fabric f;
	struct t_event ev[T_MAX_OPS * 4];
	size_t i = 1;
	uint32_t steps = 0, k;

	if (n < 2)
		return 0;
	check(!t_fab_init(&f, 2, layouts[d[0] % 3], 2, 0));
	f.posted_acks = (d[0] >> 2) & 1;
	for (; i < n && d[i] != 0xff && f.nops < 24; i++) {
		uint8_t b = d[i];

		if ((b & 0x0f) >= 12)
			t_fab_fence(&f, (b & 1) ? OMS_SO_ALL : (b >> 4) & 1);
		else
			t_fab_store(&f, (uint8_t)((b & 0x0f) % 3),
				    (uint16_t)((b >> 4) & 1),
				    (uint8_t)((b >> 5) % T_NADDR), (uint32_t)i);
	}
	t_fab_fence(&f, OMS_SO_ALL);
	for (i++; i < n; i++) {
		uint32_t m = t_fab_events(&f, ev, T_MAX_OPS * 4);

		if (d[i] >= 0xf0 && d[i] != 0xff) {
			bad_call(&f, d[i]);
			continue;
		}
		if (!m)
			break;
		t_fab_step(&f, &ev[d[i] % m]);
		check(!f.violations && !f.err);
	}
	/* settle: always take the first enabled event */
	while ((k = t_fab_events(&f, ev, T_MAX_OPS * 4)) && steps++ < 100000)
		t_fab_step(&f, &ev[0]);
	check(!f.violations && !f.err);
	check(t_fab_settled(&f));
	t_fab_fini(&f);
	return 0;
}
