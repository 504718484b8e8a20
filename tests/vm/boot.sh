#!/bin/sh
# Boot the installed Debian kernel in QEMU (TCG), run one script in it and
# re-emit its TAP.  Reusable: any guest script, any extra QEMU arguments.
#
# usage: boot.sh [-t SECONDS] [-m MiB] [-s CPUS] [-n NAME] [-k IMAGE]
#                [-l LABEL] [-a CMDLINE] SCRIPT [ARGS...] [-- QEMU_ARGS...]
#
# The kernel: KVER (environment) names an installed Debian kernel, default
# the first of tests/vm/kernels.sh; its virtio/9p/overlay modules go into
# the initramfs.  -k IMAGE boots a kernel image with those drivers built in
# instead (the debug kernel of scripts/debug-kernel.sh).  -l LABEL is
# appended to every test line, "[LABEL]", default the kernel release, so a
# suite run on several kernels names each.  -a adds to the kernel command
# line.
#
# The guest sees the host root read-only (tmpfs overlay on top) and runs
# SCRIPT ARGS from the current directory, with the host's OMS_CHECK_TIER
# (quick under make check: the tests' bounds, tests/helpers.h).  Lines SCRIPT prints as
# "ok N ..." / "not ok N ..." come out renumbered in one sequence, other
# lines as "# ..." comments.  Two more TAP lines follow: the guest finished
# within the timeout (and SCRIPT's non-zero exit status is not ok unless
# SCRIPT printed a "not ok" itself), and its dmesg shows no
# BUG:/WARNING:/Oops/Call Trace or hung task report (the detectors of the
# debug kernel print these too).
# A guest that prints nothing of its user space (VM-BEGIN) for 300 s
# (900 s with -k; OMS_VM_BOOT_S overrides) is booted once more.
# The full console log stays in build/vm/NAME.log.  Exit status: 0 when no
# "not ok" was printed.
set -u
timeout_s=300 mem=1024 smp=2 name=guest image="" label="" append=""
while getopts t:m:s:n:k:l:a: o; do
	case $o in
	t) timeout_s=$OPTARG ;;
	m) mem=$OPTARG ;;
	s) smp=$OPTARG ;;
	n) name=$OPTARG ;;
	k) image=$OPTARG ;;
	l) label=$OPTARG ;;
	a) append=" $OPTARG" ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
script=${1:?usage: $0 [-t s] [-m MiB] [-s cpus] [-n name] SCRIPT [ARGS] [-- QEMU_ARGS]}
shift
here=$(cd "$(dirname "$0")" && pwd)
case $script in /*) ;; *) script=$(pwd)/$script ;; esac

quote() { printf "'%s' " "$(printf %s "$1" | sed "s/'/'\\\\''/g")"; }
vmargs=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	vmargs="$vmargs$(quote "$1")"
	shift
done
[ $# -gt 0 ] && shift	# the rest are QEMU arguments

if [ -n "$image" ]; then
	[ -f "$image" ] || { echo "not ok 1 - no kernel image $image"; exit 1; }
	kernel=$image kver=-
	[ -n "$label" ] || label=$(basename "$image")
else
	kver=${KVER:-$(sh "$here/kernels.sh" | head -n 1)}
	[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] ||
		{ echo "not ok 1 - no installed kernel '$kver' (tests/vm/kernels.sh)"; exit 1; }
	kernel=/boot/vmlinuz-$kver
	[ -n "$label" ] || label=$kver
fi

bdir=$(pwd)/build/vm
mkdir -p "$bdir"
initrd=$bdir/initramfs-$( [ "$kver" = - ] && echo builtin || echo "$kver").cpio.gz
if [ ! -f "$initrd" ] || [ "$here/init" -nt "$initrd" ] ||
   [ "$here/mkinitramfs.sh" -nt "$initrd" ]; then
	sh "$here/mkinitramfs.sh" "$kver" "$initrd" ||
		{ echo "not ok 1 - cannot build the initramfs"; exit 1; }
fi

envf=$(mktemp "$bdir/$name.env.XXXXXX")
qpid=""
trap 'rm -f "$envf"; [ -z "$qpid" ] || kill "$qpid" 2>/dev/null' EXIT INT TERM
log=$bdir/$name.log
tier=$(printf %s "${OMS_CHECK_TIER:-}" | tr -cd 'a-z')
soak_s=$(printf %s "${OMS_SOAK_S:-}" | tr -cd '0-9')
cat >"$envf" <<EOT
VM_DIR='$here'
VM_CWD='$(pwd)'
VM_SCRIPT='$script'
VM_ARGS="$(printf %s "$vmargs" | sed 's/["$`\\]/\\&/g')"
export OMS_CHECK_TIER='$tier'
export OMS_SOAK_S='$soak_s'
EOT

# no_timer_check: the kernel's early check that the IO-APIC timer ticks
# times a TCG CPU; on a host busy with two make checks it failed once and
# the guest panicked ("IO-APIC + timer doesn't work!") before user space.
# nohz=off: a TCG CPU of this QEMU (7.2, thread=multi) can run a stale
# translation of kernel text another CPU has just patched; once, in a 6.12
# guest at 2 s of boot, one trapped on the int3 of a patch already
# finished (RIP one byte into enqueue_timer's jump) and the guest oopsed.
# The kernel patches that jump (the timers_nohz_active static key) when
# its tick turns tickless, while the other CPU runs timers: with nohz=off
# the tick never does, and that key stays as it booted.
# Run in the background (&): exec, so that its pid is timeout's.
qemu() {
	console=$1
	shift
	exec timeout -k 5 "$timeout_s" qemu-system-x86_64 \
		-accel tcg,thread=multi -cpu max -smp "$smp" -m "$mem" \
		-nodefaults -display none -serial stdio -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 $console panic=-1 no_timer_check nohz=off vmenv=$envf$append" \
		-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		"$@" </dev/null >"$log" 2>&1
}

# A TCG guest reaches user space (VM-BEGIN) in seconds, a minute on a
# host busy with two make checks.  Once, on such a host, one printed
# nothing for its whole timeout: a guest still silent after boot_s is
# killed and booted once more, without "quiet" so that its console shows
# how far the kernel got; the first console is kept beside the log.  The
# debug kernel (-k: KASAN, lockdep) boots several times slower: 900 s.
boot_s=300
[ -z "$image" ] || boot_s=900
boot_s=${OMS_VM_BOOT_S:-$boot_s}
boot() {
	console=$1
	shift
	qemu "$console" "$@" &
	qpid=$!
	t=0
	while [ $t -lt $boot_s ] && kill -0 "$qpid" 2>/dev/null &&
	      ! grep -q VM-BEGIN "$log" 2>/dev/null; do
		sleep 1
		t=$((t + 1))
	done
	if kill -0 "$qpid" 2>/dev/null && ! grep -q VM-BEGIN "$log"; then
		kill "$qpid"
		wait "$qpid"
		qpid=""
		return 200
	fi
	wait "$qpid"
	qrc=$?
	qpid=""
	return $qrc
}
boot quiet "$@"
qrc=$?
if [ $qrc -eq 200 ]; then
	mv "$log" "$bdir/$name.first-boot.log"
	echo "# $name printed no VM-BEGIN in $boot_s s" \
	     "(console: $bdir/$name.first-boot.log): booting it again"
	boot loglevel=7 "$@"
	qrc=$?
fi

tr -d '\r' <"$log" | awk -v qrc="$qrc" -v tmo="$timeout_s" -v boot="$boot_s" -v logf="$log" \
	-v label="$label" '
	function emit(ok, text,    d) {
		n++
		if (!ok) bad++
		# The label goes before a directive ("# SKIP ...").
		d = ""
		if (match(text, / # (SKIP|TODO).*$/)) {
			d = substr(text, RSTART)
			text = substr(text, 1, RSTART - 1)
		}
		printf "%s %d %s [%s]%s\n", ok ? "ok" : "not ok", n, text, label, d
	}
	/^TAP\| / {
		l = substr($0, 6)
		if (match(l, /^(not )?ok [0-9]+/)) {
			ok = (l !~ /^not /)
			sub(/^(not )?ok [0-9]+ ?/, "", l)
			emit(ok, l)
		} else if (l ~ /^#/) {
			print l
		} else if (l !~ /^(TAP version|1\.\.)/ && l != "") {
			print "# " l
		}
		next
	}
	/^DMESG\| / {
		l = substr($0, 8)
		if (l ~ /BUG:|WARNING:|Oops|Call Trace|blocked for more than|general protection fault/)
			dm[++ndm] = l
		next
	}

	/^VM-DONE/ { done = 1; split($0, a, "="); grc = a[2]; next }
	/^VM-FATAL/ { fatal = $0 }
	END {
		if (done && grc != 0 && bad == 0)
			emit(0, "guest script exited with status " grc)
		else if (done)
			emit(1, "guest ran to completion (script status " grc ")")
		else
			emit(0, "guest did not finish: " \
			     (qrc == 124 ? "killed after " tmo " s" : \
			      qrc == 200 ? "no VM-BEGIN in " boot " s, twice" : \
			      (fatal != "" ? fatal : "qemu status " qrc)) \
			     " (console: " logf ")")
		if (!done)
			emit(0, "guest dmesg not collected")
		else if (ndm == 0)
			emit(1, "guest dmesg has no BUG:/WARNING:/Oops/Call Trace/hung task")
		else {
			for (i = 1; i <= ndm && i <= 40; i++) print "# dmesg: " dm[i]
			emit(0, "guest dmesg shows " ndm " BUG:/WARNING:/Oops/Call Trace/hung task lines")
		}
		exit bad > 0
	}'
rc=$?
if [ $rc -ne 0 ]; then
	echo "# last console lines:"
	tr -d '\r' <"$log" | grep -v '^DMESG| \|^TAP| ' | tail -n 15 | sed 's/^/#   /'
fi
exit $rc
