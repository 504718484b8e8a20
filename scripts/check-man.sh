#!/bin/sh
# The man pages as TAP: every call lib/liboms.map exports has a
# page or a link in BUILD/man; every page renders without a groff warning;
# each page's NAME line names exactly the calls of its SYNOPSIS, whose
# prototypes are, whitespace aside, the declarations of the header the
# SYNOPSIS includes; SEE ALSO names pages that exist; make install
# DESTDIR= installs every page and link, and the links resolve there;
# every program make install puts in BINDIR has a section 1 page, and no
# section 1 page is left over from one it does not; liboms(7) names every
# exported call and every program's page; the installed text (man/ and
# include/) names no litmus test id and no "seed 00N".
#
# usage: check-man.sh BUILD_DIR [PROGRAM...]
#        (from the top of the tree, after make man)
# PROGRAM...: the names make install gives the programs in BINDIR, from the
# Makefile's own list; without them they are derived here (programs()).
set -u
b=${1:?usage: $0 BUILD_DIR [PROGRAM...]}
shift
man=$b/man
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..11"

# groff as man(1) runs it for a page with tables (pandoc marks those), every
# warning on; prints the warnings, nothing when the page is clean.
render() {
	groff -man -t -s -Tutf8 -ww -z "$1" 2>&1
}

# Statements of C text on stdin: comments dropped (a comment that starts
# on a preprocessor line ends that line), then preprocessor lines, then white
# space folded to one space (none after "(" nor before ")"); one statement
# a line, ended by ";", "{" or "}".
statements() {
	awk '{ text = text $0 "\n" }
	     END {
		out = ""
		while ((i = index(text, "/*")) > 0) {
			out = out substr(text, 1, i - 1) " "
			text = substr(text, i + 2)
			j = index(text, "*/")
			text = j ? substr(text, j + 2) : ""
		}
		n = split(out text, line, "\n")
		text = ""
		for (k = 1; k <= n; k++) {
			if (cont || line[k] ~ /^[[:space:]]*#/) {
				cont = line[k] ~ /\\[[:space:]]*$/
				continue
			}
			text = text line[k] "\n"
		}
		gsub(/[[:space:]]+/, " ", text)
		gsub(/\( /, "(", text)
		gsub(/ \)/, ")", text)
		gsub(/[;{}]/, "&\n", text)
		n = split(text, s, "\n")
		for (k = 1; k <= n; k++) {
			sub(/^ /, "", s[k])
			sub(/ ?[;{}]$/, "", s[k])
			if (s[k] != "")
				print s[k]
		}
	     }'
}

# The fenced code block of a page's SYNOPSIS section.
synopsis() {
	awk '/^# / { in_syn = ($0 ~ /^# SYNOPSIS/); next }
	     in_syn && /^```/ { if (in_code) exit; in_code = 1; next }
	     in_code' "$1"
}

# tap N BAD "what passed" "what failed": one TAP line.
tap() {
	if [ "$2" -eq 0 ]; then
		echo "ok $1 - $3"
	else
		echo "not ok $1 - $4"
	fi
}

# The function a declaration declares.
fname() {
	sed -n 's/^[^(]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p'
}

# The programs make install puts in BINDIR, one a line: the arguments if
# there are any, else by the Makefile's install rule: apps/NAME.c as NAME,
# bench/NAME.c as oms_NAME, but for the two microbenchmarks whose bare
# names would read as the agent and the engine themselves
# (oms_agent_bench, oms_engine_bench).
programs() {
	if [ $# -gt 0 ]; then
		printf '%s\n' "$@"
		return
	fi
	for c in apps/*.c bench/*.c; do
		[ -f "$c" ] || continue
		n=$(basename "$c" .c)
		case $c in
		apps/*) echo "$n" ;;
		bench/agent.c | bench/engine.c) echo "oms_${n}_bench" ;;
		*) echo "oms_$n" ;;
		esac
	done
}

# 1: every page converted
bad=0 n=0 missing=""
for md in man/*.md; do
	[ -f "$md" ] || continue
	n=$((n + 1))
	[ -s "$man/$(basename "$md" .md)" ] || missing="$missing $md"
done
[ $n -gt 0 ] || bad=1
[ -z "$missing" ] || { echo "# not converted:$missing"; bad=1; }
tap 1 $bad "$n pages of man/ converted into $man" \
	"pages of man/ missing from $man (make man)"

# 2: every export has a page or a link
sed -n 's/^[[:space:]]*\(oms_[a-z0-9_]*\);$/\1/p' lib/liboms.map >"$tmp/map"
missing=""
while read -r sym; do
	[ -s "$man/$sym.3" ] || missing="$missing $sym"
done <"$tmp/map"
bad=0
[ -s "$tmp/map" ] || bad=1
[ -z "$missing" ] || { echo "# no page or link in $man:$missing"; bad=1; }
tap 2 $bad "all $(wc -l <"$tmp/map") calls of lib/liboms.map have a page or a link" \
	"calls of lib/liboms.map without a man page"

# 3: every page renders without a warning, every link names a page
bad=0 pages=0 links=0
for f in "$man"/*; do
	[ -f "$f" ] || continue
	read -r first <"$f"
	case $first in
	".so man"[0-9]/*)
		links=$((links + 1))
		to=${first#.so man?/}
		if [ ! -s "$man/$to" ]; then
			echo "# $f: .so names $to, which is not in $man"
			bad=1
		fi
		continue
		;;
	esac
	pages=$((pages + 1))
	out=$(render "$f")
	if [ -n "$out" ]; then
		echo "$out" | sed "s|^|# $f: |"
		bad=1
	fi
done
[ $pages -gt 0 ] || bad=1
tap 3 $bad "$pages pages render with groff -ww without a warning, $links links name pages" \
	"pages that warn, or links to nothing"

# Each header's statements, and each page's SYNOPSIS: its headers and its
# declarations.
for h in include/*.h; do
	statements <"$h" >"$tmp/$(basename "$h").st"
done
for md in man/*.3.md; do
	p=$tmp/$(basename "$md" .md)
	synopsis "$md" >"$p.syn"
	sed -n 's/^#include <\(.*\)>.*/\1/p' "$p.syn" >"$p.inc"
	grep -v '^#include' "$p.syn" | statements >"$p.decl"
done

# 4: NAME = the calls of SYNOPSIS, the page's own name first
bad=0
for md in man/*.3.md; do
	p=$tmp/$(basename "$md" .md)
	sh scripts/man-names.sh names "$md" >"$p.names"
	first=$(head -n 1 "$p.names")
	if [ "$first.3.md" != "$(basename "$md")" ]; then
		echo "# $md: NAME begins with $first, not the page's own name"
		bad=1
	fi
	sort "$p.names" >"$p.names.sorted"
	fname <"$p.decl" | sort >"$p.fnames"
	if ! cmp -s "$p.names.sorted" "$p.fnames"; then
		diff "$p.names.sorted" "$p.fnames" | sed -n "s|^< |# $md: in NAME, not declared in SYNOPSIS: |p
			s|^> |# $md: declared in SYNOPSIS, not in NAME: |p"
		bad=1
	fi
done
tap 4 $bad "each section 3 page's NAME names exactly the calls of its SYNOPSIS" \
	"NAME and SYNOPSIS disagree"

# 5: every SYNOPSIS prototype is a declaration of a header it includes
bad=0 n=0
for md in man/*.3.md; do
	p=$tmp/$(basename "$md" .md)
	: >"$p.hdr"
	while read -r h; do
		if [ -f "$tmp/$h.st" ]; then
			cat "$tmp/$h.st" >>"$p.hdr"
		else
			echo "# $md: includes <$h>, which is not in include/"
			bad=1
		fi
	done <"$p.inc"
	if [ ! -s "$p.inc" ]; then
		echo "# $md: SYNOPSIS includes no header"
		bad=1
	fi
	n=$((n + $(wc -l <"$p.decl")))
	if grep -vxF -f "$p.hdr" "$p.decl" >"$p.bad"; then
		sed "s|^|# $md: not in $(tr '\n' ' ' <"$p.inc" | sed 's/ $//'): |" "$p.bad"
		bad=1
	fi
done
[ $n -gt 0 ] || bad=1
tap 5 $bad "all $n SYNOPSIS prototypes are the headers' declarations" \
	"SYNOPSIS prototypes that are not in the header they include"

# 6: SEE ALSO names pages that exist
bad=0
for md in man/*.md; do
	refs=$(awk '/^# / { in_see = ($0 ~ /^# SEE ALSO/); next } in_see' "$md" |
		grep -o '\*\*[A-Za-z0-9_.-]*\*\*([0-9])' | tr -d '*()')
	for r in $refs; do
		page=${r%?}.${r#"${r%?}"}	# oms_put3 -> oms_put.3
		case $page in oms_*|liboms.*) ;; *) continue ;; esac
		if [ ! -s "$man/$page" ]; then
			echo "# $md: SEE ALSO names $page, not in $man"
			bad=1
		fi
	done
done
tap 6 $bad "SEE ALSO names only pages that exist" "SEE ALSO names missing pages"

# 7, 8: make install DESTDIR= installs them all; the links resolve there
dest=$tmp/dest
mandir=$dest/usr/local/share/man
bad=0 n=0 missing=""
if make -s install DESTDIR="$dest" PREFIX=/usr/local >"$tmp/install.log" 2>&1; then
	for f in "$man"/*; do
		n=$((n + 1))
		name=$(basename "$f")
		cmp -s "$f" "$mandir/man${name##*.}/$name" || missing="$missing $name"
	done
	[ -z "$missing" ] || { echo "# not installed (or not as built):$missing"; bad=1; }
else
	sed 's/^/# /' "$tmp/install.log" | tail -n 20
	bad=1
fi
tap 7 $bad "make install DESTDIR= installed all $n pages and links" \
	"make install DESTDIR= did not install the man pages"

bad=0 n=0
for f in "$mandir"/man3/*.3; do
	[ -f "$f" ] || continue
	read -r first <"$f"
	case $first in .so\ *) ;; *) continue ;; esac
	n=$((n + 1))
	if [ ! -s "$mandir/${first#.so }" ]; then
		echo "# installed $(basename "$f"): $first names nothing in $mandir"
		bad=1
	fi
done
[ $n -gt 0 ] || bad=1
tap 8 $bad "the $n installed links name pages installed in \$MANDIR" \
	"installed links that do not resolve"

# 9: a section 1 page for every program make install puts in BINDIR, and
# none for a program it does not
programs "$@" | sort -u >"$tmp/progs"
for md in man/*.1.md; do
	[ -f "$md" ] && basename "$md" .1.md
done | sort >"$tmp/pages1"
bad=0
[ -s "$tmp/progs" ] || bad=1
missing=$(comm -23 "$tmp/progs" "$tmp/pages1" | tr '\n' ' ')
extra=$(comm -13 "$tmp/progs" "$tmp/pages1" | tr '\n' ' ')
[ -z "$missing" ] || { echo "# installed, without a section 1 page in man/: $missing"; bad=1; }
[ -z "$extra" ] || { echo "# section 1 pages of programs make install does not install: $extra"; bad=1; }
while read -r p; do
	if [ -f "man/$p.1.md" ] && [ ! -s "$man/$p.1" ]; then
		echo "# man/$p.1.md not converted into $man (make man)"
		bad=1
	fi
done <"$tmp/progs"
# Where the list is derived, what check 7's make install really put in
# BINDIR may differ from it (the install rule changed): said, not failed.
if [ $# -eq 0 ] && [ -d "$dest/usr/local/bin" ]; then
	ls "$dest/usr/local/bin" | sort >"$tmp/bin"
	other=$(comm -23 "$tmp/bin" "$tmp/progs" | tr '\n' ' ')
	[ -z "$other" ] || echo "# note: make install put in BINDIR, not in the list checked here: $other"
fi
tap 9 $bad "all $(wc -l <"$tmp/progs") installed programs have a section 1 page, and no page is left over" \
	"installed programs without a section 1 page, or pages without a program"

# 10: liboms(7) names every exported call and every installed program, each
# with its page's section, as **oms_put**(3)
bad=0 n=0 missing=""
l7=man/liboms.7.md
if [ -f "$l7" ]; then
	while read -r sym; do
		n=$((n + 1))
		grep -qF "**$sym**(3)" "$l7" || missing="$missing $sym(3)"
	done <"$tmp/map"
	while read -r p; do
		n=$((n + 1))
		grep -qF "**$p**(1)" "$l7" || missing="$missing $p(1)"
	done <"$tmp/progs"
else
	echo "# $l7 is missing"
	bad=1
fi
[ -z "$missing" ] || { echo "# not named in $l7:$missing"; bad=1; }
tap 10 $bad "liboms(7) names all $n exported calls and installed programs with their pages" \
	"liboms(7) does not name every exported call and installed program"

# 11: what is installed (the man pages, the headers) names no litmus test
# id and no seed number: they mean nothing without the source tree (the
# sources by name, the tests of each rule in docs/ordering.md)
{
	grep -rniE 'seed[ -]?00[0-9]' man include
	grep -rnE '\bL[0-9]{1,2}\b' man include
} | sort -u >"$tmp/ids"
bad=0
[ -s "$tmp/ids" ] && { sed 's/^/# /' "$tmp/ids"; bad=1; }
tap 11 $bad "man/ and include/ name no litmus test id and no seed number" \
	"litmus test ids or seed numbers in man/ or include/"
