/* SPDX-License-Identifier: MIT */
/*
 * Protection key check (seed 003: each operation carries a job key; the
 * target compares it with the key of the memory it touches, drops a
 * mismatch and counts it, and reports an error once the count passes a
 * threshold).  Pure: a table of region keys and counters.
 *
 * A dropped operation must leave memory unchanged (L21): the caller checks
 * before touching memory and completes the operation with the returned
 * error instead.
 */
#ifndef OMS_ENGINE_KEY_CHECK_H
#define OMS_ENGINE_KEY_CHECK_H

#include <stdint.h>

#define OMS_KC_MAX_REGIONS 1024

struct oms_key_check {
	uint32_t keys[OMS_KC_MAX_REGIONS];
	uint8_t valid[OMS_KC_MAX_REGIONS];
	uint32_t threshold;	/* drops before the error is raised; 0 = never */
	uint64_t passed, dropped;
	int tripped;		/* dropped reached threshold */
};

void oms_kc_init(struct oms_key_check *kc, uint32_t threshold);

/* Register @key for @region.  0, -EINVAL (region out of range), -EEXIST. */
int oms_kc_set(struct oms_key_check *kc, uint32_t region, uint32_t key);

/* Forget @region.  0 or -ENOENT. */
int oms_kc_clear(struct oms_key_check *kc, uint32_t region);

/*
 * Check an operation's key.  0 = allowed; -EACCES = dropped (wrong key or
 * unknown region), counted; -EKEYREJECTED = dropped and the threshold has
 * been reached (report an error to the owner).
 */
int oms_kc_check(struct oms_key_check *kc, uint32_t region, uint32_t key);

#endif
