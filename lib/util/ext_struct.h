/* SPDX-License-Identifier: MIT */
/*
 * Extensible attribute structs (struct oms_ctx_attr, struct oms_emu_attr):
 * the caller's struct starts with a u32 @size, sizeof() as it was
 * compiled.  An older caller's shorter struct is read up to its size and
 * the rest is zero; a newer caller's longer one is accepted only if the
 * bytes this library does not know are zero (a field it would ignore
 * must not be silently dropped), as the kernel's copy_struct_from_user()
 * decides for system calls.
 */
#ifndef OMS_UTIL_EXT_STRUCT_H
#define OMS_UTIL_EXT_STRUCT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Copy @in (its size is its first u32) into @out of @out_size bytes.
 * -EINVAL when @in is shorter than @min_size; -E2BIG when a byte past
 * @out_size is nonzero.  @out is written only on success.
 */
static inline int oms_ext_copy(void *out, size_t out_size, const void *in,
			       size_t min_size)
{
	const unsigned char *p = in;
	uint32_t size;

	memcpy(&size, in, sizeof(size));
	if (size < min_size)
		return -EINVAL;
	for (size_t i = out_size; i < size; i++)
		if (p[i])
			return -E2BIG;
	memset(out, 0, out_size);
	memcpy(out, in, size < out_size ? size : out_size);
	return 0;
}

#endif /* OMS_UTIL_EXT_STRUCT_H */
