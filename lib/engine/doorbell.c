// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "engine/doorbell.h"

int oms_db_init(struct oms_db_ring *r, uint32_t size)
{
	if (!r || size < 2 || size > (1u << 24) || (size & (size - 1)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->size = size;
	return 0;
}

uint32_t oms_db_space(const struct oms_db_ring *r)
{
	return r->size - (r->written - r->taken);
}

int oms_db_produce(struct oms_db_ring *r)
{
	if (!r || !r->size)
		return -EINVAL;
	if (!oms_db_space(r)) {
		r->refused++;
		return -ENOSPC;
	}
	return (int)(r->written++ & (r->size - 1));
}

int oms_db_ring(struct oms_db_ring *r, uint32_t n)
{
	if (!r || n == 0 || n > r->written - r->rung) {
		if (r)
			r->refused++;
		return -EINVAL;
	}
	r->rung += n;
	return 0;
}

int oms_db_consume(struct oms_db_ring *r)
{
	if (!r || !r->size)
		return -EINVAL;
	if (r->taken == r->rung)
		return -EAGAIN;
	return (int)(r->taken++ & (r->size - 1));
}
