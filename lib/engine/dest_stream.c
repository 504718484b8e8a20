// SPDX-License-Identifier: MIT
/*
 * The destination side of sequence-numbered streams (dest_stream.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dest_stream.h"
#include "engine/serial.h"

int oms_dseq_init(struct oms_dseq *m, unsigned nstreams, unsigned window)
{
	int r;

	if (!m || !nstreams || nstreams > OMS_ROB_MAX_THREADS || !window ||
	    window > OMS_ROB_MAX_WINDOW || (window & (window - 1)))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->st = calloc(nstreams, sizeof(*m->st));
	m->dropped = calloc(window, sizeof(*m->dropped));
	r = m->st && m->dropped ? oms_rob_init(&m->rob, nstreams, window,
					       NULL, 0) : -ENOMEM;
	if (r) {
		free(m->st);
		free(m->dropped);
		memset(m, 0, sizeof(*m));
		return r;
	}
	m->nstreams = nstreams;
	m->window = window;
	return 0;
}

void oms_dseq_destroy(struct oms_dseq *m)
{
	if (!m || !m->st)
		return;
	oms_rob_destroy(&m->rob);
	free(m->st);
	free(m->dropped);
	memset(m, 0, sizeof(*m));
}

/* Give up what @stream buffered and place it at @next: every caller hands
 * the dropped ones back before the next drop, so the list has room for a
 * window. */
static void drop(struct oms_dseq *m, unsigned stream, uint16_t next)
{
	int n;

	if (m->dropped_at == m->ndropped)
		m->ndropped = m->dropped_at = 0;
	n = oms_rob_resync(&m->rob, stream, next, m->dropped + m->ndropped,
			   m->window - m->ndropped);
	if (n > 0)
		m->ndropped += (unsigned)n;
}

/* Nothing buffered or still to come of @stream is performed. */
static void stop_where_it_stands(struct oms_dseq *m, unsigned stream)
{
	struct oms_stream *s = &m->st[stream];

	drop(m, stream, s->next);
	oms_stream_stop_all(s);
}

int oms_dseq_arrive(struct oms_dseq *m, unsigned stream, uint16_t seq,
		    uint64_t cookie, int refused)
{
	struct oms_stream *s;
	int r;

	if (!m || stream >= m->nstreams)
		return -EINVAL;
	s = &m->st[stream];
	if (s->reached)
		return -ECANCELED;
	if (oms_serial_ahead(seq, s->next) >= m->window) {
		r = oms_serial_at_or_after(seq, s->next) ? -ENOSPC : -ESTALE;
		stop_where_it_stands(m, stream);
		return r;
	}
	if (oms_stream_after_stop(s, seq))
		return -ECANCELED;
	r = oms_rob_insert(&m->rob, stream, seq, cookie);
	if (r < 0) {
		/* in the window, so buffered already: which of the two is
		 * the initiator's cannot be told */
		stop_where_it_stands(m, stream);
		return r;
	}
	if (refused)
		oms_stream_stop(s, seq);
	return 0;
}

int oms_dseq_pop(struct oms_dseq *m, unsigned stream, uint16_t *seq,
		 uint64_t *cookie, enum oms_stream_verdict *verdict)
{
	oms_rob_seq_t at;
	uint64_t c;
	enum oms_stream_verdict v;

	if (!m || stream >= m->nstreams)
		return -EINVAL;
	if (m->st[stream].reached ||
	    oms_rob_pop(&m->rob, stream, &at, &c) != 1)
		return 0;
	v = oms_stream_take(&m->st[stream], at);
	if (v != OMS_STREAM_GO)
		stop_where_it_stands(m, stream);
	if (seq)
		*seq = at;
	if (cookie)
		*cookie = c;
	if (verdict)
		*verdict = v;
	return 1;
}

void oms_dseq_failed(struct oms_dseq *m, unsigned stream, uint16_t seq)
{
	if (!m || stream >= m->nstreams)
		return;
	oms_stream_stop(&m->st[stream], seq);
	stop_where_it_stands(m, stream);
}

int oms_dseq_resume(struct oms_dseq *m, unsigned stream, uint16_t next)
{
	if (!m || stream >= m->nstreams)
		return -EINVAL;
	drop(m, stream, next);
	oms_stream_start(&m->st[stream], next);
	return 0;
}

int oms_dseq_dropped(struct oms_dseq *m, uint64_t *cookie)
{
	if (!m || m->dropped_at == m->ndropped)
		return 0;
	*cookie = m->dropped[m->dropped_at++];
	return 1;
}

uint16_t oms_dseq_next(const struct oms_dseq *m, unsigned stream)
{
	return m->st[stream].next;
}

int oms_dseq_flush_cancelled(const struct oms_dseq *m, unsigned stream,
			     uint16_t cnt)
{
	return oms_stream_flush_cancelled(&m->st[stream], cnt);
}
