// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include "engine/key_check.h"

void oms_kc_init(struct oms_key_check *kc, uint32_t threshold)
{
	memset(kc, 0, sizeof(*kc));
	kc->threshold = threshold;
}

int oms_kc_set(struct oms_key_check *kc, uint32_t region, uint32_t key)
{
	if (!kc || region >= OMS_KC_MAX_REGIONS)
		return -EINVAL;
	if (kc->valid[region])
		return -EEXIST;
	kc->keys[region] = key;
	kc->valid[region] = 1;
	return 0;
}

int oms_kc_clear(struct oms_key_check *kc, uint32_t region)
{
	if (!kc || region >= OMS_KC_MAX_REGIONS || !kc->valid[region])
		return -ENOENT;
	kc->valid[region] = 0;
	return 0;
}

int oms_kc_check(struct oms_key_check *kc, uint32_t region, uint32_t key)
{
	if (region < OMS_KC_MAX_REGIONS && kc->valid[region] &&
	    kc->keys[region] == key) {
		kc->passed++;
		return 0;
	}
	kc->dropped++;
	if (kc->threshold && kc->dropped >= kc->threshold) {
		kc->tripped = 1;
		return -EKEYREJECTED;
	}
	return -EACCES;
}
