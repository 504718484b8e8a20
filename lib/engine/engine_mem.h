/* SPDX-License-Identifier: MIT */
/*
 * Engine state memory: every engine object takes its arrays either from the
 * caller (embedded or shared memory, no allocation at all) or from one
 * calloc at init, never later.  This is the one place that decides which.
 */
#ifndef OMS_ENGINE_MEM_H
#define OMS_ENGINE_MEM_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Point *@out at @need zeroed bytes: @mem if given (at least @need bytes,
 * 8-byte aligned), else a fresh allocation, in which case *@owns is set so
 * destroy knows to free it.  Returns 0, -EINVAL or -ENOMEM.
 */
static inline int oms_engine_mem(void *mem, size_t memlen, size_t need,
				 void **out, int *owns)
{
	*owns = 0;
	if (mem) {
		if (memlen < need || ((uintptr_t)mem & 7u))
			return -EINVAL;
	} else {
		/* calloc: a large table comes zeroed from the kernel, pages
		 * touched only when used (a device's hold trackers and reorder
		 * buffers are megabytes, mostly never used) */
		mem = calloc(1, need);
		if (!mem)
			return -ENOMEM;
		*owns = 1;
		*out = mem;
		return 0;
	}
	memset(mem, 0, need);
	*out = mem;
	return 0;
}

#endif
