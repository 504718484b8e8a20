// SPDX-License-Identifier: MIT
/*
 * oms_emu.h: the emulated device as an object a program makes, configures,
 * breaks on purpose and destroys.  The object is the device (struct
 * oms_emu, emu.h); its creator holds one reference and every context on
 * it one more, so destroy refuses while a context lives.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "backend.h"
#include "util/export.h"
#include "emu/emu.h"
#include "util/ext_struct.h"

#define EA_HAS(in, m, field) \
	(((in)->comp_mask & (m)) && \
	 (in)->size >= offsetof(struct oms_emu_attr, field) + sizeof((in)->field))

/* The caller's attributes over the defaults, into @cfg; -EINVAL/-E2BIG. */
static int emu_attr_parse(const struct oms_emu_attr *in, struct emu_cfg *cfg)
{
	struct oms_emu_attr t;
	int err;

	emu_cfg_defaults(cfg);
	if (!in)
		return 0;
	err = oms_ext_copy(&t, sizeof(t), in,
			   offsetof(struct oms_emu_attr, chaos_seed));
	if (err)
		return err;
	/* reserved must be zero whatever comp_mask says (short: copied as 0) */
	if (t.comp_mask & ~OMS_EMU_ATTR_ALL || t.reserved)
		return -EINVAL;
	if (t.comp_mask & OMS_EMU_ATTR_CHAOS) {
		if (!EA_HAS(in, OMS_EMU_ATTR_CHAOS, chaos_seed))
			return -EINVAL;
		cfg->chaos_seed = t.chaos_seed;
	}
	if (t.comp_mask & OMS_EMU_ATTR_LATENCY) {
		if (!EA_HAS(in, OMS_EMU_ATTR_LATENCY, time_scale))
			return -EINVAL;
		cfg->lat_bus_ns = t.lat_bus_ns;
		cfg->lat_rc_ns = t.lat_rc_ns;
		cfg->lat_mem_ns = t.lat_mem_ns;
		cfg->link_gbps = t.link_gbps;
		cfg->time_scale = t.time_scale;
	}
	if (t.comp_mask & OMS_EMU_ATTR_READ_ORDER) {
		if (!EA_HAS(in, OMS_EMU_ATTR_READ_ORDER, rlsq_entries))
			return -EINVAL;
		cfg->read_order = t.read_order;
		cfg->rlsq_entries = t.rlsq_entries;
	}
	if (t.comp_mask & OMS_EMU_ATTR_NIC_RATE) {
		if (!EA_HAS(in, OMS_EMU_ATTR_NIC_RATE, lat_req_ns))
			return -EINVAL;
		cfg->lat_req_ns = t.lat_req_ns;
	}
	if (t.comp_mask & OMS_EMU_ATTR_FLAGS) {
		if (!EA_HAS(in, OMS_EMU_ATTR_FLAGS, reserved) ||
		    (t.flags & ~OMS_EMU_F_ALL))
			return -EINVAL;
		cfg->no_hold = !!(t.flags & OMS_EMU_F_NO_HOLD);
		cfg->hold_global = !!(t.flags & OMS_EMU_F_HOLD_GLOBAL);
		cfg->charge_cpu = !!(t.flags & OMS_EMU_F_CHARGE_CPU);
	}
	return emu_cfg_check(cfg);
}

OMS_EXPORT int oms_emu_create(const struct oms_emu_attr *attr,
			      struct oms_emu **emu)
{
	struct emu_cfg cfg;
	int err;

	if (!emu)
		return -EINVAL;
	err = emu_attr_parse(attr, &cfg);
	if (err)
		return err;
	return emu_dev_create(&cfg, emu);
}

/* The device's own thread (an observer) waiting for the device. */
static int on_device_thread(const struct oms_emu *emu)
{
	return pthread_equal(pthread_self(), emu->thread);
}

OMS_EXPORT int oms_emu_destroy(struct oms_emu *emu)
{
	if (!emu || emu->is_default)
		return -EINVAL;
	if (on_device_thread(emu))
		return -EDEADLK;
	return emu_dev_destroy(emu);
}

OMS_EXPORT int oms_emu_freeze(struct oms_emu *emu, int on)
{
	if (!emu)
		return -EINVAL;
	if (on_device_thread(emu))
		return -EDEADLK;
	emu_dev_freeze(emu, !!on);
	return 0;
}

OMS_EXPORT int oms_emu_stop(struct oms_emu *emu)
{
	if (!emu)
		return -EINVAL;
	if (on_device_thread(emu))
		return -EDEADLK;
	emu_dev_stop(emu);
	return 0;
}

/* The device's observer hook, turned into oms_emu.h's event. */
static void observe_public(void *arg, uint32_t qid, const struct oms_wr *wr)
{
	struct oms_emu *dev = arg;
	struct oms_emu_event ev = {
		.kind = wr->op == OMS_WR_PUT ? OMS_EMU_EV_PUT :
			wr->op == OMS_WR_GET ? OMS_EMU_EV_GET :
			OMS_EMU_EV_ATOMIC,
		.src = dev->q[qid] ? dev->q[qid]->node : 0,
		.dest = wr->dest,
		.region = wr->region,
		.off = wr->off,
		.len = wr->len,
	};

	dev->pub_observe(dev->pub_observe_arg, &ev);
}

OMS_EXPORT int oms_emu_host_write(struct oms_emu *emu, uint32_t region,
				 uint64_t off, const void *src, size_t len)
{
	const struct emu_region *r;

	if (!emu || !src || !len)
		return -EINVAL;
	/* the device's thread, in an observer: the device lock is held and
	 * nothing moves until the observer returns */
	if (!on_device_thread(emu) || !emu->pub_observe)
		return -EPERM;
	if (region >= EMU_MAX_REGIONS || !emu->reg[region].valid)
		return -EINVAL;
	r = &emu->reg[region];
	if (off > r->len || len > r->len - off)
		return -ERANGE;
	memcpy(r->base + off, src, len);
	emu_invalidate(emu, region, off, len);
	return 0;
}

OMS_EXPORT int oms_emu_set_observer(struct oms_emu *emu, oms_emu_observe_fn fn,
				   void *arg)
{
	if (!emu)
		return -EINVAL;
	if (on_device_thread(emu))
		return -EDEADLK;
	/* Under the device lock, which the device holds while it calls an
	 * observer: once this returns the old one is not running. */
	pthread_mutex_lock(&emu->lock);
	emu->pub_observe = fn;
	emu->pub_observe_arg = arg;
	emu->observe = fn ? observe_public : NULL;
	emu->observe_arg = fn ? emu : NULL;
	pthread_mutex_unlock(&emu->lock);
	return 0;
}

OMS_EXPORT int oms_emu_clock(const struct oms_emu *emu, uint64_t *ns)
{
	if (!emu || !ns)
		return -EINVAL;
	*ns = emu_now(emu);
	return 0;
}

OMS_EXPORT int oms_emu_thread_time(struct oms_emu *emu, uint64_t *ns)
{
	if (!emu || !ns)
		return -EINVAL;
	/* the device's thread (an observer) issues nothing: its clock */
	*ns = emu->cfg.time_scale && !on_device_thread(emu) ?
	      emu_initiator_time(emu) : emu_now(emu);
	return 0;
}
