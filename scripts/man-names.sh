#!/bin/sh
# The names a man page documents: those of its NAME line, before " - "
# ("oms_fence, oms_fence_global, oms_fence_local - order ..."), as
# rdma-core and liburing write them.  The first name should be the page's
# own (man/oms_fence.3.md); every other one is installed as a link to it.
#
# usage: man-names.sh names PAGE.md     the names, one a line
#        man-names.sh links PAGE.md...  "alias.S=page.S" for every other name
set -eu
mode=${1:?usage: $0 names|links PAGE.md...}
shift
case $mode in
names|links) ;;
*)
	echo "usage: $0 names|links PAGE.md..." >&2
	exit 2
	;;
esac
[ $# -gt 0 ] || exit 0

# One awk for every page: make runs this each time it reads mk/man.mk.
awk -v mode="$mode" '
	FNR == 1 {
		in_name = 0
		page = FILENAME
		sub(/.*\//, "", page)
		sub(/\.md$/, "", page)		# oms_fence.3
		sect = page
		sub(/.*\./, "", sect)		# 3
	}
	/^# NAME[[:space:]]*$/ { in_name = 1; next }
	in_name && NF {
		in_name = 0
		sub(/[[:space:]]+-[[:space:]].*/, "")
		n = split($0, w, /,[[:space:]]*/)
		for (i = 1; i <= n; i++) {
			if (w[i] == "")
				continue
			if (mode == "names")
				print w[i]
			else if (w[i] "." sect != page)
				print w[i] "." sect "=" page
		}
	}' "$@"
