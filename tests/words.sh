#!/bin/sh
# One word per idea (docs/rooms.md): no retired word is used in the
# directories its row of the "Retired words" table forbids it in.  Each
# row's first cell is a POSIX extended regular expression matched as a
# whole identifier token, case as written; its last cell lists the tokens
# the row allows (ABI names, the words the table keeps).  TAP.
#
# Controls, so that an ok means something:
#   - the table was read: at least one row;
#   - per row, a planted use: a file in a temporary directory holding a
#     token the row's expression matches is found by the same search the
#     tree gets (the control passes when the planted word IS found);
#   - per row with allowed tokens, a file holding only those is not.
#
# usage: words.sh   (from the top of the tree)
set -u
table=docs/rooms.md
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
	fi
}

# rows: one line per row of the table: REGEX<tab>DIRS<tab>ALLOWED
rows() {
	awk -F'|' '
	/^## / { inrows = ($0 ~ /^## Retired words/); next }
	inrows && /^\| `/ {
		re = $2; dirs = $4; al = $5
		gsub(/^ *`/, "", re); gsub(/` *$/, "", re)
		gsub(/^ +/, "", dirs); gsub(/ +$/, "", dirs)
		gsub(/`/, "", al); gsub(/^ +/, "", al); gsub(/ +$/, "", al)
		printf "%s\t%s\t%s\n", re, dirs, al
	}' "$table"
}

# hits REGEX ALLOWED FILE...: file:line:token for each use of REGEX as a
# whole token in the FILEs that ALLOWED (tokens, space separated) does
# not list
hits() {
	hre=$1 hal=$2
	shift 2
	[ $# -gt 0 ] || return 0
	grep -nowIHE -- "$hre" "$@" 2>/dev/null |
		awk -v al=" $hal " '{
			tok = $0; sub(/^.*:/, "", tok)
			if (index(al, " " tok " ") == 0) print
		}'
}

# files DIR...: the files of the tree under DIRs (tracked ones when this
# is a git tree: build output is not the code), one a line
files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -- "$@"
	else
		find "$@" -type f
	fi
}

rows >"$dir/rows"
nrows=$(wc -l <"$dir/rows" | tr -d ' ')
r=1
[ "$nrows" -gt 0 ] && r=0
ok $r "control: $table's Retired words table was read ($nrows rows)"

tab=$(printf '\t')
while IFS="$tab" read -r re dirs al; do
	# a token the expression matches: each "any token characters" an x
	sample=$(printf '%s\n' "$re" | sed 's/\[A-Za-z0-9_\]\*/x/g')
	mkdir -p "$dir/plant"
	printf 'int f(void)\n{\n\treturn %s(0); /* planted */\n}\n' \
		"$sample" >"$dir/plant/planted.c"
	r=1
	[ -n "$(hits "$re" "$al" "$dir/plant/planted.c")" ] && r=0
	ok $r "control: a planted $sample is found as /$re/"
	if [ -n "$al" ]; then
		: >"$dir/plant/allowed.c"
		for a in $al; do
			printf 'int %s;\n' "$a" >>"$dir/plant/allowed.c"
		done
		r=1
		[ -z "$(hits "$re" "$al" "$dir/plant/allowed.c")" ] && r=0
		ok $r "control: the allowed $al are not flagged as /$re/"
	fi

	# shellcheck disable=SC2046,SC2086 # lists: the files have no blanks
	out=$(hits "$re" "$al" $(files $dirs))
	if [ -z "$out" ]; then
		ok 0 "/$re/ not used in $dirs"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		ok 1 "/$re/ not used in $dirs"
	fi
done <"$dir/rows"
echo "1..$n"
