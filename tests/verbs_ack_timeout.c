// SPDX-License-Identifier: MIT
/*
 * The verbs QPs' ACK timeout follows the context's timeout_ms
 * (lib/verbs/common/qp.c, vb_ack_timeout): the transport's retries
 * together last at least as long as the caller allows before the peer is
 * declared dead, never less than the 134 ms per try of a fast fabric, and the
 * exponent stays within the 5 bits the wire carries.
 *
 * A test of internals (INTERNAL_TESTS in the Makefile): it includes
 * lib/ headers to reach what the public API does not show.
 */
#include <stdint.h>

#include "harness.h"
#include "verbs/common/verbs.h"

/* How long VB_RETRY_CNT + 1 tries at exponent @t last, in ns. */
static uint64_t tries_ns(uint8_t t)
{
	return (4096ull << t) * (VB_RETRY_CNT + 1);
}

TEST(retries_last_the_context_timeout)
{
	static const uint32_t ms[] = { 1, 500, 1000, 1100, 2000, 5000, 20000,
				       600000 };

	for (unsigned i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		uint8_t t = vb_ack_timeout(ms[i]);

		TH_LOG("timeout_ms %u: exponent %u, tries last %.2f s", ms[i],
		       t, tries_ns(t) / 1e9);
		ASSERT_GE(t, VB_ACK_TIMEOUT);
		ASSERT_LE(t, 31);
		ASSERT_GE(tries_ns(t), (uint64_t)ms[i] * 1000000ull);
		/* the smallest such: one less would end too early */
		if (t > VB_ACK_TIMEOUT)
			ASSERT_LT(tries_ns(t - 1), (uint64_t)ms[i] * 1000000ull);
	}
}

TEST(default_and_test_timeouts)
{
	/* the default 2000 ms: 268 ms per try; the rxe guests' 20 s: 4.3 s */
	ASSERT_EQ(16, vb_ack_timeout(2000));
	ASSERT_EQ(20, vb_ack_timeout(20000));
	/* below 1.07 s the fast fabric's 134 ms stays */
	ASSERT_EQ(VB_ACK_TIMEOUT, vb_ack_timeout(1000));
}

TEST_HARNESS_MAIN
