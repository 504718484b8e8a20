// SPDX-License-Identifier: MIT
/*
 * The emulated-device lab of the mixed litmus programs (lab.h).
 */
#include <stdlib.h>
#include <string.h>

#include "lab.h"

int t_lab_open(struct t_lab *l, const struct t_lab_cfg *cfg)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_emu_attr ea = {
		.size = sizeof(ea), .comp_mask = OMS_EMU_ATTR_CHAOS,
		.chaos_seed = cfg->seed,
	};
	int err = 0;

	memset(l, 0, sizeof(*l));
	if (cfg->nini > T_LAB_MAX_INI || cfg->ndest >= T_LAB_MAX_DEST ||
	    !cfg->words)
		return -1;
	l->nini = cfg->nini;
	l->ndest = cfg->ndest;
	l->words = cfg->words;
	if (cfg->read_order_set) {
		ea.comp_mask |= OMS_EMU_ATTR_READ_ORDER;
		ea.read_order = cfg->read_order;
		ea.rlsq_entries = 256;
	}
	if (oms_emu_create(&ea, &l->emu))
		return -1;
	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_FLAGS | OMS_CTX_ATTR_EMU;
	a.emu = l->emu;
	a.flags = cfg->flags;
	for (uint32_t k = 0; k < l->nini && !err; k++)
		err = oms_ctx_create(&a, &l->ini[k]);
	a.flags = 0;
	for (uint32_t d = 1; d <= l->ndest && !err; d++) {
		a.node = d;
		l->mem[d] = calloc(l->words, 8);
		err = l->mem[d] ? oms_ctx_create(&a, &l->tgt[d]) : -1;
		if (!err)
			err = oms_mr_reg(l->tgt[d], l->mem[d], l->words * 8,
					 OMS_ACCESS_ALL, &l->mr[d]);
		if (!err)
			err = oms_mr_remote(l->mr[d], &l->r[d]);
	}
	if (err) {
		t_lab_close(l);
		return -1;
	}
	return 0;
}

void t_lab_close(struct t_lab *l)
{
	if (l->emu)
		oms_emu_set_observer(l->emu, NULL, NULL);
	for (uint32_t k = 0; k < T_LAB_MAX_INI; k++)
		if (l->ini[k])
			oms_ctx_destroy(l->ini[k]);
	for (uint32_t d = 1; d < T_LAB_MAX_DEST; d++) {
		if (l->tgt[d])
			oms_ctx_destroy(l->tgt[d]);
		free(l->mem[d]);
	}
	if (l->emu)
		oms_emu_destroy(l->emu);
	memset(l, 0, sizeof(*l));
}

int t_lab_dest_of(const struct t_lab *l, uint32_t region)
{
	for (uint32_t d = 1; d <= l->ndest; d++)
		if (l->tgt[d] && l->r[d].region == region)
			return (int)d;
	return -1;
}

void t_lab_zero(struct t_lab *l)
{
	for (uint32_t d = 1; d <= l->ndest; d++)
		memset(l->mem[d], 0, l->words * 8);
}
