# Sourced by the shell tests that run one program at a time: tap (from
# tests/vm/tap.sh: `tap STATUS TEXT`, the next TAP line), here followed on
# a "not ok" by the first lines of what the program said on $tmp/err (the
# caller's temporary directory), and `run NAME ARGS...`, which runs the
# program the caller's `bin NAME` names, with its exit status in $rc, its
# output in $tmp/out and $tmp/err.  The caller prints the plan, "1..$n",
# last.
. tests/vm/tap.sh

tap_stderr() {
	sed 's/^/#   stderr: /' "$tmp/err" 2>/dev/null | head -n 5
}
tap_on_fail=tap_stderr

run() {	# run NAME ARGS...
	p=$(bin "$1")
	shift
	rm -f "$tmp/out" "$tmp/err" "$tmp/j.json"
	timeout 60 "$p" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
