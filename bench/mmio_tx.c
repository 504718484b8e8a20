// SPDX-License-Identifier: MIT
/*
 * mmio_tx: the paper's Fig 4 (seed 004) on this machine, through liboms'
 * transmit queue.  Messages of SIZE bytes written into a 256 KiB
 * write-combining window with non-temporal stores, in three modes:
 *
 *   unfenced   OMS_TX_WEAK: no fence (order lost across messages)
 *   fenced     OMS_TX_STRONG: a store fence before every message
 *   sequenced  OMS_TX_SEQUENCED: no fence; 8 bytes of (thread, sequence
 *              number, framing, check) in every 64-byte chunk
 *   raw        reference only: the bare non-temporal copy, no format
 *
 * Two passes per point:
 *   producer   the queue free-runs over the window as over a BAR whose
 *              device keeps up: Gb/s written = bytes stored into the window
 *              / producer time; payload Gb/s = packet bytes carried / time.
 *              Median of --reps runs of at least -D seconds each.
 *   verified   the same queue with credits; a consumer thread on the other
 *              core plays the NIC: it reads what was published, passes the
 *              chunks through the model of the path to the device (each
 *              chunk may be overtaken by up to --reorder later ones, never
 *              across a fence), restores order (the reorder buffer, for
 *              sequenced), and checks every packet: its index is the next
 *              one and its bytes are the ones sent.  verified Gb/s = payload
 *              delivered whole and in order / wall time.  The producer
 *              publishes (one fence) every quarter of the window.
 *
 * Windows (--window): process memory (mem, the default), or the oms.ko
 * window (kmod: in a guest or on a host with the module attached), reached
 * on two paths (--paths): mapped, the queue storing into the module's
 * write-combining mapping of the BAR, and ioctl, the queue handing the
 * module OMS_IOC_ORDERED_STORE vectors (oms_tx_window_kmod_ioctl).  The
 * ioctl path's verified pass reads the BAR through the mapping, so it
 * checks what the module stored.  raw runs on the mapped path only.
 *
 * usage: mmio_tx [-s SIZES | -a] [--modes m,..] [-D SEC | --ms N] [--reps N]
 *                [--verify-mib N] [--reorder N] [--payload-check]
 *                [--window mem|kmod] [--paths mapped,ioctl] [--oms-dev PATH]
 *                [--dat FILE] [--json] [--out_json FILE]
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "bench_args.h"
#include "bench_util.h"
#include "oms_tx.h"
#include "util/barrier.h"

#define WINDOW		(256u << 10)
#define NSRC		16
#define MAX_SIZES	16

enum mode { M_RAW, M_UNFENCED, M_FENCED, M_SEQ, M_COUNT };
enum path { P_MAPPED, P_IOCTL, P_COUNT };
enum window { W_MEM, W_KMOD };

static const char *const path_name[P_COUNT + 1] = { "mapped", "ioctl", NULL };
static const char *const window_name[] = { "mem", "kmod", NULL };

static const char *const mode_name[M_COUNT + 1] = {
	"raw", "unfenced", "fenced", "sequenced", NULL,
};
static const unsigned mode_cls[M_COUNT] = {
	OMS_TX_WEAK, OMS_TX_WEAK, OMS_TX_STRONG, OMS_TX_SEQUENCED,
};

struct opts {
	int json, pcheck;
	int gbits;		/* --report_gbits */
	unsigned sizes[MAX_SIZES], nsizes;
	int modes[M_COUNT];
	unsigned ms, reps, reorder, batch;
	unsigned every[MAX_SIZES], nevery;	/* Fig 10: fence intervals */
	uint64_t verify_bytes;
	const char *dat;
	/* as the command line gives them */
	uint32_t mode_set, verify_mib;
	double dur_s;
	uint32_t window, path_set;
	const char *oms_dev;
};

struct point {
	double gbps, payload_gbps, verified_gbps, coupled_gbps;
	uint64_t msgs, fences, syscalls, vmsgs, ooo, lost, corrupted, dropped;
	size_t payload;
	int verified;		/* a verified pass ran */
};

static uint8_t *src_buf[NSRC];
/* win[P_MAPPED] is always open: the ioctl path is verified through it */
static struct oms_tx_window *win[P_COUNT];

/* ---- raw reference: the bare streaming copy ---- */

#if defined(__x86_64__)
__attribute__((target("avx2")))
static void raw_copy_avx2(uint8_t *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i += 64) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(src + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(src + i + 32));

		_mm256_stream_si256((__m256i *)(dst + i), a);
		_mm256_stream_si256((__m256i *)(dst + i + 32), b);
	}
}

static void raw_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	if (__builtin_cpu_supports("avx2")) {
		raw_copy_avx2(dst, src, n);
		return;
	}
	for (size_t i = 0; i < n; i += 16)
		_mm_stream_si128((__m128i *)(dst + i),
				 _mm_loadu_si128((const __m128i *)(src + i)));
}

#else
static void raw_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	memcpy(dst, src, n);
}

#endif

/* the same named barrier the strong class uses */
static void raw_fence(void)
{
	oms_barrier_wc_drain();
}

static double gbps(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes * 8.0 / (double)ns : 0.0;
}

static void stamp(uint8_t *b, uint64_t idx)
{
	memcpy(b, &idx, 8);
}

/* ---- producer pass ---- */

/* @every: 0, or (unfenced) a fence after every @every messages, the
 * paper's Fig 10; such a pass sends one message per call. */
static int producer_pass(enum path pa, enum mode m, unsigned size,
			 const struct opts *o, unsigned every,
			 double *wire_gbps, double *pay_gbps, struct point *pt)
{
	uint64_t min_ns = (uint64_t)o->ms * 1000000ull, t0, t1, n = 0;
	uint8_t *base = oms_tx_window_base(win[pa]);
	struct oms_tx_queue *q = NULL;
	struct oms_tx_stats st;
	size_t len;
	unsigned batch = (1u << 20) / size;

	if (m == M_RAW) {
		uint64_t off = 0;

		len = size;
		t0 = bu_now_ns();
		do {
			for (unsigned i = 0; i < batch; i++, n++) {
				raw_copy(base + off, src_buf[n % NSRC], size);
				off = (off + size) % WINDOW;
			}
			t1 = bu_now_ns();
		} while (t1 - t0 < min_ns);
		raw_fence();
		t1 = bu_now_ns();
		*wire_gbps = gbps(n * size, t1 - t0);
		*pay_gbps = *wire_gbps;
		pt->msgs = n;
		pt->fences = 1;
		pt->syscalls = 0;
		return 0;
	}
	{
		struct oms_tx_queue_attr qa = {
			.cls = mode_cls[m], .max_msg = size, .length = WINDOW,
			.flags = OMS_TX_Q_NO_CREDIT |
				 (o->pcheck ? OMS_TX_Q_PAYLOAD_CHECK : 0),
		};

		if (oms_tx_queue_create(win[pa], &qa, &q))
			return -1;
	}
	len = oms_tx_payload_max(mode_cls[m], size);
	if (o->batch > 1 && !every) {
		/* twice round the sources: any run of o->batch is contiguous */
		struct iovec iov[2 * NSRC];

		for (unsigned i = 0; i < 2 * NSRC; i++)
			iov[i] = (struct iovec){ .iov_base = src_buf[i % NSRC],
						 .iov_len = len };
		batch -= batch % o->batch;
		if (!batch)
			batch = o->batch;
		t0 = bu_now_ns();
		do {
			for (unsigned i = 0; i < batch; i += o->batch) {
				if (oms_tx_send_batch(q, iov + n % NSRC,
						      o->batch) != (int)o->batch)
					return -1;
				n += o->batch;
			}
			t1 = bu_now_ns();
		} while (t1 - t0 < min_ns);
		goto flush;
	}
	t0 = bu_now_ns();
	do {
		/*
		 * No stamp here, as in the raw pass: an 8-byte store just
		 * before a 32-byte load of the same bytes cannot be
		 * forwarded and stalls the load (about a third of the time
		 * of a 64 B message, docs/mmio-tx.md).  The verified pass
		 * stamps every message.
		 */
		for (unsigned i = 0; i < batch; i++, n++) {
			uint8_t *s = src_buf[n % NSRC];

			if (oms_tx_send(q, s, len))
				return -1;
			if (every && !((n + 1) % every) && oms_tx_flush(q) < 0)
				return -1;
		}
		t1 = bu_now_ns();
	} while (t1 - t0 < min_ns);
flush:
	if (oms_tx_flush(q) < 0)
		return -1;
	t1 = bu_now_ns();
	oms_tx_stats(q, &st);
	*wire_gbps = gbps(st.wire_bytes, t1 - t0);
	*pay_gbps = gbps(st.payload_bytes, t1 - t0);
	pt->msgs = st.msgs;
	pt->fences = st.fences;
	pt->syscalls = st.syscalls;
	oms_tx_queue_destroy(q);
	return 0;
}

/* ---- verified pass ---- */

struct verifier {
	uint64_t expect, in_order_bytes, in_order, ooo, bad;
	size_t len;
};

static void verify(void *arg, unsigned thread, const void *msg, size_t len)
{
	struct verifier *v = arg;
	const uint8_t *b = msg;
	uint64_t idx;

	(void)thread;
	if (len != v->len || len < 8) {
		v->bad++;
		return;
	}
	memcpy(&idx, b, 8);
	/* bytes 8.. of a source buffer never change; 0..7 carry the index */
	if (memcmp(b + 8, src_buf[idx % NSRC] + 8, len - 8)) {
		v->bad++;
		return;
	}
	if (idx == v->expect) {
		v->in_order++;
		v->in_order_bytes += len;
		v->expect++;
	} else {
		v->ooo++;
		if (idx > v->expect)
			v->expect = idx + 1;
	}
}

struct consumer {
	struct oms_tx_queue *q;
	const void *ring;	/* where the device sees the queue's ring */
	struct oms_tx_nic *nic;
	struct oms_tx_fabric fab;
	uint64_t final;		/* position to stop at, set when known */
	int stop;
	uint64_t end_ns;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Wait politely: these machines have two cores and other work on them. */
static void cpu_relax(void)
{
	static __thread unsigned spins;

#if defined(__x86_64__)
	_mm_pause();
#endif
	if (++spins % 64 == 0)
		sched_yield();
}

static void unpin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	uint64_t done = 0, ring = oms_tx_ring_chunks(c->q);

	for (;;) {
		uint64_t p = oms_tx_published(c->q);

		if (p == done) {
			if (__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE) &&
			    p == __atomic_load_n(&c->final, __ATOMIC_ACQUIRE))
				break;
			cpu_relax();
			continue;
		}
		c->fab.seed += 1;
		if (oms_tx_nic_drain(c->nic, 0, c->ring, ring, done, p,
				     &c->fab) < 0)
			abort();
		done = p;
		oms_tx_credit(c->q, done + ring);
	}
	c->end_ns = bu_now_ns();
	return NULL;
}

/* The messages of @iov, through the call the run measures: how many went
 * (a batch may stop short at the end of the credit), or -errno. */
static int send_some(struct oms_tx_queue *q, const struct iovec *iov,
		     unsigned n)
{
	int r;

	if (n > 1)
		return oms_tx_send_batch(q, iov, n);
	r = oms_tx_send(q, iov[0].iov_base, iov[0].iov_len);
	return r ? r : 1;
}

static int verified_pass(enum path pa, enum mode m, unsigned size,
			 const struct opts *o, struct point *pt)
{
	struct oms_tx_queue_attr qa = {
		.cls = mode_cls[m], .max_msg = size, .length = WINDOW,
		.flags = o->pcheck ? OMS_TX_Q_PAYLOAD_CHECK : 0,
	};
	struct verifier v = { 0 };
	struct consumer c = { 0 };
	struct oms_tx_nic_stats ns;
	struct oms_tx_nic *nic;
	struct oms_tx_queue *q;
	struct oms_tx_stats st;
	uint64_t nmsg = o->verify_bytes / size, busy = 0, t0, tw, pub_every;
	uint64_t last_pub = 0;
	pthread_t th;
	size_t len = oms_tx_payload_max(mode_cls[m], size);

	if (oms_tx_queue_create(win[pa], &qa, &q))
		return -1;
	{
		struct oms_tx_nic_attr na = {
			.format = m == M_SEQ ? OMS_TX_FMT_SEQ : OMS_TX_FMT_PLAIN,
			.nthreads = 1, .slot_chunks = oms_tx_slot_chunks(q),
			.region_len = WINDOW, .deliver = verify, .arg = &v,
		};

		if (oms_tx_nic_create(&na, &nic))
			return -1;
	}
	v.len = len;
	c.q = q;
	/* the ring at offset 0, as the device holds it: the ioctl path's own
	 * ring is the process copy the module reads from */
	c.ring = oms_tx_window_base(win[P_MAPPED]);
	c.nic = nic;
	c.fab.seed = 0x5eed0000u + size * 4 + m;
	c.fab.reorder = o->reorder;
	pub_every = oms_tx_ring_chunks(q) / 4;
	/* the scheduler places both threads: pinning loses when another
	 * process holds one of the two cores */
	unpin();
	if (pthread_create(&th, NULL, consumer_main, &c))
		return -1;
	t0 = bu_now_ns();
	tw = t0;
	for (uint64_t n = 0; n < nmsg;) {
		unsigned b = nmsg - n < o->batch ? (unsigned)(nmsg - n) : o->batch;
		struct iovec iov[NSRC];
		int r;

		/* one source per message of the call: each has its stamp */
		for (unsigned i = 0; i < b; i++) {
			iov[i] = (struct iovec){ .iov_base = src_buf[(n + i) % NSRC],
						 .iov_len = len };
			stamp(iov[i].iov_base, n + i);
		}
		r = send_some(q, iov, b);
		if (r == -EAGAIN) {
			/* out of credit: publish, wait for the consumer */
			busy += bu_now_ns() - tw;
			if (oms_tx_flush(q) < 0)
				return -1;
			last_pub = oms_tx_pos(q);
			while ((r = send_some(q, iov, b)) == -EAGAIN)
				cpu_relax();
			tw = bu_now_ns();
		}
		if (r <= 0)
			return -1;
		n += (unsigned)r;	/* a short batch: the rest goes next */
		if (oms_tx_pos(q) - last_pub >= pub_every) {
			if (oms_tx_flush(q) < 0)
				return -1;
			last_pub = oms_tx_pos(q);
		}
	}
	if (oms_tx_flush(q) < 0)
		return -1;
	busy += bu_now_ns() - tw;
	__atomic_store_n(&c.final, oms_tx_pos(q), __ATOMIC_RELEASE);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	pin(0);
	oms_tx_stats(q, &st);
	oms_tx_nic_stats(nic, &ns);
	pt->verified = 1;
	pt->verified_gbps = gbps(v.in_order_bytes, c.end_ns - t0);
	pt->coupled_gbps = gbps(st.wire_bytes, busy);
	pt->vmsgs = v.in_order;
	pt->ooo = v.ooo;
	pt->lost = nmsg - v.in_order - v.ooo - v.bad;
	pt->corrupted = v.bad + ns.corrupted;
	pt->dropped = ns.duplicate + ns.stale + ns.out_of_window + ns.malformed;
	oms_tx_nic_destroy(nic);
	oms_tx_queue_destroy(q);
	return 0;
}

/* ---- driver ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct opts args = {
	.sizes = { 64, 128, 256, 512, 1024, 2048, 4096, 8192 }, .nsizes = 8,
	.mode_set = (1u << M_COUNT) - 1, .dur_s = 0.1, .reps = 3,
	.reorder = 16, .verify_mib = 64, .window = W_MEM, .batch = 1,
	.path_set = (1u << P_COUNT) - 1,
};

static const struct ba_opt opts[] = {
	{ 's', "size", "sizes", BA_SIZES, "SIZES",
	  "bytes written per message", args.sizes, .min = 64, .max = 8192,
	  .step = 64, .count = &args.nsizes, .max_items = MAX_SIZES,
	  .group = 1 },
	{ 'a', "all", NULL, BA_FLAG, NULL,
	  "every size, 64 B - 8 KiB (what runs without -s)", .group = 1 },
	{ 0, "modes", NULL, BA_SET, "MODES", "transmit modes", &args.mode_set,
	  .names = mode_name },
	{ 'D', "duration", NULL, BA_DOUBLE, "SEC",
	  "each producer run lasts at least this", &args.dur_s, .dmin = 0.001,
	  .dmax = 100, .group = 2 },
	{ 0, "ms", NULL, BA_DOUBLE, "N", "the same in milliseconds",
	  &args.dur_s, .dmin = 1, .dmax = 100000, .scale = 1e-3, .group = 2 },
	{ 0, "reps", NULL, BA_UINT, "N", "producer runs per point (median)",
	  &args.reps, .min = 1, .max = 99 },
	{ 0, "verify-mib", NULL, BA_UINT, "N",
	  "MiB per verified pass (0: none)", &args.verify_mib, .min = 0,
	  .max = 65536 },
	{ 0, "reorder", NULL, BA_UINT, "N",
	  "verified: chunks a chunk may be overtaken by", &args.reorder,
	  .min = 0, .max = 64 },
	{ 0, "batch", NULL, BA_UINT, "N",
	  "messages per call: 1 oms_tx_send(), more oms_tx_send_batch()",
	  &args.batch, .min = 1, .max = NSRC },
	{ 0, "fence-every", NULL, BA_SIZES, "LIST",
	  "also unfenced with a fence after every N messages (Fig 10), for "
	  "each N", args.every, .min = 1, .max = 4096, .step = 1,
	  .count = &args.nevery, .max_items = MAX_SIZES },
	{ 0, "payload-check", NULL, BA_FLAG, NULL,
	  "the queue checks every payload", .dst = &args.pcheck },
	{ 0, "window", NULL, BA_CHOICE, "W",
	  "process memory, or the oms.ko window (/dev/oms, a BAR)",
	  &args.window, .names = window_name },
	{ 0, "paths", NULL, BA_SET, "PATHS",
	  "kmod window: stores into its mapping, or OMS_IOC_ORDERED_STORE",
	  &args.path_set, .names = path_name },
	{ 0, "oms-dev", NULL, BA_STRING, "PATH",
	  "the oms.ko node for --window kmod", .dst = &args.oms_dev,
	  .dflt = "/dev/oms" },
	{ 0, "dat", NULL, BA_STRING, "FILE", "gnuplot columns into FILE",
	  .dst = &args.dat },
	BA_OPT_REPORT_GBITS(&args.gbits, 0),
};

static struct ba ba = {
	.name = "mmio_tx", .opts = opts,
	.nopts = sizeof(opts) / sizeof(opts[0]),
	.about = "MMIO transmit into a write-combining window "
		 "(ASPLOS'26 paper, Fig 4):\nunfenced, fence per message and "
		 "sequenced, with the transmit receiver verifying order.",
};

/* What the table filled, in the form the passes use. */
static void settle(void)
{
	for (int m = 0; m < M_COUNT; m++)
		args.modes[m] = !!(args.mode_set & (1u << m));
	args.ms = (unsigned)llround(args.dur_s * 1000);
	args.verify_bytes = (uint64_t)args.verify_mib << 20;
	if (args.window == W_MEM)
		args.path_set = 1u << P_MAPPED;
}

/* What to do about a window oms_tx_window_kmod() refused. */
static const char *kmod_hint(int err)
{
	switch (err) {
	case -ENOENT:
		return "oms.ko is not loaded: sudo insmod kmod/oms.ko "
		       "(after make kmod), or sudo make dkms-install";
	case -EACCES:
		return "the device file is root's and group oms's: sudo usermod "
		       "-aG oms $USER and log in again (or the window has "
		       "MSI-X holes: attach another BAR)";
	case -ENODEV:
		return "no window is attached: load oms.ko with pci= and bar=, "
		       "or with no pci= for an emulated window";
	case -ENOSPC:
		return "the window must hold 256 KiB: attach a larger one";
	case -ESTALE:
		return "the window was replaced while opening it: run again";
	default:
		return "see docs/kmod.md";
	}
}

/* The path as the records name it: a memory window has one. */
static const char *path_label(const struct opts *o, int pa)
{
	return o->window == W_MEM ? "mem" : path_name[pa];
}

static int open_windows(const struct opts *o)
{
	int err;

	if (o->window == W_MEM) {
		if (oms_tx_window_mem(WINDOW, &win[P_MAPPED])) {
			ba_err(&ba, "cannot map the window");
			return 1;
		}
		ba_set_backend(&ba, "mem");	/* a window in process memory */
		memset(oms_tx_window_base(win[P_MAPPED]), 0, WINDOW);
		return 0;
	}
	err = oms_tx_window_kmod(o->oms_dev, &win[P_MAPPED]);
	if (!err && oms_tx_window_len(win[P_MAPPED]) < WINDOW)
		err = -ENOSPC;
	if (!err && (o->path_set & (1u << P_IOCTL)))
		err = oms_tx_window_kmod_ioctl(o->oms_dev, &win[P_IOCTL]);
	if (err) {
		/* not the command line's fault: exit 1, as a failed run */
		ba_err(&ba, "--window kmod: %s: %s: %s",
		       o->oms_dev ? o->oms_dev : "/dev/oms", strerror(-err),
		       kmod_hint(err));
		return 1;
	}
	ba_set_backend(&ba, "kmod");
	return 0;
}

static int measure_size(unsigned si, const struct opts *o,
			struct point pts[P_COUNT][M_COUNT])
{
	unsigned size = o->sizes[si];
	double wr[P_COUNT][M_COUNT][99], pay[P_COUNT][M_COUNT][99];

	/* interleave paths and modes so drift hits them alike */
	for (unsigned r = 0; r < o->reps; r++)
		for (int pa = 0; pa < P_COUNT; pa++)
			for (int m = 0; m < M_COUNT; m++) {
				if (!(o->path_set & (1u << pa)) || !o->modes[m] ||
				    (pa == P_IOCTL && m == M_RAW))
					continue;
				if (producer_pass(pa, m, size, o, 0, &wr[pa][m][r],
						  &pay[pa][m][r], &pts[pa][m])) {
					ba_err(&ba, "%s %s %u failed",
					       path_label(o, pa), mode_name[m],
					       size);
					return -1;
				}
			}
	for (int pa = 0; pa < P_COUNT; pa++)
		for (int m = 0; m < M_COUNT; m++) {
			struct point *p = &pts[pa][m];

			if (!(o->path_set & (1u << pa)) || !o->modes[m] ||
			    (pa == P_IOCTL && m == M_RAW))
				continue;
			qsort(wr[pa][m], o->reps, sizeof(double), cmp_double);
			qsort(pay[pa][m], o->reps, sizeof(double), cmp_double);
			p->gbps = wr[pa][m][o->reps / 2];
			p->payload_gbps = pay[pa][m][o->reps / 2];
			p->payload = m == M_RAW ? size :
				     oms_tx_payload_max(mode_cls[m], size);
			if (m != M_RAW && o->verify_bytes &&
			    verified_pass(pa, m, size, o, p)) {
				ba_err(&ba, "verified %s %s %u failed",
				       path_label(o, pa), mode_name[m], size);
				return -1;
			}
		}
	return 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/*
 * Fig 10: the unfenced queue with a fence after every N messages, for
 * each N of --fence-every, beside the same run's unfenced and fenced
 * points (fenced is N = 1 with the fence inside the class).
 */
static int measure_every(unsigned size, const struct opts *o,
			 const struct point pts[P_COUNT][M_COUNT])
{
	double unf = o->modes[M_UNFENCED] ? pts[P_MAPPED][M_UNFENCED].gbps : 0;

	for (unsigned k = 0; k < o->nevery; k++) {
		double wr[99], pay[99];
		struct point p = { 0 };
		double fpm;

		for (unsigned r = 0; r < o->reps; r++)
			if (producer_pass(P_MAPPED, M_UNFENCED, size, o,
					  o->every[k], &wr[r], &pay[r], &p)) {
				ba_err(&ba, "fence every %u, %u B "
				       "failed", o->every[k], size);
				return -1;
			}
		qsort(wr, o->reps, sizeof(double), cmp_double);
		qsort(pay, o->reps, sizeof(double), cmp_double);
		p.gbps = wr[o->reps / 2];
		p.payload_gbps = pay[o->reps / 2];
		fpm = p.msgs ? (double)p.fences / (double)p.msgs : 0;
		ba_json(&ba, "\"mode\":\"fence_every\",\"fence_every\":%u,"
			"\"window\":\"%s\",\"path\":\"%s\",\"size\":%u,"
			"\"msgs\":%llu,\"gbps\":%.6g,\"payload_gbps\":%.6g,"
			"\"ratio_vs_unfenced\":%.3f,\"fences_per_msg\":%.4f,"
			"\"batch\":1",
			o->every[k], window_name[o->window],
			path_label(o, P_MAPPED), size,
			(unsigned long long)p.msgs, p.gbps, p.payload_gbps,
			ratio(p.gbps, unf), fpm);
		if (!o->json)
			printf(" fence/%-4u %-6s %6u %7zu %9.2f %9.2f %9s %7.3f %7s %9.4f %8s %8s\n",
			       o->every[k], path_label(o, P_MAPPED), size,
			       oms_tx_payload_max(OMS_TX_WEAK, size),
			       ba_bw(p.gbps, o->gbits),
			       ba_bw(p.payload_gbps, o->gbits), "-",
			       ratio(p.gbps, unf), "-",
			       fpm, "-", "-");
		fflush(stdout);
	}
	return 0;
}

static void report_size(unsigned size, const struct opts *o,
			struct point pts[P_COUNT][M_COUNT])
{
	const struct point *raw = &pts[P_MAPPED][M_RAW];

	for (int pa = 0; pa < P_COUNT; pa++)
		for (int m = 0; m < M_COUNT; m++) {
			const struct point *p = &pts[pa][m];
			double unf = o->modes[M_UNFENCED] ?
				     pts[pa][M_UNFENCED].gbps : 0;
			double x_unf = ratio(p->gbps, unf);
			double x_raw = o->modes[M_RAW] ? ratio(p->gbps, raw->gbps) : 0;
			double x_map = pa == P_IOCTL && (o->path_set & 1u) ?
				       ratio(p->gbps, pts[P_MAPPED][m].gbps) : 0;
			double fpm = p->msgs ? (double)p->fences / (double)p->msgs : 0;
			double spm = p->msgs ? (double)p->syscalls / (double)p->msgs : 0;
			char ver[16] = "-", ino[24] = "-";

			if (!(o->path_set & (1u << pa)) || !o->modes[m] ||
			    (pa == P_IOCTL && m == M_RAW))
				continue;
			if (p->verified) {
				snprintf(ver, sizeof(ver), "%.2f",
					 ba_bw(p->verified_gbps, o->gbits));
				snprintf(ino, sizeof(ino), "%s",
					 p->ooo || p->lost || p->corrupted ?
					 "NO" : "yes");
			}
			ba_json(&ba, "\"mode\":\"%s\",\"window\":\"%s\",\"path\":\"%s\","
				"\"size\":%u,\"payload\":%zu,\"meta_bytes\":%zu,"
				"\"msgs\":%llu,"
				"\"gbps\":%.6g,\"payload_gbps\":%.6g,"
				"\"verified_gbps\":%.6g,\"coupled_gbps\":%.6g,"
				"\"ratio_vs_unfenced\":%.3f,\"ratio_vs_raw\":%.3f,"
				"\"ratio_vs_mapped\":%.3f,"
				"\"fences_per_msg\":%.4f,\"syscalls_per_msg\":%.5f,"
				"\"verified\":%d,\"verified_msgs\":%llu,"
				"\"out_of_order\":%llu,\"lost\":%llu,"
				"\"corrupted\":%llu,\"dropped\":%llu,"
				"\"reorder\":%u,\"payload_check\":%d,"
				"\"batch\":%u",
				mode_name[m], window_name[o->window],
				path_label(o, pa), size, p->payload,
				size - p->payload,
				(unsigned long long)p->msgs, p->gbps,
				p->payload_gbps,
				p->verified ? p->verified_gbps : 0.0,
				p->verified ? p->coupled_gbps : 0.0, x_unf,
				x_raw, x_map, fpm, spm, p->verified,
				(unsigned long long)p->vmsgs,
				(unsigned long long)p->ooo,
				(unsigned long long)p->lost,
				(unsigned long long)p->corrupted,
				(unsigned long long)p->dropped, o->reorder,
				o->pcheck, o->batch);
			if (!o->json)
				printf(" %-10s %-6s %6u %7zu %9.2f %9.2f %9s %7.3f %7.3f %9.3f %8.4f %8s\n",
				       mode_name[m], path_label(o, pa), size,
				       p->payload, ba_bw(p->gbps, o->gbits),
				       ba_bw(p->payload_gbps, o->gbits), ver,
				       x_unf, x_raw, fpm, spm, ino);
			fflush(stdout);
		}
}

static void summary(const struct opts *o,
		    struct point pts[][P_COUNT][M_COUNT])
{
	for (int pa = 0; pa < P_COUNT; pa++)
		for (unsigned si = 0; si < o->nsizes; si++) {
			const struct point *p = pts[si][pa];

			if (!(o->path_set & (1u << pa)) || p[M_UNFENCED].gbps <= 0)
				continue;
			printf(" %-6s %5u B: sequenced/unfenced %.3f written, %.3f payload;"
			       " fenced/unfenced %.3f; sequenced/raw %.3f\n",
			       path_label(o, pa), o->sizes[si],
			       ratio(p[M_SEQ].gbps, p[M_UNFENCED].gbps),
			       ratio(p[M_SEQ].payload_gbps, p[M_UNFENCED].payload_gbps),
			       ratio(p[M_FENCED].gbps, p[M_UNFENCED].gbps),
			       ratio(p[M_SEQ].gbps, pts[si][P_MAPPED][M_RAW].gbps));
		}
	if ((o->path_set & 3u) == 3u)
		for (unsigned si = 0; si < o->nsizes; si++)
			printf(" ioctl/mapped %5u B: unfenced %.3f, fenced %.3f, sequenced %.3f\n",
			       o->sizes[si],
			       ratio(pts[si][P_IOCTL][M_UNFENCED].gbps,
				     pts[si][P_MAPPED][M_UNFENCED].gbps),
			       ratio(pts[si][P_IOCTL][M_FENCED].gbps,
				     pts[si][P_MAPPED][M_FENCED].gbps),
			       ratio(pts[si][P_IOCTL][M_SEQ].gbps,
				     pts[si][P_MAPPED][M_SEQ].gbps));
}

/* gnuplot columns: size, then each mode's three figures per path, the
 * mapped (or memory) path first so its columns stay where they were. */
static int write_dat(FILE *dat, const struct opts *o,
		     struct point pts[][P_COUNT][M_COUNT])
{
	fprintf(dat, "# size");
	for (int pa = 0; pa < P_COUNT; pa++)
		for (int m = 0; m < M_COUNT; m++)
			if (o->path_set & (1u << pa))
				fprintf(dat, " %s%s%s_gbps %s%s%s_payload_gbps %s%s%s_verified_gbps",
					pa ? path_name[pa] : "", pa ? "_" : "", mode_name[m],
					pa ? path_name[pa] : "", pa ? "_" : "", mode_name[m],
					pa ? path_name[pa] : "", pa ? "_" : "", mode_name[m]);
	fprintf(dat, "\n");
	for (unsigned si = 0; si < o->nsizes; si++) {
		fprintf(dat, "%u", o->sizes[si]);
		for (int pa = 0; pa < P_COUNT; pa++)
			for (int m = 0; m < M_COUNT; m++) {
				const struct point *p = &pts[si][pa][m];

				if (!(o->path_set & (1u << pa)))
					continue;
				if (o->modes[m] && p->msgs)
					fprintf(dat, " %.3f %.3f %.3f", p->gbps,
						p->payload_gbps, p->verified ?
						p->verified_gbps : 0.0);
				else
					fprintf(dat, " NaN NaN NaN");
			}
		fprintf(dat, "\n");
	}
	return fclose(dat) ? -1 : 0;
}

int main(int argc, char **argv)
{
	static struct point pts[MAX_SIZES][P_COUNT][M_COUNT];
	struct opts o;
	FILE *dat = NULL;
	int rc = ba_parse(&ba, argc, argv);

	if (rc != BA_GO_ON)
		return rc;
	/* opened before the run: a path that cannot be written costs no run */
	if (args.dat) {
		dat = fopen(args.dat, "w");
		if (!dat)
			return ba_fail(&ba, "--dat %s: %s", args.dat,
				       strerror(errno));
	}
	if (args.window == W_MEM &&
	    (ba_seen(&ba, "paths") || ba_seen(&ba, "oms-dev")))
		return ba_fail(&ba, "--paths and --oms-dev need --window kmod");
	args.json = ba.json;
	settle();
	o = args;
	rc = open_windows(&o);
	if (rc)
		return rc;
	for (int i = 0; i < NSRC; i++) {
		src_buf[i] = aligned_alloc(64, OMS_TX_MAX_MSG);
		if (!src_buf[i])
			return 1;
		for (unsigned k = 0; k < OMS_TX_MAX_MSG; k++)
			src_buf[i][k] = (uint8_t)(k * 131 + i * 17 + (k >> 7));
	}
	pin(0);
	bu_printf(!o.json,
		  "%s\n MMIO transmit into a %u KiB WC window (%s), non-temporal "
		  "stores, median of %u x %u ms, %u message%s per call\n verified: consumer thread, path "
		  "reorder <= %u chunks, %llu MiB per point%s\n%s\n"
		  " %-10s %-6s %6s %7s %9s %9s %9s %7s %7s %9s %8s %8s\n%s\n",
		  BU_RULE, WINDOW >> 10, window_name[o.window], o.reps, o.ms,
		  o.batch, o.batch > 1 ? "s" : "",
		  o.reorder, (unsigned long long)(o.verify_bytes >> 20),
		  o.pcheck ? ", payload check" : "", BU_RULE, "mode", "path",
		  "size", "payload", o.gbits ? "Gb/s wr" : "MB/s wr",
		  o.gbits ? "Gb/s pay" : "MB/s pay",
		  o.gbits ? "Gb/s ver" : "MB/s ver",
		  "x unfen", "x raw", "fence/msg", "sys/msg", "in-order",
		  BU_RULE);
	for (unsigned si = 0; si < o.nsizes; si++) {
		if (measure_size(si, &o, pts[si]))
			return 1;
		report_size(o.sizes[si], &o, pts[si]);
		if (o.nevery && measure_every(o.sizes[si], &o, pts[si]))
			return 1;
	}
	bu_printf(!o.json, "%s\n", BU_RULE);
	if (!o.json)
		summary(&o, pts);
	if (dat && write_dat(dat, &o, pts))
		return 1;
	for (int i = 0; i < NSRC; i++)
		free(src_buf[i]);
	for (int pa = 0; pa < P_COUNT; pa++)
		oms_tx_window_close(win[pa]);
	return ba_close(&ba);
}
