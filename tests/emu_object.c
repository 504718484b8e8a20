// SPDX-License-Identifier: MIT
/*
 * oms_emu.h, through the public headers only: emulated devices made by
 * the program are fabrics of their own (two in one process, each with its
 * own settings, memory keys and listeners), a device is not destroyed
 * under a live context, freeze holds back what it would execute until the
 * thaw, stop kills one device and not another, the observer reports what
 * becomes visible (and may write as the host at that instant), and bad
 * attributes are refused without effect.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "oms.h"
#include "oms_emu.h"

static struct oms_emu *make_emu(struct __test_metadata *_metadata,
				const struct oms_emu_attr *ea)
{
	struct oms_emu *e = NULL;

	EXPECT_EQ(0, oms_emu_create(ea, &e));
	EXPECT_NE(NULL, e);
	return e;
}

static struct oms_ctx *make_ctx(struct __test_metadata *_metadata,
				struct oms_emu *e, uint32_t node)
{
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *c = NULL;

	a.comp_mask = OMS_CTX_ATTR_NODE | OMS_CTX_ATTR_EMU |
		      OMS_CTX_ATTR_TIMEOUT;
	a.node = node;
	a.emu = e;
	a.timeout_ms = 60000;	/* a loaded machine: never the verdict */
	EXPECT_EQ(0, oms_ctx_create(&a, &c));
	return c;
}

/* A listener of one device is unknown to the other: the same port is
 * free on both, and each initiator reaches its own fabric's memory. */
TEST(two_devices_are_two_fabrics)
{
	struct oms_emu *ea = make_emu(_metadata, NULL);
	struct oms_emu *eb = make_emu(_metadata, NULL);
	struct oms_ctx *sa = make_ctx(_metadata, ea, 1);
	struct oms_ctx *ca = make_ctx(_metadata, ea, 0);
	struct oms_ctx *sb = make_ctx(_metadata, eb, 1);
	struct oms_ctx *cb = make_ctx(_metadata, eb, 0);
	uint64_t mema[4] = { 0 }, memb[4] = { 0 };
	uint64_t va = 0xaaaa, vb = 0xbbbb;
	struct oms_mr *ma, *mb;
	struct oms_listener *la, *lb;
	struct oms_rmr ra, rb;

	ASSERT_NE(NULL, cb);
	ASSERT_EQ(0, oms_mr_reg(sa, mema, sizeof(mema), OMS_ACCESS_ALL, &ma));
	ASSERT_EQ(0, oms_mr_reg(sb, memb, sizeof(memb), OMS_ACCESS_ALL, &mb));
	ASSERT_EQ(0, oms_listen(sa, NULL, "7480", ma, &la));
	/* The control: on one device the port would be taken. */
	EXPECT_EQ(-EADDRINUSE, oms_listen(sa, NULL, "7480", ma,
					  &(struct oms_listener *){ NULL }));
	ASSERT_EQ(0, oms_listen(sb, NULL, "7480", mb, &lb));
	ASSERT_EQ(0, oms_connect(ca, "localhost", "7480", 0, &ra));
	ASSERT_EQ(0, oms_connect(cb, "localhost", "7480", 0, &rb));
	EXPECT_EQ(-ECONNREFUSED, oms_connect(cb, "localhost", "7481", 0, &rb));
	ASSERT_EQ(0, oms_put(ca, &ra, 8, &va, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_put(cb, &rb, 8, &vb, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(ca));
	ASSERT_EQ(0, oms_quiet(cb));
	EXPECT_EQ(va, mema[1]);
	EXPECT_EQ(vb, memb[1]);
	/* A descriptor of one fabric names nothing valid on the other. */
	if (ra.key != rb.key || ra.region != rb.region) {
		EXPECT_NE(0, oms_put(cb, &ra, 16, &vb, 8, OMS_STORE_WEAK) ||
			     oms_quiet(cb));
		EXPECT_EQ(0, mema[2]);
	}
	oms_ctx_destroy(ca);
	oms_ctx_destroy(cb);
	oms_listener_close(la);
	oms_listener_close(lb);
	oms_mr_dereg(ma);
	oms_mr_dereg(mb);
	oms_ctx_destroy(sa);
	oms_ctx_destroy(sb);
	EXPECT_EQ(0, oms_emu_destroy(ea));
	EXPECT_EQ(0, oms_emu_destroy(eb));
}

/* Each device keeps the settings it was made with; a context reports its
 * own device's. */
TEST(settings_are_per_device)
{
	struct oms_emu_attr attr = {
		.size = sizeof(attr),
		.comp_mask = OMS_EMU_ATTR_CHAOS | OMS_EMU_ATTR_LATENCY |
			     OMS_EMU_ATTR_READ_ORDER,
		.chaos_seed = 77, .lat_bus_ns = 200, .lat_rc_ns = 17,
		.lat_mem_ns = 50, .link_gbps = 100, .time_scale = 1,
		.read_order = OMS_ORDER_NIC, .rlsq_entries = 64,
	};
	struct oms_emu *ea = make_emu(_metadata, &attr);
	struct oms_emu *eb = make_emu(_metadata, NULL);
	struct oms_ctx *ca = make_ctx(_metadata, ea, 0);
	struct oms_ctx *cb = make_ctx(_metadata, eb, 0);
	struct oms_caps pa = { .size = sizeof(pa) }, pb = { .size = sizeof(pb) };

	ASSERT_EQ(0, oms_query_caps(ca, &pa));
	ASSERT_EQ(0, oms_query_caps(cb, &pb));
	EXPECT_EQ(OMS_BACKEND_EMU, pa.backend);
	EXPECT_NE(0, pa.flags & OMS_CAP_CHAOS);
	EXPECT_NE(0, pa.flags & OMS_CAP_LATENCY_MODEL);
	EXPECT_EQ(77, pa.chaos_seed);
	EXPECT_EQ(OMS_ORDER_NIC, pa.read_order);
	EXPECT_EQ(0, pb.flags & OMS_CAP_CHAOS);
	EXPECT_EQ(0, pb.flags & OMS_CAP_LATENCY_MODEL);
	EXPECT_EQ(OMS_ORDER_RC_OPT, pb.read_order);
	EXPECT_NE(NULL, strstr(pa.backend_why, "oms_ctx_attr.emu"));
	oms_ctx_destroy(ca);
	oms_ctx_destroy(cb);
	EXPECT_EQ(0, oms_emu_destroy(ea));
	EXPECT_EQ(0, oms_emu_destroy(eb));
}

/* Destroy is refused while a context lives, and the refusal changes
 * nothing: the context goes on working. */
TEST(destroy_refused_while_a_context_lives)
{
	struct oms_emu *e = make_emu(_metadata, NULL);
	struct oms_ctx *c = make_ctx(_metadata, e, 0);
	uint64_t mem = 0, v = 5;
	struct oms_mr *m;
	struct oms_rmr r;

	ASSERT_EQ(0, oms_mr_reg(c, &mem, sizeof(mem), OMS_ACCESS_ALL, &m));
	ASSERT_EQ(0, oms_mr_remote(m, &r));
	EXPECT_EQ(-EBUSY, oms_emu_destroy(e));
	ASSERT_EQ(0, oms_put(c, &r, 0, &v, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(c));
	EXPECT_EQ(5, mem);
	oms_mr_dereg(m);
	oms_ctx_destroy(c);
	EXPECT_EQ(0, oms_emu_destroy(e));
}

/* A frozen device executes nothing: a put waits, visible only after the
 * thaw (the control is the same put landing on a running device). */
TEST(freeze_holds_until_thaw)
{
	struct oms_emu *e = make_emu(_metadata, NULL);
	struct oms_ctx *c = make_ctx(_metadata, e, 0);
	uint64_t mem[2] = { 0 }, v = 9;
	struct oms_mr *m;
	struct oms_rmr r;

	ASSERT_EQ(0, oms_mr_reg(c, mem, sizeof(mem), OMS_ACCESS_ALL, &m));
	ASSERT_EQ(0, oms_mr_remote(m, &r));
	ASSERT_EQ(0, oms_put(c, &r, 0, &v, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(c));
	EXPECT_EQ(9, mem[0]);

	ASSERT_EQ(0, oms_emu_freeze(e, 1));
	ASSERT_EQ(0, oms_put(c, &r, 8, &v, 8, OMS_STORE_WEAK));
	for (int i = 0; i < 20; i++) {
		oms_progress(c);
		usleep(1000);
	}
	EXPECT_EQ(0, __atomic_load_n(&mem[1], __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, oms_emu_freeze(e, 0));
	ASSERT_EQ(0, oms_quiet(c));
	EXPECT_EQ(9, mem[1]);
	oms_mr_dereg(m);
	oms_ctx_destroy(c);
	EXPECT_EQ(0, oms_emu_destroy(e));
}

/* Stopping one device fails its contexts and refuses new ones; a context
 * of another device does not notice. */
TEST(stop_kills_one_device_only)
{
	struct oms_emu *ea = make_emu(_metadata, NULL);
	struct oms_emu *eb = make_emu(_metadata, NULL);
	struct oms_ctx *ca = make_ctx(_metadata, ea, 0);
	struct oms_ctx *cb = make_ctx(_metadata, eb, 0);
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *late = NULL;
	uint64_t mema = 0, memb = 0, v = 3;
	struct oms_mr *ma, *mb;
	struct oms_rmr ra, rb;

	ASSERT_EQ(0, oms_mr_reg(ca, &mema, 8, OMS_ACCESS_ALL, &ma));
	ASSERT_EQ(0, oms_mr_reg(cb, &memb, 8, OMS_ACCESS_ALL, &mb));
	ASSERT_EQ(0, oms_mr_remote(ma, &ra));
	ASSERT_EQ(0, oms_mr_remote(mb, &rb));
	ASSERT_EQ(0, oms_emu_stop(ea));
	oms_put(ca, &ra, 0, &v, 8, OMS_STORE_STRONG);
	EXPECT_EQ(-ENODEV, oms_quiet(ca));
	EXPECT_EQ(0, mema);
	a.comp_mask = OMS_CTX_ATTR_EMU;
	a.emu = ea;
	EXPECT_EQ(-ENODEV, oms_ctx_create(&a, &late));
	EXPECT_EQ(NULL, late);
	ASSERT_EQ(0, oms_put(cb, &rb, 0, &v, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(cb));
	EXPECT_EQ(3, memb);
	oms_mr_dereg(ma);
	oms_mr_dereg(mb);
	oms_ctx_destroy(ca);
	oms_ctx_destroy(cb);
	EXPECT_EQ(0, oms_emu_destroy(ea));
	EXPECT_EQ(0, oms_emu_destroy(eb));
}

struct seen {
	struct oms_emu_event ev[8];
	int n;
	uint64_t data_at_flag;	/* the data word when the flag landed */
	const uint64_t *data;
	struct oms_emu *emu;
	int waits[4];		/* the device's calls, from its thread */
};

static void observe(void *arg, const struct oms_emu_event *ev)
{
	struct seen *s = arg;

	if (s->n < 8)
		s->ev[s->n] = *ev;
	if (ev->kind == OMS_EMU_EV_PUT && ev->off == 8)
		s->data_at_flag = *s->data;
	if (s->n == 0) {
		s->waits[0] = oms_emu_freeze(s->emu, 1);
		s->waits[1] = oms_emu_stop(s->emu);
		s->waits[2] = oms_emu_set_observer(s->emu, NULL, NULL);
		s->waits[3] = oms_emu_destroy(s->emu);
	}
	s->n++;
}

/* The observer sees each put, atomic and get response at the moment it
 * happens at the destination, with the memory as it is then. */
TEST(observer_reports_what_becomes_visible)
{
	struct oms_emu *e = make_emu(_metadata, NULL);
	struct oms_ctx *src = make_ctx(_metadata, e, 0);
	struct oms_ctx *dst = make_ctx(_metadata, e, 3);
	uint64_t mem[2] = { 0 }, data = 0x5a, flag = 1, got = 0, old = 0;
	struct seen s = { .data = &mem[0], .emu = e };
	struct oms_mr *m;
	struct oms_rmr r;

	ASSERT_EQ(0, oms_mr_reg(dst, mem, sizeof(mem), OMS_ACCESS_ALL, &m));
	ASSERT_EQ(0, oms_mr_remote(m, &r));
	ASSERT_EQ(0, oms_emu_set_observer(e, observe, &s));
	ASSERT_EQ(0, oms_put(src, &r, 0, &data, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_put(src, &r, 8, &flag, 8, OMS_STORE_STRONG));
	ASSERT_EQ(0, oms_quiet(src));
	ASSERT_EQ(0, oms_atomic_fadd(src, &r, 8, 1, &old));
	ASSERT_EQ(0, oms_get(src, &got, &r, 0, 8, OMS_READ_RELAXED));
	ASSERT_EQ(0, oms_quiet(src));
	ASSERT_EQ(0, oms_emu_set_observer(e, NULL, NULL));
	ASSERT_EQ(4, s.n);
	EXPECT_EQ(OMS_EMU_EV_PUT, s.ev[0].kind);
	EXPECT_EQ(0, s.ev[0].src);
	EXPECT_EQ(3, s.ev[0].dest);
	EXPECT_EQ(r.region, s.ev[0].region);
	EXPECT_EQ(0, s.ev[0].off);
	EXPECT_EQ(8, s.ev[0].len);
	EXPECT_EQ(OMS_EMU_EV_PUT, s.ev[1].kind);
	EXPECT_EQ(8, s.ev[1].off);
	/* strong after weak: the data was there when the flag landed */
	EXPECT_EQ(0x5a, s.data_at_flag);
	EXPECT_EQ(OMS_EMU_EV_ATOMIC, s.ev[2].kind);
	EXPECT_EQ(OMS_EMU_EV_GET, s.ev[3].kind);
	EXPECT_EQ(1, old);
	EXPECT_EQ(0x5a, got);
	/* the calls that wait for the device, refused from its thread (and
	 * nothing changed: the events went on being reported) */
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(-EDEADLK, s.waits[i]);
	/* removed: nothing more is reported */
	ASSERT_EQ(0, oms_put(src, &r, 0, &data, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(src));
	EXPECT_EQ(4, s.n);
	oms_mr_dereg(m);
	oms_ctx_destroy(src);
	oms_ctx_destroy(dst);
	EXPECT_EQ(0, oms_emu_destroy(e));
}

struct hw {
	struct oms_emu *emu;
	uint32_t region;
	uint64_t x;		/* what the host writes */
	int rc[4];		/* bad region, past the end, 0 bytes, good */
	int n;
};

/* At the put of word 0: the host writes word 1 (and tries bad ones). */
static void host_writes(void *arg, const struct oms_emu_event *ev)
{
	struct hw *h = arg;

	if (ev->kind != OMS_EMU_EV_PUT || ev->off != 0 || h->n++)
		return;
	h->rc[0] = oms_emu_host_write(h->emu, h->region + 1000, 8, &h->x, 8);
	h->rc[1] = oms_emu_host_write(h->emu, h->region, 12, &h->x, 8);
	h->rc[2] = oms_emu_host_write(h->emu, h->region, 8, &h->x, 0);
	h->rc[3] = oms_emu_host_write(h->emu, h->region, 8, &h->x, 8);
}

/* oms_emu_host_write(): a host store at the instant of an event, seen by
 * the device's next operations; refused outside an observer and for bad
 * bytes, writing nothing then. */
TEST(host_write_from_an_observer)
{
	struct oms_emu *e = make_emu(_metadata, NULL);
	struct oms_ctx *src = make_ctx(_metadata, e, 0);
	struct oms_ctx *dst = make_ctx(_metadata, e, 2);
	uint64_t mem[2] = { 0 }, v = 1, got = 0;
	struct hw h = { .emu = e, .x = 0x77 };
	struct oms_mr *m;
	struct oms_rmr r;

	ASSERT_EQ(0, oms_mr_reg(dst, mem, sizeof(mem), OMS_ACCESS_ALL, &m));
	ASSERT_EQ(0, oms_mr_remote(m, &r));
	h.region = r.region;
	/* not from an observer: refused, nothing written */
	EXPECT_EQ(-EPERM, oms_emu_host_write(e, r.region, 8, &h.x, 8));
	EXPECT_EQ(0, mem[1]);
	EXPECT_EQ(-EINVAL, oms_emu_host_write(NULL, r.region, 8, &h.x, 8));
	EXPECT_EQ(-EINVAL, oms_emu_host_write(e, r.region, 8, NULL, 8));
	ASSERT_EQ(0, oms_emu_set_observer(e, host_writes, &h));
	ASSERT_EQ(0, oms_put(src, &r, 0, &v, 8, OMS_STORE_WEAK));
	ASSERT_EQ(0, oms_quiet(src));
	ASSERT_EQ(0, oms_emu_set_observer(e, NULL, NULL));
	EXPECT_EQ(-EINVAL, h.rc[0]);
	EXPECT_EQ(-ERANGE, h.rc[1]);
	EXPECT_EQ(-EINVAL, h.rc[2]);
	EXPECT_EQ(0, h.rc[3]);
	/* the good write landed, and a get through the device reads it */
	EXPECT_EQ(0x77, mem[1]);
	ASSERT_EQ(0, oms_get(src, &got, &r, 8, 8, OMS_READ_ACQUIRE));
	ASSERT_EQ(0, oms_quiet(src));
	EXPECT_EQ(0x77, got);
	oms_mr_dereg(m);
	oms_ctx_destroy(src);
	oms_ctx_destroy(dst);
	EXPECT_EQ(0, oms_emu_destroy(e));
}

/* Contexts naming no device still meet on the default one, apart from
 * the program's own devices. */
TEST(default_device_is_apart)
{
	struct oms_emu *e = make_emu(_metadata, NULL);
	struct oms_ctx *own = make_ctx(_metadata, e, 1);
	struct oms_ctx_attr a = oms_ctx_attr_default();
	struct oms_ctx *d0 = NULL, *d1 = NULL;
	uint64_t mem = 0;
	struct oms_mr *m;
	struct oms_listener *l;
	struct oms_rmr r;

	a.comp_mask = OMS_CTX_ATTR_BACKEND | OMS_CTX_ATTR_NODE;
	a.backend = OMS_BACKEND_EMU;
	a.node = 0;
	ASSERT_EQ(0, oms_ctx_create(&a, &d0));
	a.node = 1;
	ASSERT_EQ(0, oms_ctx_create(&a, &d1));
	ASSERT_EQ(0, oms_mr_reg(own, &mem, 8, OMS_ACCESS_ALL, &m));
	ASSERT_EQ(0, oms_listen(own, NULL, "7482", m, &l));
	EXPECT_EQ(-ECONNREFUSED, oms_connect(d0, "localhost", "7482", 0, &r));
	oms_listener_close(l);
	oms_mr_dereg(m);
	ASSERT_EQ(0, oms_mr_reg(d1, &mem, 8, OMS_ACCESS_ALL, &m));
	ASSERT_EQ(0, oms_listen(d1, NULL, "7482", m, &l));
	EXPECT_EQ(0, oms_connect(d0, "localhost", "7482", 0, &r));
	oms_listener_close(l);
	oms_mr_dereg(m);
	oms_ctx_destroy(d0);
	oms_ctx_destroy(d1);
	oms_ctx_destroy(own);
	EXPECT_EQ(0, oms_emu_destroy(e));
}

/* Bad attributes and arguments: a clear error, and nothing made. */
TEST(bad_input_changes_nothing)
{
	struct oms_emu *const sentinel = (struct oms_emu *)&sentinel;
	struct oms_emu *e = sentinel, *good;
	struct oms_emu_attr ea;
	struct oms_ctx_attr ca;
	struct oms_ctx *c = NULL;
	unsigned char big[sizeof(ea) + 8];

#define EMU_REFUSED(err, ...) do {					\
		ea = (struct oms_emu_attr){ .size = sizeof(ea), __VA_ARGS__ }; \
		EXPECT_EQ(err, oms_emu_create(&ea, &e));		\
		EXPECT_EQ(sentinel, e);					\
	} while (0)
	EMU_REFUSED(-EINVAL, .comp_mask = 1u << 31);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_LATENCY,
		    .link_gbps = 0);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_LATENCY,
		    .link_gbps = 100, .lat_bus_ns = 2000000);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_LATENCY,
		    .link_gbps = 100, .time_scale = 2000000);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_READ_ORDER,
		    .read_order = 9, .rlsq_entries = 256);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_READ_ORDER,
		    .rlsq_entries = 0);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_READ_ORDER,
		    .rlsq_entries = 8192);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_NIC_RATE,
		    .lat_req_ns = 2000000);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_FLAGS, .flags = 8);
	/* the CPU charge needs the latency model */
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_FLAGS,
		    .flags = OMS_EMU_F_CHARGE_CPU);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_FLAGS, .reserved = 1);
	/* reserved is reserved whichever bits comp_mask has */
	EMU_REFUSED(-EINVAL, .reserved = 1);
	EMU_REFUSED(-EINVAL, .comp_mask = OMS_EMU_ATTR_CHAOS, .reserved = 1);
	/* too short to hold comp_mask's fields */
	ea = (struct oms_emu_attr){ .size = 4 };
	EXPECT_EQ(-EINVAL, oms_emu_create(&ea, &e));
	ea = (struct oms_emu_attr){
		.size = offsetof(struct oms_emu_attr, lat_bus_ns),
		.comp_mask = OMS_EMU_ATTR_LATENCY,
	};
	EXPECT_EQ(-EINVAL, oms_emu_create(&ea, &e));
	/* a newer caller's field this library does not know */
	memset(big, 0, sizeof(big));
	ea = (struct oms_emu_attr){ .size = sizeof(big) };
	memcpy(big, &ea, sizeof(ea));
	big[sizeof(ea) + 3] = 1;
	EXPECT_EQ(-E2BIG, oms_emu_create((struct oms_emu_attr *)big, &e));
	EXPECT_EQ(sentinel, e);
	EXPECT_EQ(-EINVAL, oms_emu_create(NULL, NULL));
#undef EMU_REFUSED

	EXPECT_EQ(-EINVAL, oms_emu_destroy(NULL));
	EXPECT_EQ(-EINVAL, oms_emu_stop(NULL));
	EXPECT_EQ(-EINVAL, oms_emu_freeze(NULL, 1));
	EXPECT_EQ(-EINVAL, oms_emu_set_observer(NULL, NULL, NULL));

	/* A context naming a device may not configure a device too. */
	good = make_emu(_metadata, NULL);
#define CTX_REFUSED(setup) do {						\
		ca = oms_ctx_attr_default();				\
		ca.comp_mask = OMS_CTX_ATTR_EMU;			\
		ca.emu = good;						\
		setup;							\
		EXPECT_EQ(-EINVAL, oms_ctx_create(&ca, &c));		\
		EXPECT_EQ(NULL, c);					\
	} while (0)
	CTX_REFUSED(ca.emu = NULL);
	/* liboms.so.1's device bits and NO_HOLD flag */
	CTX_REFUSED(ca.comp_mask |= 1u << 4);
	CTX_REFUSED(ca.comp_mask |= 1u << 5);
	CTX_REFUSED(ca.comp_mask |= 1u << 6);
	CTX_REFUSED(ca.comp_mask |= 1u << 9);
	CTX_REFUSED(ca.comp_mask |= OMS_CTX_ATTR_FLAGS; ca.flags = 1u << 2);
	CTX_REFUSED(ca.comp_mask |= OMS_CTX_ATTR_FLAGS;
		    ca.flags = OMS_CTX_F_HOLD_GLOBAL);
	CTX_REFUSED(ca.comp_mask |= OMS_CTX_ATTR_BACKEND;
		    ca.backend = OMS_BACKEND_VERBS);
	CTX_REFUSED(ca.size = offsetof(struct oms_ctx_attr, emu));
#undef CTX_REFUSED
	/* none of the refusals took a reference: destroy is free to go */
	EXPECT_EQ(0, oms_emu_destroy(good));
}

TEST_HARNESS_MAIN
