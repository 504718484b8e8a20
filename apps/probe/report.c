// SPDX-License-Identifier: MIT
/*
 * oms_probe's report: one table row and one JSON record per result, and
 * the observer loop the verbs server and the emu target share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

struct probe_result *probe_add(struct probe_report *rep, const char *target,
			       const char *name, const char *litmus,
			       const char *pattern, enum probe_rule rule)
{
	struct probe_result *r;

	if (rep->n >= PROBE_MAX_RESULTS)
		return NULL;
	r = &rep->r[rep->n++];
	memset(r, 0, sizeof(*r));
	r->target = target;
	r->name = name;
	r->litmus = litmus ? litmus : "";
	r->pattern = pattern;
	r->rule = rule;
	return r;
}

const char *probe_verdict(const struct probe_result *r)
{
	if (!r->measured)
		return "n/a";
	if (r->rule == PR_INFO)
		return r->value[0] ? r->value : "measured";
	if (!r->checks)
		return "not observed (no checks)";
	if (!r->violations)
		return "in order (observed)";
	return r->rule == PR_REQUIRED ? "VIOLATED" : "reorders";
}

unsigned probe_failures(const struct probe_report *rep)
{
	unsigned i, n = 0;

	for (i = 0; i < rep->n; i++)
		n += rep->r[i].measured && rep->r[i].rule == PR_REQUIRED &&
		     rep->r[i].violations;
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double probe_median(uint64_t *v, unsigned n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return n & 1 ? (double)v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static const char *const rule_names[] = {
	[PR_ALLOWED] = "allowed", [PR_REQUIRED] = "required",
	[PR_INFO] = "info",
};

void probe_print(const struct probe_report *rep, struct ba *ba, int quiet)
{
	char pat[256], val[256], note[400], verdict[256];
	const char *last = "";
	unsigned i;

	for (i = 0; i < rep->n; i++) {
		const struct probe_result *r = &rep->r[i];

		if (!quiet && strcmp(last, r->target)) {
			printf("\n# target %s\n", r->target);
			printf("%-22s %-5s %-9s %9s %9s %11s  %s\n", "probe",
			       "id", "rule", "checks", "violated", "cost ns",
			       "verdict");
			last = r->target;
		}
		if (!quiet) {
			printf("%-22s %-5s %-9s ", r->name, r->litmus,
			       rule_names[r->rule]);
			if (r->measured && r->rule != PR_INFO)
				printf("%9llu %9llu ",
				       (unsigned long long)r->checks,
				       (unsigned long long)r->violations);
			else
				printf("%9s %9s ", "-", "-");
			if (r->cost_ns > 0)
				printf("%11.0f  ", r->cost_ns);
			else
				printf("%11s  ", "-");
			printf("%s%s%s\n", probe_verdict(r),
			       r->note[0] ? "  # " : "", r->note);
		}
		if (!ba_json_on(ba))
			continue;
		ba_json_string(pat, sizeof(pat), r->pattern);
		ba_json_string(val, sizeof(val), r->value);
		ba_json_string(note, sizeof(note), r->note);
		ba_json_string(verdict, sizeof(verdict), probe_verdict(r));
		ba_json(ba, "\"target\":\"%s\",\"probe\":\"%s\",\"litmus\":\"%s\","
			"\"pattern\":%s,\"rule\":\"%s\",\"measured\":%s,"
			"\"rounds\":%llu,\"checks\":%llu,\"violations\":%llu,"
			"\"cost_ns\":%.1f,\"value\":%s,\"verdict\":%s,"
			"\"note\":%s", r->target, r->name, r->litmus, pat,
			rule_names[r->rule], r->measured ? "true" : "false",
			(unsigned long long)r->rounds,
			(unsigned long long)r->checks,
			(unsigned long long)r->violations, r->cost_ns, val,
			verdict, note);
	}
}

void probe_war_count(struct probe_result *r, const uint64_t *got,
		     unsigned n, uint64_t first)
{
	unsigned k;

	for (k = 0; k < n; k++) {
		r->checks++;
		r->violations += got[k] >= first + k;
	}
	r->rounds += n;
}

int probe_cost_done(struct probe_result *r, uint64_t *t, unsigned n,
		    int err)
{
	if (!err) {
		r->cost_ns = probe_median(t, n);
		r->rounds = n;
		r->measured = 1;
	}
	free(t);
	return err;
}

int probe_run_all(struct probe_report *rep, const char *target,
		  const struct probe_def *defs, unsigned n,
		  const struct probe_ops *ops, void *rig,
		  const struct probe_opts *o)
{
	unsigned i;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		const struct probe_def *d = &defs[i];
		struct probe_result *r = probe_add(rep, target, d->name,
						   d->litmus, d->pattern,
						   d->rule);

		if (!r)
			return -ENOSPC;
		err = ops->run[d->kind](rig, o, d->arg, r);
		if (err)
			fprintf(stderr, "%s: %s %s: %s\n", probe_prog, target,
				d->name, strerror(-err));
	}
	return err;
}

void *pb_observe(void *arg)
{
	struct pb_observer *o = arg;
	volatile uint64_t *b = o->base;
	uint64_t last = 0;

	while (!o->stop) {
		if (o->watch == PW_FLAG_DATA) {
			uint64_t f = __atomic_load_n(&b[PB_FLAG_OFF / 8],
						     __ATOMIC_ACQUIRE);
			uint64_t d0, d7;

			if (f == last)
				continue;
			last = f;
			d0 = __atomic_load_n(&b[PB_DATA_OFF / 8],
					     __ATOMIC_ACQUIRE);
			d7 = __atomic_load_n(&b[PB_DATA_OFF / 8 + 7],
					     __ATOMIC_ACQUIRE);
			o->checks++;
			o->violations += d0 < f || d7 < f;
		} else {
			uint64_t l = __atomic_load_n(
				&b[(PB_WIN_OFF + PB_WIN_LEN) / 8 - 1],
				__ATOMIC_ACQUIRE);
			uint64_t f0;

			if (l == last)
				continue;
			last = l;
			f0 = __atomic_load_n(&b[PB_WIN_OFF / 8],
					     __ATOMIC_ACQUIRE);
			o->checks++;
			o->violations += f0 < l;
		}
	}
	return NULL;
}
