#!/bin/sh
# The benchmarks' one face (bench/bench_args.h), on the built binaries:
#   --help      exit 0, the usage on stdout naming the flags, nothing run
#               (no JSON, no --out_json file);
#   bad values  a non-number, a value out of range, an unknown choice, an
#               empty set, a missing value, an unknown flag, a stray
#               argument: exit 2, stderr names the flag, nothing run;
#   one tiny real run each with --json and --out_json: every record, on
#               stdout and in the file, carries the metadata;
#   roles       the tools with a peer (perftest's: no HOST the server, a
#               HOST a client, --local both) refuse, before anything runs,
#               every option --help says another role takes: exit 2, and
#               stderr names the option and the run's role;
#   oms_info    --help, --json (a JSON object), nothing else;
#   installed   each benchmark under its installed name (oms_kvs_get):
#               --help's usage and the refusals say that name.
# TAP, the plan last.
#
# usage: sh tests/bench-args.sh BUILD_DIR
set -u
bdir=${1:-build}/bench
top=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# tap, run
. tests/tap-lib.sh

# The built program NAME: the apps (oms_*) in apps/, the benchmarks in
# bench/.
bin() {
	case $1 in
	oms_*) echo "$top/apps/$1" ;;
	*) echo "$bdir/$1" ;;
	esac
}

# A valid value of option --$1, for the role checks: the option must be
# refused for its role, not for its value.
value_of() {
	case $1 in
	zipf) echo 0.5 ;;
	threads|qps|runs|hosts|writers) echo 2 ;;
	duration) echo 1 ;;
	hist|out_json) echo "$tmp/j.json" ;;
	batch|window) echo 8 ;;
	read-pct) echo 50 ;;
	scale|chaos) echo 3 ;;
	order) echo nic ;;
	nic-req-ns) echo 5 ;;
	bind) echo 127.0.0.1 ;;
	op) echo write ;;
	size) echo 64 ;;
	modes) echo quiet ;;
	timeout-ms) echo 1000 ;;
	port) echo 7000 ;;
	targets) echo emu ;;
	rounds) echo 64 ;;
	cost-rounds) echo 5 ;;
	dev) echo /dev/null ;;
	*) return 1 ;;
	esac
}

# The options --help tags with the roles that take them ("[client,
# local] ..."), a line each: NAME METAVAR-or-- ROLES (comma list).
tagged_opts() {
	awk '/^  (-[A-Za-z0-9], |    )--[a-z]/ {
		line = $0
		sub(/^ +(-[A-Za-z0-9], )?/, "", line)
		match(line, /^--[a-z_-]+( [A-Z]+)? */)
		opt = substr(line, 1, RLENGTH)
		rest = substr(line, RLENGTH + 1)
		if (rest == "" && (getline nxt) > 0) {
			rest = nxt
			sub(/^ +/, "", rest)
		}
		n = split(opt, w, " ")
		if (!match(rest, /^\[[a-z, ]+\]/))
			next
		tag = substr(rest, 2, RLENGTH - 2)
		gsub(/ /, "", tag)
		print substr(w[1], 3), (n > 1 ? w[2] : "-"), tag
	}' "$1"
}

# roles_refused TOOL ROLE: every option --help tags without ROLE, given to
# TOOL in ROLE, is refused before anything runs: exit 2, nothing on
# stdout, no --out_json file, and the first line of stderr names the
# option, that it is another role's and the run's role.
roles_refused() {
	rb=$1
	role=$2
	case $role in
	server) rargs="" want="the server" ;;
	client) rargs=nosuchhost.invalid want="a client" ;;
	local) rargs=--local want="--local" ;;
	esac
	run "$rb" --help
	tagged_opts "$tmp/out" >"$tmp/tagged"
	cases=0
	bad=0
	while read -r name meta tags; do
		case ",$tags," in *",$role,"*) continue ;; esac
		val=""
		if [ "$meta" != - ] && ! val=$(value_of "$name"); then
			echo "# no value known for --$name: add it to value_of"
			bad=$((bad + 1))
			continue
		fi
		# shellcheck disable=SC2086
		run "$rb" $rargs "--$name" ${val:+"$val"}
		cases=$((cases + 1))
		if [ $rc -ne 2 ] || [ -s "$tmp/out" ] || [ -e "$tmp/j.json" ] ||
			! head -n 1 "$tmp/err" | grep -q -e \
			"^$rb: [^ ]*--$name[^ ]* is a [^;]*option[^;]*; this run is $want"; then
			echo "# $rb ${rargs:-(no HOST)} --$name $val: exit $rc: $(head -n 1 "$tmp/err")"
			bad=$((bad + 1))
		fi
	done <"$tmp/tagged"
	# the tags were found (a --help that lost them would check nothing)
	[ $bad -eq 0 ] && [ -s "$tmp/tagged" ]
	tap $? "$rb as $want: refuses the $cases options only other roles take, naming each and the role"
}

# --help: 0, a usage on stdout that names @flags, no run, no file
check_help() {
	b=$1
	shift
	run "$b" --json --out_json "$tmp/j.json" --help
	ok=0
	[ $rc -eq 0 ] && [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ] || ok=1
	grep -q "^usage: $b" "$tmp/out" || ok=1
	grep -q '^{' "$tmp/out" && ok=1
	[ -e "$tmp/j.json" ] && ok=1
	for f in --json --out_json --help "$@"; do
		grep -q -e "$f" "$tmp/out" || { echo "# $b --help lacks $f"; ok=1; }
	done
	grep -q 'default' "$tmp/out" || ok=1
	tap $ok "$b --help: exit 0, usage on stdout with every flag, nothing run"
	run "$b" -h
	[ $rc -eq 0 ] && grep -q "^usage: $b" "$tmp/out"
	tap $? "$b -h: exit 0, usage"
}

# check_bad BENCH FLAG ARGS...: exit 2, stderr names FLAG, nothing run
check_bad() {
	b=$1
	flag=$2
	shift 2
	run "$b" "$@" --json --out_json "$tmp/j.json"
	ok=0
	[ $rc -eq 2 ] || ok=1
	# named in the message, not only in a usage text listing every flag
	grep -q -e "^$b: .*$flag" "$tmp/err" || ok=1
	[ -s "$tmp/out" ] && ok=1
	[ -e "$tmp/j.json" ] && ok=1
	tap $ok "$b $*: exit 2 ($rc), stderr names $flag, nothing run"
}

# every JSON record in FILE has the metadata; prints how many there are
records_ok() {
	grep '^{' "$1" >"$tmp/rec"
	[ -s "$tmp/rec" ] || return 1
	for k in bench liboms host kernel backend; do
		grep -v "\"$k\":\"[^\"]" "$tmp/rec" | grep -q . && {
			echo "# a record without \"$k\": $(grep -v "\"$k\":\"[^\"]" "$tmp/rec" | head -n 1)"
			return 1
		}
	done
	grep -Ev '"timestamp":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"' \
		"$tmp/rec" | grep -q . && { echo "# a record without an ISO-8601 UTC timestamp"; return 1; }
	return 0
}

# check_run BENCH ARGS...: one tiny real run, records on stdout and in a file
check_run() {
	b=$1
	shift
	run "$b" "$@" --json --out_json "$tmp/j.json"
	ok=0
	[ $rc -eq 0 ] || ok=1
	records_ok "$tmp/out" || ok=1
	records_ok "$tmp/j.json" || ok=1
	[ "$(grep -c '^{' "$tmp/out")" = "$(grep -c '^{' "$tmp/j.json" 2>/dev/null)" ] || ok=1
	tap $ok "$b $* --json --out_json: exit 0, $(grep -c '^{' "$tmp/out") records, each with its metadata, the same in the file"
}

for b in engine agent kvs_get mmio_tx ordered_read rdma_ops msg_pass dma_pattern; do
	[ -x "$bdir/$b" ] || { tap 1 "$bdir/$b is built"; continue; }
	run "$b" --bogus
	[ $rc -eq 2 ] && grep -q -e "^$b: .*--bogus" "$tmp/err" &&
		[ ! -s "$tmp/out" ]
	tap $? "$b --bogus: exit 2, stderr names it"
done

check_help agent --size --iters --no-order --check --threads
check_bad agent --size -s 12
check_bad agent --size -s 8192
check_bad agent --iters -n 10
# every cell once: puts, gets, acquire gets, unnumbered, numbered, control
run agent -s 64,4096 -n 5000 --no-order --json
ok=0
[ $rc -eq 0 ] && records_ok "$tmp/out" || ok=1
[ "$(grep -c '"numbers":"dest_seq"' "$tmp/out")" = 6 ] || ok=1
[ "$(grep -c '"numbers":"ignored"' "$tmp/out")" = 6 ] || ok=1
grep '^{' "$tmp/out" | sed 's/.*"mreqs":\([0-9.]*\).*/\1/' |
	awk '$1 <= 0 { bad = 1 } END { exit bad }' || ok=1
tap $ok "agent -s 64,4096 --no-order: 18 cells, each with a rate above 0"
check_help engine --iters
check_bad engine --iters -n abc
check_bad engine --iters -n 1
check_bad engine --iters --iters
check_bad engine extra extra
check_run engine -n 1000
# --out_json alone: the table on stdout, the records in the file
run engine -n 1000 --out_json "$tmp/j.json"
[ $rc -eq 0 ] && ! grep -q '^{' "$tmp/out" && grep -q 'ns/op' "$tmp/out" &&
	records_ok "$tmp/j.json"
tap $? "engine --out_json without --json: table on stdout, records in the file"

check_help mmio_tx --size --modes --duration --ms --reps --verify-mib \
	--reorder --batch --fence-every --window --paths --oms-dev --dat \
	--report_gbits
check_bad mmio_tx --size -s 100
check_bad mmio_tx --size --sizes 64,,128
check_bad mmio_tx --duration -D 0
check_bad mmio_tx --ms --ms abc
check_bad mmio_tx --reps --reps 100
check_bad mmio_tx --batch --batch 0
check_bad mmio_tx --fence-every --fence-every 0
check_bad mmio_tx --fence-every --fence-every 4,,8
check_bad mmio_tx --batch --batch 17
# -b is perftest's bidirectional: not taken here for anything else
check_bad mmio_tx -b -b 16
check_bad mmio_tx --modes --modes bogus
check_bad mmio_tx --modes --modes ,
check_bad mmio_tx --modes --modes ''
check_bad mmio_tx --all -s 64 -a
check_bad mmio_tx --window --window bogus
check_bad mmio_tx --paths --paths ioctl
check_bad mmio_tx --paths --window kmod --paths ''
check_run mmio_tx -s 64 -D 0.001 --reps 1 --verify-mib 1
# an output file that cannot be written is found before the run
check_bad mmio_tx --dat -s 64 -D 0.001 --reps 1 --dat /nonexistent/x.dat
# batched sends, verified by the consumer: every message, in order
run mmio_tx -s 64,192 --modes fenced,sequenced -D 0.001 --reps 1 \
	--verify-mib 1 --batch 8 --json
ok=0
[ $rc -eq 0 ] || ok=1
[ "$(grep -c '"batch":8,' "$tmp/out")" = 4 ] || ok=1
[ "$(grep -c '"verified":1,' "$tmp/out")" = 4 ] || ok=1
grep -E '"(out_of_order|lost|corrupted)":[1-9]' "$tmp/out" && ok=1
tap $ok "mmio_tx --batch 8: 4 verified records, none out of order, lost or corrupted"
# Fig 10: a record per interval, with one fence per N messages
run mmio_tx -s 64 --modes unfenced -D 0.001 --reps 1 --verify-mib 0 \
	--fence-every 1,8,64 --json
ok=0
[ $rc -eq 0 ] || ok=1
for every in 1 8 64; do
	f=$(grep "\"fence_every\":$every," "$tmp/out" | sed -n 's/.*"fences_per_msg":\([0-9.]*\).*/\1/p')
	awk -v f="${f:-x}" -v n=$every 'BEGIN { d = f - 1 / n; exit !(f != "x" && d < 0.001 && d > -0.001) }' || ok=1
done
tap $ok "mmio_tx --fence-every 1,8,64: a record each, fences per message 1/N"

check_help ordered_read --size --duration --ms --scale --qd --runs
check_bad ordered_read --ms --ms abc
check_bad ordered_read --size -s 192
check_bad ordered_read --size -s ,
check_bad ordered_read --qd --qd 0
check_bad ordered_read --scale --scale -1
check_bad ordered_read --duration -D 1e999
check_run ordered_read -s 64 -D 0.001 --runs 1

check_help kvs_get --server --client --local --port --size --proto --threads \
	--qps --batch --duration --backend --order --zipf --hist --calibrate \
	--no-cpu-charge \
	--ib-dev --ib-port --gid-index --report_gbits
for role in server client local; do
	roles_refused kvs_get $role
done
# as the user who found them met them: a server given client options
run kvs_get --zipf 0.99
[ $rc -eq 2 ] && grep -q "^kvs_get: --zipf is a client option (give a HOST, or --local); this run is the server" "$tmp/err"
tap $? "kvs_get --zipf with no HOST: refused, a client option, this run the server"
run kvs_get --server --threads 4 -D 1 --batch 8
[ $rc -eq 2 ] && grep -q "^kvs_get: --threads is a client option" "$tmp/err"
tap $? "kvs_get --server --threads: refused, a client option"
check_bad kvs_get --local --local --server
check_bad kvs_get --size --local -s 12
check_bad kvs_get --size --local -s 1X
check_bad kvs_get --threads --local --threads 0
check_bad kvs_get --port --local -p 70000
check_bad kvs_get --duration --local -D x
check_bad kvs_get --proto --local --proto ,
check_bad kvs_get --proto --local --proto single,nope
check_bad kvs_get --backend --local --backend ib
check_bad kvs_get --order --local --order sideways
check_bad kvs_get --client --client
check_bad kvs_get --calibrate --local --calibrate
check_bad kvs_get --calibrate --server --calibrate
check_bad kvs_get --read-pct --client localhost --calibrate --read-pct 50
check_bad kvs_get --hist --client localhost --calibrate --hist /dev/null
check_bad kvs_get --calibrate --client localhost --calibrate -a --threads 1,2 --proto all
check_run kvs_get --local --backend emu -D 0.05 --threads 1 --items 16 \
	--scale 0 --port 7989
# --hist: every cell's histogram adds up to its gets; p50 <= p90 <= p99 <= p99.9
# (0.5 s per cell: a starved device thread may complete no get in 0.1 s)
run kvs_get --local --backend emu -D 0.5 --threads 2 --items 100 --scale 0 \
	--port 7989 --proto single,farm --hist "$tmp/h" --json
ok=0
[ $rc -eq 0 ] || ok=1
for p in single farm; do
	want=$(grep "\"proto\":\"$p\"" "$tmp/out" | sed -n 's/.*"gets":\([0-9]*\).*/\1/p')
	got=$(awk -v p=$p '$1 == p { n += $4 } END { print n + 0 }' "$tmp/h" 2>/dev/null)
	[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$want" = "$got" ] || ok=1
	pcts=$(grep "\"proto\":\"$p\"" "$tmp/out" | sed -n \
		's/.*"p50_us":\([^,]*\),"p90_us":\([^,]*\),"p99_us":\([^,]*\),"p999_us":\([^,]*\),.*/\1 \2 \3 \4/p')
	awk -v s="$pcts" 'BEGIN { n = split(s, a, " ")
		exit !(n == 4 && a[1] + 0 > 0 && a[1] + 0 <= a[2] + 0 &&
		       a[2] + 0 <= a[3] + 0 && a[3] + 0 <= a[4] + 0) }' || ok=1
	echo "# $p: rc $rc, gets $want, histogram $got, p50 p90 p99 p99.9: $pcts"
done
tap $ok "kvs_get --hist: each cell's histogram adds up to its gets, percentiles in order"
run kvs_get --local --backend emu -D 0.05 --threads 1 --scale 0 --port 7989 \
	--hist /nonexistent/dir/h
ok=0
[ $rc -eq 1 ] || ok=1
grep -q "^kvs_get: --hist /nonexistent/dir/h: " "$tmp/err" || ok=1
[ -s "$tmp/out" ] && ok=1
tap $ok "kvs_get --hist into a missing directory: exit 1, says why, runs nothing"
check_bad kvs_get --zipf --local --zipf 1
check_bad kvs_get --zipf --local --zipf -0.5
# Zipf keys: the top 1 % of 1000 keys (10) draw what theory says
# (theta 0.99: 0.38; uniform: 0.01), every get whole.  A share is only as
# good as its sample: a loaded machine may do few gets in 0.1 s (one run
# drew 0.45 of them), so a run with fewer than 3000 is done again for 1 s.
for z in 0 0.99; do
	for d in 0.1 1; do
		run kvs_get --local --backend emu -D $d --threads 2 --items 1000 \
			--scale 0 --port 7989 --zipf $z --json
		gets=$(sed -n 's/.*"gets":\([0-9]*\),.*/\1/p' "$tmp/out" | head -n 1)
		[ "${gets:-0}" -ge 3000 ] && break
	done
	share=$(sed -n 's/.*"hot1pct_share":\([0-9.]*\).*/\1/p' "$tmp/out")
	ok=0
	[ $rc -eq 0 ] && [ -n "$share" ] || ok=1
	grep -q '"torn":0,' "$tmp/out" || ok=1
	case $z in
	0) awk -v s="${share:-1}" 'BEGIN { exit !(s < 0.02) }' || ok=1 ;;
	*) awk -v s="${share:-0}" 'BEGIN { exit !(s > 0.33 && s < 0.45) }' || ok=1 ;;
	esac
	tap $ok "kvs_get --zipf $z: the top 1 % of keys drew ${share:-?} of ${gets:-?} gets, none torn"
done

check_bad kvs_get --read-pct --local --read-pct 101
check_bad kvs_get --read-pct --local --read-pct x
# Remote writers (--read-pct): every protocol's cell made updates and
# returned gets, none torn
# (--timeout-ms: on a loaded machine an operation once took over the
# default 2 s; only a hang should fail these)
run kvs_get --local --backend emu -D 0.3 --threads 2 --items 16 --scale 0 \
	--port 7989 --proto single,validation,farm,pessimistic --read-pct 50 \
	--timeout-ms 30000 --json
ok=0
[ $rc -eq 0 ] || ok=1
[ "$(grep -c '"read_pct":50,' "$tmp/out")" -eq 4 ] || ok=1
for p in single validation farm pessimistic; do
	rec=$(grep "\"proto\":\"$p\"" "$tmp/out")
	g=$(echo "$rec" | sed -n 's/.*"gets":\([0-9]*\).*/\1/p')
	u=$(echo "$rec" | sed -n 's/.*"updates":\([0-9]*\).*/\1/p')
	echo "$rec" | grep -q '"torn":0,' || ok=1
	[ "${g:-0}" -gt 0 ] && [ "${u:-0}" -gt 0 ] || ok=1
	echo "# --read-pct 50 $p: gets ${g:-?}, updates ${u:-?}"
done
tap $ok "kvs_get --read-pct 50: remote updates and gets in every protocol, none torn"
check_bad kvs_get --threads --local --threads 1K
check_bad kvs_get --batch --local --batch 513
check_bad kvs_get --batch --local --batch 4,,8
# Thread and batch sweeps: one record per (threads, batch), in order
run kvs_get --local --backend emu -D 0.1 --threads 1,2 --batch 4,512 \
	--items 64 --scale 0 --port 7989 --timeout-ms 30000 --json
cells=$(sed -n 's/.*"threads":\([0-9]*\),"qps":[0-9]*,"batch":\([0-9]*\),.*/\1x\2/p' "$tmp/out" | tr '\n' ' ')
ok=0
[ $rc -eq 0 ] && [ "$cells" = "1x4 1x512 2x4 2x512 " ] || ok=1
tap $ok "kvs_get --threads 1,2 --batch 4,512: a record per cell ($cells)"

check_help rdma_ops --server --client --local --port --op --size --threads \
	--qps --batch --stream --breakdown --duration --backend --scale --timeout-ms \
	--ib-dev --ib-port --gid-index --report_gbits
for role in server client local; do
	roles_refused rdma_ops $role
done
check_bad rdma_ops --op --local --op ,
check_bad rdma_ops --op --local --op send
check_bad rdma_ops --size --local -s 100
check_bad rdma_ops --threads --local --threads 0
check_bad rdma_ops --qps --local -q 17
check_bad rdma_ops --batch --local --batch 0
# in-range maxima whose buffers would not fit: refused before any run
check_bad rdma_ops --batch --local --threads 64 --batch 4096 -s 65536
check_bad rdma_ops --client --local --client h
check_run rdma_ops --local -D 0.05 --port 7990 --timeout-ms 30000
# Fig 3: a record per (op, size, threads), each with operations done
run rdma_ops --local -D 0.05 --port 7990 -s 64,1024 --threads 1,2 -q 2 \
	--timeout-ms 30000 --json
cells=$(sed -n 's/.*"op":"\([a-z]*\)","size":\([0-9]*\),"threads":\([0-9]*\),"qps":2,.*"mops":\([0-9.e+-]*\),.*/\1-\2-\3/p' "$tmp/out" | tr '\n' ' ')
ok=0
[ $rc -eq 0 ] || ok=1
[ "$cells" = "write-64-1 write-64-2 write-1024-1 write-1024-2 read-64-1 read-64-2 read-1024-1 read-1024-2 " ] || ok=1
grep -q '"mops":0,' "$tmp/out" && ok=1
tap $ok "rdma_ops -s 64,1024 --threads 1,2 -q 2: a record per cell ($cells), none empty"
# Where the time goes: --breakdown's parts are there and not negative, the
# time per operation agrees with the rate (one thread: op_us = 1 / mops),
# the thread's CPU per operation is not more than its wall time per
# operation (getrusage against the clock), the clock's cost is sane
run rdma_ops --local -D 0.1 --port 7990 -s 64 --op write,read --stream \
	--breakdown --timeout-ms 30000 --json
ok=0
[ $rc -eq 0 ] && [ "$(grep -c '"issue_us"' "$tmp/out")" = 2 ] || ok=1
sums=$(awk '/^\{/ {
	n = split("mops op_us issue_us progress_us yield_us rest_us cpu_user_us cpu_sys_us timer_ns", k, " ")
	for (i = 1; i <= n; i++) {
		if (!match($0, "\"" k[i] "\":[-0-9.e+]+")) { print "missing-" k[i]; next }
		v[k[i]] = substr($0, RSTART + length(k[i]) + 3, RLENGTH - length(k[i]) - 3) + 0
	}
	bad = v["op_us"] <= 0 || v["mops"] <= 0
	bad = bad || v["issue_us"] < 0 || v["progress_us"] < 0 || v["yield_us"] < 0
	bad = bad || v["issue_us"] + v["progress_us"] + v["yield_us"] <= 0
	r = v["op_us"] * v["mops"]
	bad = bad || r < 0.98 || r > 1.02
	bad = bad || v["cpu_user_us"] + v["cpu_sys_us"] > 1.1 * v["op_us"] + 0.05
	bad = bad || v["timer_ns"] <= 0 || v["timer_ns"] > 100000
	print bad ? "bad" : "ok" }' "$tmp/out" | tr '\n' ' ')
[ "$sums" = "ok ok " ] || ok=1
tap $ok "rdma_ops --stream --breakdown: parts not negative, time per operation = 1 / rate, CPU within it, the clock's cost sane ($sums)"
# without the flag: no parts (nothing timed), the CPU still there
run rdma_ops --local -D 0.05 --port 7990 -s 64 --op write --timeout-ms 30000 --json
ok=0
[ $rc -eq 0 ] && grep -q '"cpu_user_us":' "$tmp/out" && ! grep -q '"issue_us"' "$tmp/out" || ok=1
tap $ok "rdma_ops without --breakdown: CPU per operation, no timed parts"

check_help msg_pass --local --server --client --size --modes --duration \
	--window --scale --chaos --runs --port --ib-dev --ib-port --gid-index
for role in server client local; do
	roles_refused msg_pass $role
done
for role in server client local; do
	roles_refused oms_probe $role
done

# Under the names make install gives them (oms_ before each benchmark,
# as perftest's ib_): --help's usage and the messages say that name, the
# one the user typed
mkdir "$tmp/bin"
for p in "$bdir"/*; do
	[ -x "$p" ] && [ -f "$p" ] || continue
	ib=oms_$(basename "$p")
	ln -s "$(cd "$(dirname "$p")" && pwd)/$(basename "$p")" "$tmp/bin/$ib"
	rm -f "$tmp/out" "$tmp/err"
	"$tmp/bin/$ib" --help >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 0 ] && grep -q "^usage: $ib " "$tmp/out" && [ ! -s "$tmp/err" ]
	tap $? "$ib (installed) --help: exit 0, its usage under that name"
	"$tmp/bin/$ib" --bogus >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "^$ib: .*--bogus" "$tmp/err"
	tap $? "$ib (installed) --bogus: exit 2, refused under that name"
done
rm -rf "$tmp/bin"

# oms_info: --help and --json, nothing else
run oms_info --help
[ $rc -eq 0 ] && grep -q "^usage: oms_info \[--json\]" "$tmp/out" &&
	grep -q -- "--json" "$tmp/out" && [ ! -s "$tmp/err" ] &&
	! grep -q "^backend:" "$tmp/out"
tap $? "oms_info --help: exit 0, the usage on stdout, nothing run"
run oms_info --json
ok=0
[ $rc -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] || ok=1
if command -v python3 >/dev/null; then
	python3 -c 'import json, sys
o = json.load(sys.stdin)
assert o["round_trip"] == "ok" and o["read_back"] == "hello, ordered world"
assert o["backend"] in ("emu", "verbs") and o["chosen_because"]
assert isinstance(o["acquire_reads"], bool) and o["nodes"] > 0' \
		<"$tmp/out" || ok=1
else
	grep -q '^{"liboms":"[^"]*","backend":".*"round_trip":"ok"' "$tmp/out" || ok=1
fi
tap $ok "oms_info --json: exit 0, one JSON object that parses, with the backend, why and the round trip"
for a in --bogus -j extra; do
	run oms_info $a
	[ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q "^oms_info: .*'$a'" "$tmp/err"
	tap $? "oms_info $a: exit 2, named on stderr, nothing run"
done
check_bad msg_pass --scale --client localhost --scale 5
check_bad msg_pass --chaos --server --chaos 3
check_bad msg_pass --bind --local --bind 127.0.0.1
check_bad msg_pass --modes --client localhost --modes strong,bogus
check_bad msg_pass --timeout-ms --client localhost --timeout-ms 5
check_bad msg_pass --threads --local --threads 17
check_bad msg_pass --threads --local --threads 1,0
check_bad msg_pass --size --local -s 12
check_bad msg_pass --modes --local --modes ,
check_bad msg_pass --window --local --window 0
check_bad msg_pass --chaos --local --chaos x
check_run msg_pass --local -D 0.05 -s 64 --port 7992
# every mode measured; the ordered ones never delivered a flag before its
# data (the consumer's checks ran)
run msg_pass --local -D 0.1 -s 64,1024 --port 7992 --json
ok=0
[ $rc -eq 0 ] || ok=1
[ "$(grep -c '"mode":' "$tmp/out")" -eq 10 ] || ok=1
grep -v '"mode":"unordered"' "$tmp/out" | grep '"mode":' | grep -qv '"late":0,' && ok=1
grep -q '"checks":0,' "$tmp/out" && echo "# a cell without consumer checks (starved consumer?)"
tap $ok "msg_pass --local: 5 modes x 2 sizes, ordered modes never late"
# producer threads: a record per (mode, threads), each thread's flags
# checked against its own data
run msg_pass --local -D 0.1 -s 256 --threads 1,4 --modes quiet,strong,unordered --port 7992 --json
ok=0
[ $rc -eq 0 ] || ok=1
[ "$(grep -c '"threads":1,' "$tmp/out")" -eq 3 ] || ok=1
[ "$(grep -c '"threads":4,' "$tmp/out")" -eq 3 ] || ok=1
grep -v '"mode":"unordered"' "$tmp/out" | grep '"mode":' | grep -qv '"late":0,' && ok=1
tap $ok "msg_pass --local --threads 1,4: 3 modes x 2 thread counts, ordered modes never late"

check_help dma_pattern --size --patterns --samples --scale --cdf
check_bad dma_pattern --size -s 12
check_bad dma_pattern --size -s 16384
check_bad dma_pattern --samples -n 5
check_bad dma_pattern --patterns --patterns ,
check_bad dma_pattern --patterns --patterns mmio,dma
check_bad dma_pattern --scale --scale 0
check_run dma_pattern -s 64 -n 20
# every sample in the CDF file, a record per (pattern, size) with its
# percentiles in order
run dma_pattern -s 64,256 -n 20 --cdf "$tmp/cdf" --json
ok=0
[ $rc -eq 0 ] || ok=1
[ "$(grep -c '"pattern":' "$tmp/out")" -eq 10 ] || ok=1
[ "$(grep -vc '^#' "$tmp/cdf" 2>/dev/null)" -eq 200 ] || ok=1
sed -n 's/.*"p50_ns":\([0-9.]*\),"p90_ns":\([0-9.]*\),"p99_ns":\([0-9.]*\),.*/\1 \2 \3/p' "$tmp/out" |
	awk '$1 <= 0 || $1 > $2 || $2 > $3 { bad = 1 } END { exit bad }' || ok=1
tap $ok "dma_pattern -s 64,256 -n 20 --cdf: 5 patterns x 2 sizes, 200 samples in the file, p50 <= p90 <= p99"

# Messages that say what to do.  each: the tool's words on a failure a
# new user meets first (a name that does not resolve, a server no one can
# reach, no RDMA device, no oms.ko).
says() {	# says WHAT_IT_MUST_SAY DESCRIPTION
	if grep -q -- "$1" "$tmp/err"; then
		tap 0 "$2"
	else
		sed 's/^/#   stderr: /' "$tmp/err" | head -n 5
		tap 1 "$2"
	fi
}
says_rc() {	# says_rc EXIT WHAT_IT_MUST_SAY DESCRIPTION: $rc is EXIT too
	[ "$rc" -eq "$1" ] && grep -q -- "$2" "$tmp/err"
	tap $? "$3"
}
run kvs_get --client nosuchhost.invalid -D 0.1 --timeout-ms 2000
says_rc 1 "^kvs_get: cannot resolve nosuchhost.invalid" "kvs_get --client with a name that does not resolve: says so (exit $rc)"
# perftest's positional server host means --client HOST
for b in kvs_get rdma_ops msg_pass; do
	run $b nosuchhost.invalid -D 0.1 --timeout-ms 2000
	says_rc 1 "^$b: cannot resolve nosuchhost.invalid" "$b HOST (positional, as perftest): taken as --client HOST (exit $rc)"
done
check_bad kvs_get "one host only" --client a b
check_bad rdma_ops "unexpected argument" a b
check_bad msg_pass "exclude each other" a --server
rm -f "$tmp/err"
timeout -s TERM 3 "$bdir/kvs_get" --server --backend emu --port 7993 >"$tmp/out" 2>"$tmp/err"
says "no other host" "kvs_get --server on the emulated device: warns that no other host can reach it"
# the server serves what clients ask for, with no -s of its own: every
# size of --all (README's client asks for 64,1024)
grep -q "^kvs_get server: 32 tables (value sizes 64,128,256,512,1024,2048,4096,8192 B)" "$tmp/out"
tap $? "kvs_get --server with no -s: every protocol's table in every size of --all, said at the start"
timeout -s TERM 3 "$bdir/kvs_get" --backend emu --port 7993 -s 1024 --proto farm >"$tmp/out" 2>"$tmp/err"
grep -q "^kvs_get server: 1 tables (value sizes 1024 B)" "$tmp/out"
tap $? "kvs_get (no HOST) -s 1024 --proto farm: the server's tables are those it was given"
# liboms's OMS_TIMEOUT_MS stands in for --timeout-ms; a bad one refused
OMS_TIMEOUT_MS=2s timeout 60 "$bdir/kvs_get" --local -D 0.05 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q "^kvs_get: OMS_TIMEOUT_MS=2s: expected a whole number" "$tmp/err"
tap $? "kvs_get with OMS_TIMEOUT_MS=2s: refused (exit $rc), as liboms refuses it"
rm -f "$tmp/err"
OMS_BACKEND=emu timeout -s TERM 3 "$bdir/msg_pass" -p 7994 >/dev/null 2>"$tmp/err"
says "no other host" "msg_pass (no HOST: the server) with OMS_BACKEND=emu: warns that no other host can reach it"
run kvs_get --backend emu 127.0.0.1 -D 0.1
says_rc 1 "emulated device reaches servers in this process only: use --local" "kvs_get --backend emu HOST: refused, and says the emulated device reaches this process only (exit $rc)"
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	# no RDMA device: a server or a client the emulated device would hold
	# apart from every other process is refused, with what to do
	for b in kvs_get rdma_ops msg_pass; do
		run $b
		[ -s "$tmp/out" ] && rc=0	# the server started
		says_rc 1 "^$b: no RDMA device in /sys/class/infiniband: a server .*nothing outside this process.*Soft-RoCE.*--local" \
			"$b with no HOST (the server) and no RDMA device: refused, says why and what to do (exit $rc)"
		run $b 127.0.0.1 -D 0.1
		says_rc 1 "^$b: no RDMA device in /sys/class/infiniband: a client .*only servers in this process.*Soft-RoCE.*--local" \
			"$b HOST with no RDMA device: refused, says why and what to do (exit $rc)"
	done
	OMS_BACKEND=verbs timeout 60 "$bdir/kvs_get" --client 127.0.0.1 -D 0.1 \
		>/dev/null 2>"$tmp/err"
	says "no RDMA device.*Soft-RoCE" "kvs_get with OMS_BACKEND=verbs and no RDMA device: says how to get one"
	run rdma_ops --backend verbs 127.0.0.1 -D 0.1
	says_rc 1 "^rdma_ops: no context: .*no RDMA device.*Soft-RoCE" "rdma_ops --backend verbs HOST with no RDMA device: says how to get one (exit $rc)"
	OMS_BACKEND=foo timeout 60 "$bdir/rdma_ops" --local -D 0.05 \
		>/dev/null 2>"$tmp/err"
	says "OMS_BACKEND=foo: expected emu or verbs" "rdma_ops with OMS_BACKEND=foo: names the variable and its values"
fi
# perftest's -d, -i, -x name an RDMA device: refused on the emulated one,
# out of range refused, a device that is not there named with the fix
check_bad kvs_get "-d/--ib-dev names an RDMA device" --local -d rxe0
check_bad kvs_get "-x/--gid-index names an RDMA device" --local --backend emu -x 1
check_bad rdma_ops "-i/--ib-port names an RDMA device" --local -i 1
check_bad msg_pass "-d/--ib-dev names an RDMA device" --local --ib-dev rxe0
check_bad kvs_get "-i/--ib-port: '0' refused" -i 0 somehost
check_bad rdma_ops "-x/--gid-index: '65536' refused" -x 65536 somehost
OMS_BACKEND=emu timeout 60 "$bdir/rdma_ops" -d rxe0 somehost >/dev/null 2>"$tmp/err"
says "names an RDMA device, but the run is on the emulated device" "rdma_ops -d under OMS_BACKEND=emu: refused, not ignored"
run kvs_get -d nosuchdev0 127.0.0.1 -D 0.1 --timeout-ms 2000
says_rc 1 "OMS_DEVICE=nosuchdev0: no such RDMA device (present: " "kvs_get -d with a device that is not there: names it and the devices present (exit $rc)"
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	# OMS_DEVICE picks verbs: no silent fall back to the emulated device
	OMS_DEVICE=rxe0 timeout 60 "$bdir/../apps/oms_info" >/dev/null 2>"$tmp/err"
	says "OMS_DEVICE=rxe0: no such RDMA device (present: none" "oms_info with OMS_DEVICE and no RDMA device: refused, not the emulated device"
fi
# --report_gbits is perftest's unit switch: MB/s by default, Gb/s with it
for u in MB/s Gb/s; do
	[ $u = Gb/s ] && g=--report_gbits || g=
	run rdma_ops --local -D 0.05 --port 7990 -s 64 --op write \
		--timeout-ms 30000 $g
	[ $rc -eq 0 ] && grep -q "M ops/s *$u" "$tmp/out"
	tap $? "rdma_ops ${g:-without --report_gbits}: bandwidth column in $u"
done
if [ ! -e /dev/oms ]; then
	run mmio_tx --window kmod -s 64 -D 0.001 --reps 1
	says "oms.ko is not loaded: sudo insmod" "mmio_tx --window kmod without oms.ko: says how to load it"
fi

echo "1..$n"
