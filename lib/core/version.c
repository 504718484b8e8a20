// SPDX-License-Identifier: MIT
/*
 * oms_version(): the library's version at run time, from the Makefile's
 * VERSION through build/oms_config.h (tests/api_version.c checks it
 * against oms.h's OMS_VERSION_* macros).
 */
#include "oms_config.h"
#include "oms_priv.h"

OMS_EXPORT const char *oms_version(void)
{
	return OMS_LIB_VERSION;
}
