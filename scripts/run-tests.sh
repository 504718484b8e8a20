#!/bin/bash
# Run test commands, pass their TAP through, and total the results.
#
# Each argument is one command (a test binary or a quoted shell command) that
# prints TAP.  Every command is bounded by TEST_TIMEOUT seconds (default
# 5400: a last resort against a hang; the guests and the kselftest harness
# bound their own parts well below it).
# A command that exits non-zero without a "not ok" line counts as one failure,
# so a crash or a timeout is never silent.  The last lines list each failed
# command with its "not ok" lines and the diagnostics under them (CI keeps
# only the end of the log: the failures must be readable there), then
#   N passed, N failed, N skipped
# and the exit status is non-zero if anything failed.  Before them, a time
# report: each command's wall time, longest first, and the whole run's,
# so that a slow part is seen at once.  OMS_CHECK_TIER (quick or full) is
# passed on to the commands and named there.
#
# CHECK_JOBS commands run at once (default 2).  Most of make check's time is
# QEMU guests and single-threaded runs (libFuzzer, the explorer) that leave
# a core idle; two at a time fill both cores of the machines it runs on.
# Each command's output is held until it ends and printed in the order the
# commands were given, each followed by its wall time, so the log reads the
# same at any CHECK_JOBS.  Progress is not held: when a command ends, a
# line "# [done/all] ok|FAILED COMMAND (time, counts)" at once; every 10 s,
# for a command still running whose TAP has grown (a guest's parts), a
# line with what it has passed so far.  Commands must not share files:
# each names its own (mktemp, per-name logs).  Bash for `wait -n`.
set -u
timeout_s=${TEST_TIMEOUT:-5400}
# Contexts that set no liveness timeout of their own wait 60 s for a
# device heartbeat, not liboms's 2 s: beside another make check (four TCG
# guests and builds on two cores) the emulated device's thread was seen
# not to run for over 2 s, and the litmus tests' contexts then died with
# -ETIMEDOUT.  Tests about timeouts set their own (emu_device_stop,
# api_timeout_env).  OMS_TIMEOUT_MS is liboms's (man liboms).
export OMS_TIMEOUT_MS=${OMS_TIMEOUT_MS:-60000}
jobs=${CHECK_JOBS:-2}
case $jobs in '' | *[!0-9]* | 0) echo "run-tests: CHECK_JOBS must be a positive integer" >&2; exit 2 ;; esac
pass=0 fail=0 skip=0
failed_cmds=""
failed_lines=""
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM

cmds=("$@")
total=${#cmds[@]}
done_n=0
declare -a seen_oks started_at

start() {	# start INDEX: run command INDEX in the background
	local i=$1
	(
		t0=$(date +%s)
		echo "$t0" >"$dir/$i.t0"
		timeout -k 10 "$timeout_s" sh -c "${cmds[$i]}" >"$dir/$i.out" 2>&1
		echo "$? $(($(date +%s) - t0))" >"$dir/$i.rc.tmp"
		mv "$dir/$i.rc.tmp" "$dir/$i.rc"
	) &
}

report() {	# report INDEX: print a finished command's TAP and count it
	local i=$1 cmd=${cmds[$1]} log=$dir/$1.out rc secs p s f why
	read -r rc secs <"$dir/$i.rc"
	why=""
	echo "# ---- $cmd"
	cat "$log"
	echo "# ---- $secs s"
	p=$(grep -E '^ok [0-9]+' "$log" | grep -vc '# SKIP')
	s=$(grep -E '^ok [0-9]+.*# SKIP' "$log" | wc -l)
	f=$(grep -Ec '^not ok [0-9]+' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		why="exited with status $rc"
		[ "$rc" -eq 124 ] && why="timed out after ${timeout_s}s"
		echo "not ok - $cmd $why"
		f=1
	fi
	if [ "$f" -gt 0 ]; then
		failed_cmds="$failed_cmds
#   $cmd"
		failed_lines="$failed_lines$(failures "$log" "$cmd" "$why")
"
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	echo "$secs $cmd" >>"$dir/times"
	rm -f "$log"
}

# A failed command's "not ok" lines, each with the "#" lines around it (4
# before, as the guests print their diagnostics first; 6 after), at most
# 10 of them; for a command that failed without one (a crash, a timeout),
# why and its last 6 lines.  What the summary repeats, every line behind
# "#   " so that the log's TAP is counted once.
failures() {	# failures LOG CMD [WHY]
	printf '# ---- failures of %s%s\n' "$2" "${3:+: $3}"
	awk '
		{ last[NR % 6] = $0 }
		/^not ok / {
			if (++n > 10) exit
			for (i = nb - 3; i <= nb; i++)
				if (i > 0) print "#   " before[i % 4]
			print "#   " $0; d = 0; keep = 1; nb = 0; next
		}
		keep && /^#/ && d < 6 { print "#   " $0; d++; next }
		{ keep = 0 }
		/^#/ { before[++nb % 4] = $0; next }
		{ nb = 0 }
		END {
			if (n) exit
			for (i = NR - 5; i <= NR; i++)
				if (i > 0) print "#   " last[i % 6]
		}' "$1"
}

# counts LOG: "P F S", its passed, failed and skipped TAP lines so far.
counts() {
	echo "$(grep -E '^ok [0-9]+' "$1" | grep -vc '# SKIP')" \
		"$(grep -Ec '^not ok [0-9]+' "$1")" \
		"$(grep -E '^ok [0-9]+.*# SKIP' "$1" | wc -l)"
}

announce() {	# announce INDEX: the progress line of a command that ended
	local i=$1 rc secs p f s verdict=ok
	read -r rc secs <"$dir/$i.rc"
	read -r p f s <<<"$(counts "$dir/$i.out")"
	[ "$rc" -ne 0 ] || [ "$f" -gt 0 ] && verdict=FAILED
	done_n=$((done_n + 1))
	echo "# [$done_n/$total] $verdict ${cmds[$i]} ($secs s: $p passed," \
		"$f failed, $s skipped)"
	touch "$dir/$i.seen"
}

progress() {	# progress: what each long command has passed so far
	local i p f s now
	now=$(date +%s)
	for ((i = 0; i < next; i++)); do
		[ -e "$dir/$i.rc" ] || [ ! -e "$dir/$i.t0" ] && continue
		read -r p f s <<<"$(counts "$dir/$i.out")"
		[ "$p $f" = "${seen_oks[$i]:-0 0}" ] && continue
		seen_oks[$i]="$p $f"
		echo "# [$done_n/$total] running ${cmds[$i]}" \
			"($((now - $(cat "$dir/$i.t0"))) s): $p passed, $f failed so far"
	done
}

tick() {	# a job that ends in 10 s, so that wait -n wakes for progress
	sleep 10 &
	tick_pid=$!
}

t_start=$(date +%s)
next=0 printed=0 running=0
tick
while [ "$printed" -lt "$total" ]; do
	while [ "$running" -lt "$jobs" ] && [ "$next" -lt "$total" ]; do
		start "$next"
		next=$((next + 1)) running=$((running + 1))
	done
	wait -n
	for ((i = printed; i < next; i++)); do
		[ -e "$dir/$i.rc" ] && [ ! -e "$dir/$i.seen" ] && announce "$i"
	done
	if ! kill -0 "$tick_pid" 2>/dev/null; then
		progress
		tick
	fi
	# Every finished command frees a slot; print those whose turn it is.
	running=0
	for ((i = printed; i < next; i++)); do
		[ -e "$dir/$i.rc" ] || running=$((running + 1))
	done
	while [ "$printed" -lt "$next" ] && [ -e "$dir/$printed.rc" ]; do
		report "$printed"
		printed=$((printed + 1))
	done
done

kill "$tick_pid" 2>/dev/null
echo "# ---- time report (${OMS_CHECK_TIER:-full} tier, $jobs at a time): wall seconds per command, longest first"
sort -rn "$dir/times" 2>/dev/null | awk '{ printf "#   %6d s  ", $1; $1 = ""; print substr($0, 2) }'
echo "#   $(($(date +%s) - t_start)) s in all"
[ -n "$failed_lines" ] && printf '%s' "$failed_lines"
[ -n "$failed_cmds" ] && echo "# failed:$failed_cmds"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
