// SPDX-License-Identifier: MIT
/*
 * One version everywhere: oms_version() (the library, from the Makefile)
 * is "MAJOR.MINOR.PATCH" of the OMS_VERSION_* macros of oms.h (the header).
 * tests/kmod/kmod-lint.sh ties the Makefile to dkms.conf and oms.ko.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "oms.h"

TEST(library_matches_header)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", OMS_VERSION_MAJOR,
		 OMS_VERSION_MINOR, OMS_VERSION_PATCH);
	ASSERT_NE(NULL, oms_version());
	EXPECT_STREQ(want, oms_version());
}

TEST_HARNESS_MAIN
