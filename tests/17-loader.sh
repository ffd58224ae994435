#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 17-loader: lruopt-load, what lruopt.service runs at boot (scripts/; the
# image has it in /usr/sbin, as the .deb installs it).  A clean "boot"
# loads lruopt with the /etc/modprobe.d options, waits for the transition
# and clears the crash-guard marker; a boot that died after writing the
# marker (simulated: the loader is killed while modprobe hangs) makes the
# next run skip the load and say so; --rearm loads again; a load that fails
# cleanly reports it and leaves no marker.  Before 6.3 modprobe loads the
# events companion first (softdep; here a modules.dep line, below).
# lruopt-timeout: 600
. /tests/lib.sh
dmesg_mark "17-loader"
ensure_unloaded

K=$(uname -r)
MARKER=/var/lib/lruopt/loading
CONF=/etc/modprobe.d/lruopt.conf
# Where modprobe finds lruopt, as after the package's DKMS install.
mkdir -p "/lib/modules/$K/updates"
cp "$KO" "/lib/modules/$K/updates/lruopt.ko"
cp "/lib/modules/$K/modules.dep" /tmp/modules.dep.orig
COMPANION=0
[ "$(events_owner)" = lruopt_events ] && COMPANION=1
if [ $COMPANION = 1 ]; then
	# Before 6.3 the package installs the events companion too, and kmod's
	# modprobe loads it first from modules.softdep (lruopt's softdep
	# "pre: lruopt_events"); busybox's modprobe has no softdep, so a
	# modules.dep line stands in for it.
	cp "$EVKO" "/lib/modules/$K/updates/lruopt_events.ko"
	printf '%s\n' "updates/lruopt.ko: updates/lruopt_events.ko" "updates/lruopt_events.ko:" \
		>>"/lib/modules/$K/modules.dep"
	# As at boot: the companion is not loaded, modprobe must bring it.
	check "setup: lruopt_events unloaded" rmmod lruopt_events
else
	echo "updates/lruopt.ko:" >>"/lib/modules/$K/modules.dep"
fi
# A non-default option, to see that the loader's modprobe applies it.
echo "options lruopt munlock_batch=64 $LRUOPT_KO_PARAMS" >"$CONF"
rm -f "$MARKER"

# run_loader ARGS...: lruopt-load's exit status in RC, its output in OUT
run_loader() {
	OUT=$(lruopt-load --timeout "$TRANSITION_TIMEOUT" "$@" 2>&1)
	RC=$?
	diag "lruopt-load $*: status $RC: $OUT"
}

# loaded_ok WHAT: lruopt loaded by the loader, transition done, marker gone
loaded_ok() {
	assert_eq "$1: exit status 0" 0 "$RC"
	check "$1: lruopt is loaded" lruopt_loaded
	assert_eq "$1: $LP/transition is 0" 0 "$(readval "$LP/transition")"
	check_not "$1: the marker $MARKER is removed" test -e "$MARKER"
	assert_eq "$1: the /etc/modprobe.d option applies (munlock/batch)" 64 \
		"$(readval "$LO/munlock/batch")"
}

# --- a clean boot
run_loader
loaded_ok "clean boot"
if [ $COMPANION = 1 ]; then
	check "clean boot: modprobe loaded lruopt_events first" events_loaded
else
	check_not "clean boot: no lruopt_events on this kernel (lruopt.ko owns its events)" events_loaded
fi
case $OUT in
*"transition complete"*) pass "clean boot: says the transition completed" ;;
*) fail "clean boot: says the transition completed" "$OUT" ;;
esac
echo 1 >/proc/sys/vm/compact_memory
check "the patched kernel runs a drain after the loader's load" test "$(readval "$LO/drain/stats/calls")" -gt 0

run_loader
assert_eq "already loaded: exit status 0" 0 "$RC"
case $OUT in
*"loaded already"*) pass "already loaded: says so, no second modprobe" ;;
*) fail "already loaded: says so, no second modprobe" "$OUT" ;;
esac
check "setup: unload lruopt" unload_lruopt

# --- a boot that died after the marker: modprobe never returns, the
# loader is killed (as a crash would stop it), the marker stays.
mkdir -p /tmp/hang-bin
cat >/tmp/hang-bin/modprobe <<'EOF'
#!/bin/sh
echo $$ >/tmp/hang-bin/pid
exec sleep 600
EOF
chmod 0755 /tmp/hang-bin/modprobe
rm -f /tmp/hang-bin/pid
LRUOPT_MODPROBE=/tmp/hang-bin/modprobe lruopt-load >/tmp/loader-hang.out 2>&1 &
lpid=$!
bg_register "$lpid"
i=0
while [ ! -s /tmp/hang-bin/pid ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "simulated crash: the marker is on disk when modprobe runs" test -s "$MARKER"
kill -KILL "$lpid" "$(cat /tmp/hang-bin/pid 2>/dev/null)" 2>/dev/null
wait "$lpid" 2>/dev/null
bg_unregister "$lpid"
diag "marker: $(cat "$MARKER" 2>/dev/null)"

run_loader
assert_eq "next boot after the crash: exit status 4 (crash guard)" 4 "$RC"
case $OUT in
*"crash guard: not loading lruopt: $MARKER exists"*"--rearm"*)
	pass "next boot: says why it does not load and how to re-arm" ;;
*) fail "next boot: says why it does not load and how to re-arm" "$OUT" ;;
esac
check_not "next boot: lruopt is not loaded" lruopt_loaded
check "next boot: the marker stays" test -e "$MARKER"
run_loader
assert_eq "the boot after that: still not loading (status 4)" 4 "$RC"

run_loader --rearm
loaded_ok "--rearm"
case $OUT in
*"re-armed: removing $MARKER"*) pass "--rearm: says it removed the marker" ;;
*) fail "--rearm: says it removed the marker" "$OUT" ;;
esac
check "setup: unload lruopt" unload_lruopt

# --- an unused companion of another build left loaded (as after a
# package upgrade): the loader removes it and modprobe loads the pair.
if [ $COMPANION = 1 ]; then
	check "setup: a companion of another build" foreign_events /tmp/17-foreign.ko
	rmmod lruopt_events
	check "setup: an unused lruopt_events of another build is loaded" insmod /tmp/17-foreign.ko
	run_loader
	loaded_ok "after an upgrade"
	case $OUT in
	*"removed the unused lruopt_events"*) pass "after an upgrade: says it removed the old companion" ;;
	*) fail "after an upgrade: says it removed the old companion" "$OUT" ;;
	esac
	check "setup: unload lruopt" unload_lruopt
	rm -f /tmp/17-foreign.ko
fi

# --- a load that fails cleanly (a bad option: EINVAL) is reported and
# leaves no marker: the machine survived it.
echo "options lruopt munlock_batch=9999" >"$CONF"
run_loader
assert_eq "refused load: exit status 1" 1 "$RC"
case $OUT in
*"modprobe lruopt failed"*) pass "refused load: names the failed modprobe" ;;
*) fail "refused load: names the failed modprobe" "$OUT" ;;
esac
check_not "refused load: lruopt is not loaded" lruopt_loaded
check_not "refused load: no marker left" test -e "$MARKER"

rm -f "$CONF" "/lib/modules/$K/updates/lruopt.ko" "/lib/modules/$K/updates/lruopt_events.ko"
cp /tmp/modules.dep.orig "/lib/modules/$K/modules.dep"
check_dmesg_clean "no kernel warnings during the loader runs"
