// SPDX-License-Identifier: MIT
/*
 * The benchmarks' argument layer (bench/bench_args.h): a table of options
 * turned into getopt_long's, every value checked against its option's
 * type and range, one usage text made from the same table, and the JSON
 * records with their metadata.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_args.h"
#include "oms.h"

#define BA_MAX_OPTS	64	/* bits of ba->seen */
#define BA_NCOMMON	3	/* --json, --out_json, --help */
#define BA_COL		26	/* where the help text starts */
#define BA_WIDTH	79

/* Every benchmark has these, after its own. */
static void common_opts(struct ba *ba, struct ba_opt *c)
{
	c[0] = (struct ba_opt){ .long_name = "json", .type = BA_FLAG,
		.dst = &ba->json, .roles = ba->record_roles,
		.help = "one JSON object per result on stdout, no table" };
	c[1] = (struct ba_opt){ .long_name = "out_json", .type = BA_STRING,
		.metavar = "FILE", .dst = &ba->out_json,
		.roles = ba->record_roles,
		.help = "also write the JSON objects to FILE" };
	c[2] = (struct ba_opt){ .short_name = 'h', .long_name = "help",
		.type = BA_FLAG, .help = "this text; runs nothing" };
}

/* ---- the option list: the benchmark's, then the common ones ---------- */

struct ba_list {
	const struct ba_opt *o[BA_MAX_OPTS];
	unsigned n;
	struct ba_opt common[BA_NCOMMON];
};

static void list_make(struct ba *ba, struct ba_list *l)
{
	l->n = 0;
	for (unsigned i = 0; i < ba->nopts && l->n < BA_MAX_OPTS - BA_NCOMMON;
	     i++)
		l->o[l->n++] = &ba->opts[i];
	common_opts(ba, l->common);
	for (unsigned i = 0; i < BA_NCOMMON; i++)
		l->o[l->n++] = &l->common[i];
}

static int takes_value(const struct ba_opt *o)
{
	return o->type != BA_FLAG;
}

/* "-s/--size" or "--bind": how messages name @o. */
static const char *opt_name(const struct ba_opt *o, char *buf, size_t len)
{
	if (o->short_name)
		snprintf(buf, len, "-%c/--%s", o->short_name, o->long_name);
	else
		snprintf(buf, len, "--%s", o->long_name);
	return buf;
}

/* ---- roles ------------------------------------------------------------- */

static const char *const role_tag[BA_NROLES] = { "server", "client", "local" };
static const char *const role_how[BA_NROLES] = {
	"give no HOST", "give a HOST", "--local",
};
static const char *const role_run[BA_NROLES] = {
	"the server (no HOST given)", "a client (a HOST given)",
	"--local (both sides in this process)",
};
static const char *const role_form[BA_NROLES] = {
	"[--server] [options]", "[options] HOST", "--local [options]",
};

/* The roles @ba has (BA_SERVER...), 0 for a program without. */
static unsigned roles_of(const struct ba *ba)
{
	unsigned have = 0;

	for (unsigned r = 0; r < BA_NROLES; r++)
		if (ba->role_help[r])
			have |= 1u << r;
	return have;
}

/* The roles of @ba that take @o: those it names, or every one. */
static unsigned opt_roles(const struct ba *ba, const struct ba_opt *o)
{
	unsigned have = roles_of(ba);

	return o->roles & have ? o->roles & have : have;
}

static void cat(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Which roles take an option of @mask, and how to be in one: "a client
 * option (give a HOST, or --local)". */
static void role_words(unsigned mask, char *buf, size_t len)
{
	const char *noun = mask & BA_SERVER ? "server" :
			   mask & BA_CLIENT ? "client" : NULL;

	buf[0] = 0;
	if ((mask & (BA_SERVER | BA_CLIENT)) == (BA_SERVER | BA_CLIENT)) {
		cat(buf, len, "a server and client option, not --local's");
		return;
	}
	if (!noun) {
		cat(buf, len, "a --local option");
		return;
	}
	cat(buf, len, "a %s option (", noun);
	for (unsigned r = 0, k = 0; r < BA_NROLES; r++)
		if (mask & (1u << r))
			cat(buf, len, "%s%s", k++ ? ", or " : "", role_how[r]);
	cat(buf, len, ")");
}

/* --help's tag of an option not every role takes: "[client, local] ";
 * none on the options that choose the role. */
static void role_tag_of(const struct ba *ba, const struct ba_opt *o,
			char *buf, size_t len)
{
	unsigned mask = opt_roles(ba, o);

	buf[0] = 0;
	if (mask == roles_of(ba) || !strcmp(o->long_name, "server") ||
	    !strcmp(o->long_name, "local") ||
	    (ba->positional && !strcmp(o->long_name, ba->positional)))
		return;
	cat(buf, len, "[");
	for (unsigned r = 0, k = 0; r < BA_NROLES; r++)
		if (mask & (1u << r))
			cat(buf, len, "%s%s", k++ ? ", " : "", role_tag[r]);
	cat(buf, len, "] ");
}

/* The short synopsis: the tool's, or one made of its roles. */
static const char *synopsis(const struct ba *ba, char *buf, size_t len)
{
	unsigned have = roles_of(ba);

	if (ba->synopsis || !have)
		return ba->synopsis ? ba->synopsis : "[options]";
	buf[0] = 0;
	cat(buf, len, "[");
	if (have & BA_SERVER)
		cat(buf, len, "--server");
	if (have & BA_CLIENT)
		cat(buf, len, "%sHOST", buf[1] ? " | " : "");
	if (have & BA_LOCAL)
		cat(buf, len, "%s--local", buf[1] ? " | " : "");
	cat(buf, len, "] [options]");
	return buf;
}

/* ---- what an option takes, for --help and for refusals ---------------- */

static void cat(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static void cat_names(char *buf, size_t len, const char *const *names)
{
	for (unsigned i = 0; names[i]; i++)
		cat(buf, len, "%s%s", i ? ", " : "", names[i]);
}

static void cat_uint_rules(char *buf, size_t len, const struct ba_opt *o)
{
	cat(buf, len, "%llu..%llu", (unsigned long long)o->min,
	    (unsigned long long)o->max);
	if (o->step > 1)
		cat(buf, len, ", a multiple of %u", o->step);
	if (o->flags & BA_POW2)
		cat(buf, len, ", a power of two");
}

/* What @o takes, e.g. "a whole number in 1..64". */
static void describe(const struct ba_opt *o, char *buf, size_t len)
{
	buf[0] = 0;
	switch (o->type) {
	case BA_FLAG:
		cat(buf, len, "no value");
		break;
	case BA_UINT:
		cat(buf, len, "a whole number in ");
		cat_uint_rules(buf, len, o);
		break;
	case BA_SIZE:
		cat(buf, len, "bytes in ");
		cat_uint_rules(buf, len, o);
		cat(buf, len, "; K, M, G suffixes");
		break;
	case BA_SIZES:
		cat(buf, len, "a comma list of up to %u sizes in bytes, each ",
		    o->max_items);
		cat_uint_rules(buf, len, o);
		cat(buf, len, "; K, M, G suffixes");
		break;
	case BA_UINTS:
		cat(buf, len, "a comma list of up to %u whole numbers, each ",
		    o->max_items);
		cat_uint_rules(buf, len, o);
		break;
	case BA_DOUBLE:
		cat(buf, len, "a number in %g..%g", o->dmin, o->dmax);
		break;
	case BA_STRING:
		cat(buf, len, "text, not empty nor starting with '-'");
		break;
	case BA_CHOICE:
		cat(buf, len, "one of ");
		cat_names(buf, len, o->names);
		break;
	case BA_SET:
		cat(buf, len, "a comma set of ");
		cat_names(buf, len, o->names);
		cat(buf, len, ", or all");
		break;
	}
}

/* The default @o shows: its text, else what dst holds before parsing. */
static void current(const struct ba_opt *o, char *buf, size_t len)
{
	buf[0] = 0;
	if (o->dflt) {
		cat(buf, len, "%s", o->dflt);
		return;
	}
	if (!o->dst)
		return;
	switch (o->type) {
	case BA_FLAG:
		cat(buf, len, "%s", *(const int *)o->dst ? "on" : "off");
		break;
	case BA_UINT:
	case BA_SIZE:
		cat(buf, len, "%llu", o->flags & BA_U64 ?
		    (unsigned long long)*(const uint64_t *)o->dst :
		    (unsigned long long)*(const uint32_t *)o->dst);
		break;
	case BA_SIZES:
	case BA_UINTS:
		for (uint32_t i = 0; i < *o->count; i++)
			cat(buf, len, "%s%u", i ? "," : "",
			    ((const uint32_t *)o->dst)[i]);
		break;
	case BA_DOUBLE:
		cat(buf, len, "%g", *(const double *)o->dst /
		    (o->scale ? o->scale : 1));
		break;
	case BA_STRING:
		cat(buf, len, "%s", *(const char *const *)o->dst ?
		    *(const char *const *)o->dst : "none");
		break;
	case BA_CHOICE:
		cat(buf, len, "%s", o->names[*(const uint32_t *)o->dst]);
		break;
	case BA_SET:
		for (unsigned i = 0, k = 0; o->names[i]; i++)
			if (*(const uint32_t *)o->dst & (1u << i))
				cat(buf, len, "%s%s", k++ ? "," : "",
				    o->names[i]);
		break;
	}
}

/* ---- --help ------------------------------------------------------------ */

/* @text from column @col (already reached), wrapped at BA_WIDTH; each
 * line after the first starts at @indent. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
	const char *p = text;

	while (*p) {
		const char *sp = strchr(p, ' ');
		int w = sp ? (int)(sp - p) : (int)strlen(p);

		if (col > indent && col + 1 + w > BA_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", w, p);
		col += w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

static void help_line(FILE *f, const struct ba *ba, const struct ba_opt *o)
{
	char left[96], text[1024], what[512], dflt[256], tag[64];
	int col;

	snprintf(left, sizeof(left), "  %c%c%c --%s%s%s",
		 o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
		 o->short_name ? ',' : ' ', o->long_name,
		 takes_value(o) ? " " : "",
		 takes_value(o) ? (o->metavar ? o->metavar : "X") : "");
	col = fprintf(f, "%s", left);
	if (col >= BA_COL) {
		fprintf(f, "\n");
		col = 0;
	}
	fprintf(f, "%*s", BA_COL - col, "");
	/* a flag's default is off, text is any text: nothing to say */
	what[0] = dflt[0] = 0;
	if (o->type != BA_STRING && takes_value(o))
		describe(o, what, sizeof(what));
	if (o->type != BA_FLAG)
		current(o, dflt, sizeof(dflt));
	role_tag_of(ba, o, tag, sizeof(tag));
	snprintf(text, sizeof(text), "%s%s", tag, o->help);
	if (what[0] || dflt[0]) {
		cat(text, sizeof(text), " (");
		if (what[0])
			cat(text, sizeof(text), "%s%s", what,
			    dflt[0] ? "; " : "");
		if (dflt[0])
			cat(text, sizeof(text), "default %s", dflt);
		cat(text, sizeof(text), ")");
	}
	if (o->alias)
		cat(text, sizeof(text), "; also --%s", o->alias);
	/* first word on the column itself */
	wrap(f, text, BA_COL, BA_COL);
}

/* A usage line per role: its form, then what it does. */
static void help_roles(const struct ba *ba)
{
	int col = 0, w;

	for (unsigned r = 0; r < BA_NROLES; r++)
		if (ba->role_help[r]) {
			w = (int)(strlen(ba->prog) + strlen(role_form[r]));
			col = w > col ? w : col;
		}
	col += (int)strlen("usage: ") + 3;
	for (unsigned r = 0, k = 0; r < BA_NROLES; r++) {
		if (!ba->role_help[r])
			continue;
		w = printf("%s%s %s", k++ ? "       " : "usage: ", ba->prog,
			   role_form[r]);
		printf("%*s", col - w, "");
		wrap(stdout, ba->role_help[r], col, col);
	}
}

static void help(struct ba *ba, const struct ba_list *l)
{
	char syn[128];

	if (roles_of(ba))
		help_roles(ba);
	else
		printf("usage: %s %s\n", ba->prog,
		       synopsis(ba, syn, sizeof(syn)));
	if (ba->about)
		printf("%s\n", ba->about);
	printf("\n");
	for (unsigned i = 0; i < l->n; i++)
		help_line(stdout, ba, l->o[i]);
	if (ba->epilog)
		printf("\n%s\n", ba->epilog);
}

/* ---- values ------------------------------------------------------------ */

/* Decimal digits, then an optional K, M or G when @suffix. */
static int parse_uint(const char *s, int suffix, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (suffix && *end) {
		static const char units[] = "KMG";
		const char *u = strchr(units, *end & ~0x20);
		unsigned shift;

		if (!u || end[1])
			return -1;
		shift = 10 * (unsigned)(u - units + 1);
		if (v > (~0ull >> shift))
			return -1;
		v <<= shift;
		end++;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int uint_ok(const struct ba_opt *o, uint64_t v)
{
	return v >= o->min && v <= o->max && (o->step <= 1 || !(v % o->step)) &&
	       (!(o->flags & BA_POW2) || !(v & (v - 1)));
}

static int set_uint(const struct ba_opt *o, const char *s)
{
	uint64_t v;

	if (parse_uint(s, o->type == BA_SIZE, &v) || !uint_ok(o, v))
		return -1;
	if (o->flags & BA_U64)
		*(uint64_t *)o->dst = v;
	else
		*(uint32_t *)o->dst = (uint32_t)v;
	return 0;
}

static int set_double(const struct ba_opt *o, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < o->dmin ||
	    v > o->dmax)
		return -1;
	*(double *)o->dst = v * (o->scale ? o->scale : 1);
	return 0;
}

static int name_index(const char *const *names, const char *s, size_t len)
{
	for (int i = 0; names[i]; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], s, len))
			return i;
	return -1;
}

/*
 * Split @s at commas and call @item on each; an empty item (",", "a,,b",
 * "") refuses the whole value: an empty set measures nothing.
 */
static int each_item(const struct ba_opt *o, const char *s, void *acc,
		     int (*item)(const struct ba_opt *, const char *, size_t,
				 void *))
{
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);

		if (!len || item(o, s, len, acc))
			return -1;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

static int set_item(const struct ba_opt *o, const char *s, size_t len,
		    void *acc)
{
	uint32_t *mask = acc;
	int i;

	if (len == 3 && !strncmp(s, "all", 3)) {
		for (i = 0; o->names[i]; i++)
			*mask |= 1u << i;
		return 0;
	}
	i = name_index(o->names, s, len);
	if (i < 0)
		return -1;
	*mask |= 1u << i;
	return 0;
}

struct sizes_acc {
	uint32_t v[64], n;
};

static int size_item(const struct ba_opt *o, const char *s, size_t len,
		     void *acc)
{
	struct sizes_acc *a = acc;
	char tmp[32];
	uint64_t v;

	if (len >= sizeof(tmp) || a->n >= o->max_items ||
	    a->n >= sizeof(a->v) / sizeof(a->v[0]))
		return -1;
	memcpy(tmp, s, len);
	tmp[len] = 0;
	if (parse_uint(tmp, o->type == BA_SIZES, &v) || !uint_ok(o, v))
		return -1;
	a->v[a->n++] = (uint32_t)v;
	return 0;
}

/* Store @s into @o's variable; -1 if @o does not take it. */
static int set_value(const struct ba_opt *o, const char *s)
{
	uint32_t mask = 0;
	struct sizes_acc sz = { .n = 0 };
	int i;

	switch (o->type) {
	case BA_FLAG:
		if (o->dst)
			*(int *)o->dst = 1;
		return 0;
	case BA_UINT:
	case BA_SIZE:
		return set_uint(o, s);
	case BA_DOUBLE:
		return set_double(o, s);
	case BA_STRING:
		/* "--client --json": the next flag taken for the value */
		if (!*s || *s == '-')
			return -1;
		*(const char **)o->dst = s;
		return 0;
	case BA_CHOICE:
		i = name_index(o->names, s, strlen(s));
		if (i < 0)
			return -1;
		*(uint32_t *)o->dst = (uint32_t)i;
		return 0;
	case BA_SET:
		if (each_item(o, s, &mask, set_item))
			return -1;
		*(uint32_t *)o->dst = mask;
		return 0;
	case BA_SIZES:
	case BA_UINTS:
		if (each_item(o, s, &sz, size_item))
			return -1;
		memcpy(o->dst, sz.v, sz.n * sizeof(sz.v[0]));
		*o->count = sz.n;
		return 0;
	}
	return -1;
}

/* ---- refusals ---------------------------------------------------------- */

static int vfail(const struct ba *ba, const char *fmt, va_list ap)
{
	char syn[128];

	fprintf(stderr, "%s: ", ba->prog);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nusage: %s %s ('%s --help' lists every option)\n",
		ba->prog, synopsis(ba, syn, sizeof(syn)), ba->prog);
	return 2;
}

int ba_fail(const struct ba *ba, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vfail(ba, fmt, ap);
	va_end(ap);
	/* refused after ba_parse() opened --out_json: leave no empty file
	 * behind, as a refusal during the parse does not */
	if (ba->jf)
		unlink(ba->out_json);
	return r;
}

void ba_err(const struct ba *ba, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", ba->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int bad_value(const struct ba *ba, const struct ba_opt *o,
		     const char *val)
{
	char name[80], what[512];

	describe(o, what, sizeof(what));
	return ba_fail(ba, "%s: '%s' refused: it takes %s",
		       opt_name(o, name, sizeof(name)), val, what);
}

/* At most one option of each group. */
static int check_groups(const struct ba *ba, const struct ba_list *l)
{
	char a[80], b[80];

	for (unsigned i = 0; i < l->n; i++) {
		const struct ba_opt *x = l->o[i];

		if (!x->group || !(ba->seen & (1ull << i)))
			continue;
		for (unsigned k = i + 1; k < l->n; k++)
			if (l->o[k]->group == x->group &&
			    ba->seen & (1ull << k))
				return ba_fail(ba,
					"%s and %s exclude each other",
					opt_name(x, a, sizeof(a)),
					opt_name(l->o[k], b, sizeof(b)));
	}
	return BA_GO_ON;
}

/* The index in @ba's table of the option named @long_name, or -1. */
static int opt_find(const struct ba *ba, const char *long_name)
{
	for (unsigned k = 0; k < ba->nopts && k < BA_MAX_OPTS - BA_NCOMMON;
	     k++)
		if (!strcmp(ba->opts[k].long_name, long_name))
			return (int)k;
	return -1;
}

/*
 * The run's role, from what was given: the positional option (a HOST)
 * makes a client, --local the local run, neither the server; then every
 * option given must be one its role takes.
 */
static int check_roles(struct ba *ba, const struct ba_list *l)
{
	int host = ba->positional ? opt_find(ba, ba->positional) : -1;
	int local = opt_find(ba, "local");
	char name[80], words[160];
	unsigned r;

	ba->role = 0;
	if (!roles_of(ba))
		return BA_GO_ON;
	if (host >= 0 && ba->seen & (1ull << host))
		ba->role = BA_CLIENT;
	else if (local >= 0 && ba->seen & (1ull << local))
		ba->role = BA_LOCAL;
	else
		ba->role = BA_SERVER;
	for (unsigned i = 0; i < l->n; i++) {
		const struct ba_opt *o = l->o[i];

		if (!(ba->seen & (1ull << i)) || opt_roles(ba, o) & ba->role)
			continue;
		r = (unsigned)__builtin_ctz(ba->role);
		role_words(opt_roles(ba, o), words, sizeof(words));
		return ba_fail(ba, "%s is %s; this run is %s",
			       opt_name(o, name, sizeof(name)), words,
			       role_run[r]);
	}
	return BA_GO_ON;
}

/* ---- parsing ----------------------------------------------------------- */

struct ba_getopt {
	struct option lo[2 * BA_MAX_OPTS + 1];
	char shorts[3 * BA_MAX_OPTS + 2];
};

static void getopt_tables(const struct ba_list *l, struct ba_getopt *g)
{
	unsigned k = 0, s = 0;

	g->shorts[s++] = ':';	/* a missing value returns ':' */
	for (unsigned i = 0; i < l->n; i++) {
		const struct ba_opt *o = l->o[i];
		int has = takes_value(o) ? required_argument : no_argument;

		g->lo[k++] = (struct option){ o->long_name, has, NULL,
					      256 + (int)i };
		if (o->alias)
			g->lo[k++] = (struct option){ o->alias, has, NULL,
						      256 + (int)i };
		if (o->short_name) {
			g->shorts[s++] = o->short_name;
			if (has == required_argument)
				g->shorts[s++] = ':';
		}
	}
	g->lo[k] = (struct option){ NULL, 0, NULL, 0 };
	g->shorts[s] = 0;
}

/* The index in @l of what getopt_long returned, or -1. */
static int opt_index(const struct ba_list *l, int c)
{
	if (c >= 256 && c < 256 + (int)l->n)
		return c - 256;
	for (unsigned i = 0; i < l->n; i++)
		if (l->o[i]->short_name && l->o[i]->short_name == c)
			return (int)i;
	return -1;
}

/* The option getopt_long found without its value (optopt), by name. */
static int missing_value(const struct ba *ba, const struct ba_list *l,
			 int c)
{
	int i = opt_index(l, c);
	char name[80], what[512];

	if (i < 0)
		return ba_fail(ba, "an option lacks its value");
	describe(l->o[i], what, sizeof(what));
	return ba_fail(ba, "%s needs a value: %s",
		       opt_name(l->o[i], name, sizeof(name)), what);
}

/* getopt_long's '?': an unknown option, or a value given to a flag. */
static int unknown(const struct ba *ba, const struct ba_list *l,
		   const char *arg)
{
	int i = optopt >= 256 ? opt_index(l, optopt) : -1;
	char name[80];

	if (i >= 0)
		return ba_fail(ba, "%s takes no value",
			       opt_name(l->o[i], name, sizeof(name)));
	if (optopt)
		return ba_fail(ba, "unknown option '-%c'", optopt);
	return ba_fail(ba, "unknown option '%s'", arg);
}


static void make_meta(struct ba *ba)
{
	char host[256] = "?", h[300], k[300];
	struct utsname u;

	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "?");
	host[sizeof(host) - 1] = 0;
	if (uname(&u))
		strcpy(u.release, "?");
	ba_json_string(h, sizeof(h), host);
	ba_json_string(k, sizeof(k), u.release);
	snprintf(ba->meta, sizeof(ba->meta),
		 "\"liboms\":\"%s\",\"host\":%s,\"kernel\":%s", oms_version(),
		 h, k);
}

static int open_out_json(struct ba *ba)
{
	if (!ba->out_json)
		return BA_GO_ON;
	ba->jf = fopen(ba->out_json, "w");
	if (!ba->jf)
		return ba_fail(ba, "--out_json: cannot write '%s': %s",
			       ba->out_json, strerror(errno));
	return BA_GO_ON;
}

void ba_set_prog(struct ba *ba, const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	ba->prog = slash && slash[1] ? slash + 1 :
		   argv0 && argv0[0] ? argv0 : ba->name;
}

int ba_parse(struct ba *ba, int argc, char **argv)
{
	static struct ba_getopt g;
	struct ba_list l;
	int c, li, r;

	ba_set_prog(ba, argc > 0 ? argv[0] : NULL);
	list_make(ba, &l);
	getopt_tables(&l, &g);
	ba->seen = 0;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, g.shorts, g.lo, &li)) != -1) {
		int i = opt_index(&l, c);

		if (c == ':')
			return missing_value(ba, &l, optopt);
		if (c == '?' || i < 0)
			return unknown(ba, &l, argv[optind - 1]);
		if (l.o[i] == &l.common[2]) {
			help(ba, &l);
			return 0;
		}
		if (set_value(l.o[i], optarg))
			return bad_value(ba, l.o[i], optarg);
		ba->seen |= 1ull << i;
	}
	if (optind < argc && ba->positional && optind + 1 == argc) {
		/* perftest's server host: the option's value, as if given */
		int i = -1;

		for (unsigned k = 0; k < ba->nopts; k++)
			if (!strcmp(ba->opts[k].long_name, ba->positional))
				i = (int)k;
		if (i < 0)
			return ba_fail(ba, "unexpected argument '%s'",
				       argv[optind]);
		if (ba->seen & (1ull << i))
			return ba_fail(ba, "'%s' and --%s %s: one host only",
				       argv[optind], ba->positional,
				       *(const char **)ba->opts[i].dst);
		for (unsigned k = 0; k < ba->nopts && ba->opts[i].group; k++)
			if (ba->opts[k].group == ba->opts[i].group &&
			    ba->seen & (1ull << k))
				return ba_fail(ba, "'%s' (a HOST: this run a "
					       "client) and --%s exclude each "
					       "other", argv[optind],
					       ba->opts[k].long_name);
		if (set_value(&ba->opts[i], argv[optind]))
			return bad_value(ba, &ba->opts[i], argv[optind]);
		ba->seen |= 1ull << i;
		optind++;
	}
	if (optind < argc)
		return ba_fail(ba, "unexpected argument '%s'", argv[optind]);
	r = check_groups(ba, &l);
	if (r == BA_GO_ON)
		r = check_roles(ba, &l);
	if (r != BA_GO_ON)
		return r;
	if (ba->json && ba_seen(ba, "report_gbits"))
		return ba_fail(ba, "--report_gbits sets the table's unit, and "
			       "--json prints no table (its records carry "
			       "Gb/s)");
	make_meta(ba);
	return open_out_json(ba);
}

int ba_seen(const struct ba *ba, const char *long_name)
{
	int i = opt_find(ba, long_name);

	return i >= 0 && ba->seen & (1ull << i);
}

int ba_only_if(const struct ba *ba, const char *const *names, int ok,
	       const char *why)
{
	char name[80];

	for (unsigned k = 0; names[k] && !ok; k++) {
		int i = opt_find(ba, names[k]);

		if (i >= 0 && ba->seen & (1ull << i))
			return ba_fail(ba, "%s %s", opt_name(&ba->opts[i],
				       name, sizeof(name)), why);
	}
	return BA_GO_ON;
}

/* ---- JSON records ------------------------------------------------------ */

void ba_json_string(char *buf, size_t len, const char *s)
{
	size_t n = 0;

	buf[n++] = '"';
	for (; *s && n + 8 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)ch;
		} else if (ch < 0x20) {
			n += (size_t)snprintf(buf + n, len - n, "\\u%04x", ch);
		} else {
			buf[n++] = (char)ch;
		}
	}
	buf[n++] = '"';
	buf[n] = 0;
}

void ba_set_backend(struct ba *ba, const char *backend)
{
	ba->backend = backend;
}

void ba_json(struct ba *ba, const char *fmt, ...)
{
	char prog[96], be[96], when[32];
	struct tm tm;
	time_t now = time(NULL);
	char *body = NULL;
	va_list ap;
	int n;

	if (!ba_json_on(ba))
		return;
	va_start(ap, fmt);
	n = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	ba_json_string(prog, sizeof(prog), ba->name);
	ba_json_string(be, sizeof(be), ba->backend ? ba->backend : "none");
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	for (int k = 0; k < 2; k++) {
		FILE *f = k ? ba->jf : ba->json ? stdout : NULL;

		if (!f)
			continue;
		fprintf(f, "{\"bench\":%s,%s,%s,\"backend\":%s,"
			"\"timestamp\":\"%s\"}\n", prog, body, ba->meta, be,
			when);
		fflush(f);
	}
	free(body);
}

int ba_close(struct ba *ba)
{
	int bad;

	if (!ba->jf)
		return 0;
	bad = ferror(ba->jf) | fclose(ba->jf);
	ba->jf = NULL;
	if (bad)
		fprintf(stderr, "%s: --out_json %s: not all written\n",
			ba->prog, ba->out_json);
	return !!bad;
}

int ba_rdma_apply(struct ba *ba, const struct ba_rdma *r, int emulated)
{
	int dev = ba_seen(ba, "ib-dev"), port = ba_seen(ba, "ib-port");
	int gid = ba_seen(ba, "gid-index");
	char num[16];

	if (!dev && !port && !gid)
		return BA_GO_ON;
	if (emulated)
		return ba_fail(ba, "%s names an RDMA device, but the run is on the "
			       "emulated device (--local, --backend emu, "
			       "OMS_BACKEND=emu)",
			       dev ? "-d/--ib-dev" : port ? "-i/--ib-port" :
			       "-x/--gid-index");
	if (dev)
		setenv("OMS_DEVICE", r->dev, 1);
	if (port) {
		snprintf(num, sizeof(num), "%u", r->port);
		setenv("OMS_PORT", num, 1);
	}
	if (gid) {
		snprintf(num, sizeof(num), "%u", r->gid_index);
		setenv("OMS_GID_INDEX", num, 1);
	}
	return BA_GO_ON;
}

/* ---- why a run with a peer cannot go on --------------------------------- */

const char ba_rdma_hint[] =
	"load the NIC's driver and install rdma-core and ibverbs-providers, "
	"or make one with Soft-RoCE (sudo modprobe rdma_rxe; sudo rdma link "
	"add rxe0 type rxe netdev IFACE)";

int ba_rdma_present(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	int found = 0;

	while (d && !found && (e = readdir(d)))
		found = e->d_name[0] != '.';
	if (d)
		closedir(d);
	return found;
}

int ba_resolve(const struct ba *ba, const char *host)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int gai = getaddrinfo(host, NULL, &hints, &res);

	if (!gai) {
		freeaddrinfo(res);
		return 0;
	}
	ba_err(ba, "cannot resolve %s (%s): check the name, or give an "
	       "address", host, gai_strerror(gai));
	return 1;
}

/* What to do about @why (oms_caps.backend_why) of an emulated device
 * chosen for want of a usable RDMA device. */
static const char *emu_why_hint(const char *why)
{
	return strstr(why, "rdma-core") ? "install rdma-core and "
	       "ibverbs-providers" : ba_rdma_hint;
}

int ba_peer_ready(const struct ba *ba, const char *host, uint32_t backend)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	int server = ba->role == BA_SERVER;

	if (ba->role == BA_CLIENT && ba_resolve(ba, host))
		return 1;
	if (!server && ba->role != BA_CLIENT)
		return 0;
	if (backend == OMS_BACKEND_VERBS)
		return 0;
	/* asked for: a client's connect says the rest */
	if (backend == OMS_BACKEND_EMU || ba_env_is("OMS_BACKEND", "emu")) {
		if (server)
			ba_err(ba, "warning: the server runs on the emulated "
			       "device, which no other host (nor process) can "
			       "reach: clients elsewhere need an RDMA device "
			       "here; both sides in one process, --local");
		return 0;
	}
	/* a choice that fails is oms_ctx_create()'s to report */
	if (oms_query_caps(NULL, &caps) || caps.backend != OMS_BACKEND_EMU)
		return 0;
	ba_err(ba, "%s: %s on liboms's emulated device would %s; %s; or run "
	       "both sides in this process with --local", caps.backend_why,
	       server ? "a server" : "a client", server ? "be reached by "
	       "nothing outside this process" : "reach only servers in this "
	       "process", emu_why_hint(caps.backend_why));
	return 1;
}

void ba_ctx_failed(const struct ba *ba, int err, uint32_t backend)
{
	struct oms_caps caps = { .size = sizeof(caps) };
	int hint = err == -ENODEV && !ba_rdma_present();

	/* why, without a context: what the default would choose */
	oms_query_caps(NULL, &caps);
	if (backend == OMS_BACKEND_VERBS && caps.backend != OMS_BACKEND_VERBS)
		snprintf(caps.backend_why, sizeof(caps.backend_why), "%s",
			 "--backend verbs, but there is no RDMA device in "
			 "/sys/class/infiniband");
	ba_err(ba, "no context: %s%s%s%s%s", strerror(-err),
	       caps.backend_why[0] ? ": " : "", caps.backend_why,
	       hint && !strstr(caps.backend_why, "Soft-RoCE") ? "; " : "",
	       hint && !strstr(caps.backend_why, "Soft-RoCE") ?
	       ba_rdma_hint : "");
}

void ba_connect_failed(const struct ba *ba, const char *host,
		       const char *port, int err, const char *backend)
{
	ba_err(ba, "cannot connect to %s:%s: %s", host, port, strerror(-err));
	if (err == -ENODEV && !ba_rdma_present())
		ba_err(ba, "no RDMA device in /sys/class/infiniband: %s",
		       ba_rdma_hint);
	else if ((err == -EHOSTUNREACH || err == -ENOENT) &&
		 !ba_resolve(ba, host))
		ba_err(ba, "no route from this host's RDMA device to %s: "
		       "check the link and the address it has", host);
	else if (err == -ECONNREFUSED && !strcmp(backend, "emu"))
		ba_err(ba, "the emulated device reaches servers in this "
		       "process only: use --local, or an RDMA device: %s",
		       ba_rdma_hint);
	else if (err == -ECONNREFUSED)
		ba_err(ba, "no server listening at %s:%s (connection "
		       "refused): start '%s' (no HOST: the server) there, on "
		       "port %s", host, port, ba->prog, port);
	else if (err == -ETIMEDOUT)
		ba_err(ba, "%s:%s did not answer in time: is '%s' (no HOST: "
		       "the server) running there, on port %s, and the link "
		       "up?", host, port, ba->prog, port);
}
