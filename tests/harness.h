/* SPDX-License-Identifier: MIT */
/*
 * The kselftest harness (extracted from linux-source-6.1 at build time) with
 * one change: a test's timeout.  The harness kills a test after 30 s; on a
 * loaded 2-core machine (two `make check` runs side by side, QEMU guests
 * beside the host tests) a test that needs 3 s when idle has been seen to
 * need more.  Tests bound their loops by counts, not by the clock; this
 * timeout only catches a hang, so it is far above any test's need, and
 * below scripts/run-tests.sh's bound on the whole binary.
 *
 * TEST() reads TEST_TIMEOUT_DEFAULT where it is used, so redefining it
 * here reaches every test below the include.
 */
#ifndef OMS_TESTS_HARNESS_H
#define OMS_TESTS_HARNESS_H

#include "kselftest_harness.h"

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#endif
