# Sourced by the guest scripts: `tap STATUS TEXT` prints the next TAP line,
# "ok N - TEXT" when STATUS is 0, else "not ok N - TEXT" and failed=1.
# $tap_prefix, when set, goes before TEXT; $tap_on_fail, when set, is a
# command run after a "not ok" line (tests/tap-lib.sh's stderr excerpt).
# boot.sh renumbers what every script prints into one sequence.
n=0
failed=0
tap() {	# tap STATUS TEXT
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - ${tap_prefix:-}$2"
	else
		echo "not ok $n - ${tap_prefix:-}$2"
		${tap_on_fail:-:}	# the caller's words on why, if it has any
		# when, for a failure that is a bound met (the guests' clocks
		# start at boot)
		echo "# at $(cut -d' ' -f1 /proc/uptime 2>/dev/null) s of uptime"
		failed=1
	fi
}
