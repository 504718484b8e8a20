// SPDX-License-Identifier: MIT
/*
 * The stop rule of a sequence-numbered stream (stream.h).
 */
#include <string.h>

#include "engine/stream.h"
#include "engine/serial.h"

void oms_stream_start(struct oms_stream *s, uint16_t next)
{
	memset(s, 0, sizeof(*s));
	s->next = next;
}

void oms_stream_stop(struct oms_stream *s, uint16_t seq)
{
	if (s->stopped && oms_serial_at_or_after(seq, s->stop_at))
		return;
	s->stopped = 1;
	s->stop_at = seq;
	/* a member already taken failed: nothing after it may go */
	if (!oms_serial_at_or_after(seq, s->next))
		s->reached = 1;
}

void oms_stream_stop_all(struct oms_stream *s)
{
	oms_stream_stop(s, s->next);
	s->reached = 1;
}

enum oms_stream_verdict oms_stream_take(struct oms_stream *s, uint16_t seq)
{
	s->next = (uint16_t)(seq + 1);
	if (s->reached)
		return OMS_STREAM_CANCEL;
	if (!s->stopped || !oms_serial_at_or_after(seq, s->stop_at))
		return OMS_STREAM_GO;
	s->reached = 1;
	return seq == s->stop_at ? OMS_STREAM_STOP_HERE : OMS_STREAM_CANCEL;
}

int oms_stream_cancels(const struct oms_stream *s, uint16_t seq)
{
	return s->reached || (s->stopped && oms_serial_at_or_after(seq, s->stop_at));
}

int oms_stream_after_stop(const struct oms_stream *s, uint16_t seq)
{
	return s->stopped && seq != s->stop_at && oms_serial_at_or_after(seq, s->stop_at);
}

int oms_stream_flush_cancelled(const struct oms_stream *s, uint16_t cnt)
{
	/* members below @cnt include stop_at: cnt is after it */
	return s->stopped && cnt != s->stop_at && oms_serial_at_or_after(cnt, s->stop_at);
}
