#!/bin/sh
# make demo: what backend liboms picked and what it can order, then one
# ordered round trip through it.
set -eu
B=${B:-build}
echo "== oms_info: capability query"
"$B/apps/oms_info"
