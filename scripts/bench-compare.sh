#!/bin/sh
# Compare this tree's benchmarks with an older revision's, in one run:
# build REV's bench/engine, bench/mmio_tx and bench/kvs_get (kvs_get --local,
# on the emulated device) next to ours, run the two trees' binaries one
# after the other ROUNDS times, and print, for every result row, the
# median figure of each tree and their ratio (new over old, as speed:
# above 1 is faster).  Alternating the trees inside one run is what makes
# a 5 % difference readable on a noisy 2-core machine; a row whose ratio
# is below 1 - TOL is marked slower, above 1 + TOL faster.
#
# usage: scripts/bench-compare.sh REV [ROUNDS]    (make bench-compare REV=...)
# env:   TOL (default 0.05), OUT (default build/compare/REV.json: every
#        record, with "tree":"old"|"new" added)
set -eu
rev=${1:?usage: $0 REV [ROUNDS]}
rounds=${2:-5}
tol=${TOL:-0.05}
case $rounds in '' | *[!0-9]* | 0) echo "bench-compare: ROUNDS must be a positive integer" >&2; exit 2 ;; esac
sha=$(git rev-parse --verify -q "$rev^{commit}") ||
	{ echo "bench-compare: $rev is not a commit" >&2; exit 2; }
short=$(git rev-parse --short "$sha")
old=build/compare/$short
out=${OUT:-build/compare/$short.json}
benches="engine mmio_tx kvs_get"

# The old tree: its own sources, built by its own Makefile.
if [ ! -f "$old/.built" ]; then
	rm -rf "$old"
	mkdir -p "$old"
	git archive "$sha" | tar -x -C "$old"
	make -C "$old" -s $(for b in $benches; do echo "build/bench/$b"; done) >&2
	touch "$old/.built"
fi
make -s $(for b in $benches; do echo "build/bench/$b"; done) >&2

# What each tree runs: flags both trees take, short cells.
run() {	# run DIR
	"$1/build/bench/engine" -n 2000000 --json
	"$1/build/bench/mmio_tx" -s 64,256,1024,4096 --ms 100 --reps 3 \
		--verify-mib 0 --json
	"$1/build/bench/kvs_get" --local -D 1 --threads 2 \
		--proto single,validation,farm --json 2>/dev/null
}

: >"$out"
i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	echo "bench-compare: round $i of $rounds" >&2
	for t in old new; do
		d=$old
		[ $t = new ] && d=.
		run "$d" | grep '^{' | sed "s/^{/{\"tree\":\"$t\",\"round\":$i,/" >>"$out"
	done
done

# One row per result: its key, and a figure where higher is better.
awk -v tol="$tol" -v rev="$short" '
	function str(k,   m) {
		if (match($0, "\"" k "\":\"[^\"]*\"")) {
			m = substr($0, RSTART, RLENGTH)
			sub(/^"[^"]*":"/, "", m); sub(/"$/, "", m)
			return m
		}
		return ""
	}
	function num(k,   m) {
		if (match($0, "\"" k "\":[-0-9.eE+]+")) {
			m = substr($0, RSTART, RLENGTH)
			sub(/^"[^"]*":/, "", m)
			return m + 0
		}
		return ""
	}
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		b = str("bench"); t = str("tree")
		if (b == "engine") {
			key = "engine " str("op"); unit = "Mops (1/ns)"
			v = num("ns_per_op"); v = v > 0 ? 1000 / v : 0
		} else if (b == "mmio_tx") {
			key = "mmio_tx " str("mode") " " num("size") " B"; unit = "Gb/s"
			v = num("gbps")
		} else if (b == "kvs_get") {
			key = "kvs_get " str("proto") " " num("size") " B x" num("threads")
			unit = "M gets/s"; v = num("mops")
		} else
			next
		if (!(key in seen)) { seen[key] = 1; order[++nk] = key; units[key] = unit }
		n = ++cnt[key, t]; val[key, t, n] = v
	}
	END {
		printf "# new tree (this checkout) against %s: median of each tree, ratio new/old (higher is faster)\n", rev
		printf "%-34s %-12s %12s %12s %8s\n", "#result", "unit", "old", "new", "ratio"
		slow = fast = 0
		for (k = 1; k <= nk; k++) {
			key = order[k]
			no = cnt[key, "old"]; nn = cnt[key, "new"]
			if (!no || !nn) {
				printf "%-34s %-12s %s\n", key, units[key], \
				       "  <- missing in the run of the " (no ? "new" : "old") " tree"
				slow++
				continue
			}
			for (i = 1; i <= no; i++) a[i] = val[key, "old", i]
			mo = median(a, no)
			for (i = 1; i <= nn; i++) a[i] = val[key, "new", i]
			mn = median(a, nn)
			r = mo > 0 ? mn / mo : 0
			mark = r < 1 - tol ? "  <- slower by over " tol * 100 "%" : \
			       (r > 1 + tol ? "  (faster by over " tol * 100 "%)" : "")
			if (r < 1 - tol) slow++
			else if (r > 1 + tol) fast++
			printf "%-34s %-12s %12.4g %12.4g %8.3f%s\n", key, units[key], mo, mn, r, mark
		}
		printf "# %d of %d rows slower by over %g%% or missing, %d faster\n", slow, nk, tol * 100, fast
	}' "$out"
