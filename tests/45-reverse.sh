#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 45-reverse: disable the patch while its enable transition is still in
# progress (the livepatch core then reverses the transition), under load;
# the patch must go away completely and rmmod must work.  Also the state a
# test that is killed during insmod leaves behind for the next one.
# lruopt-timeout: 300
. /tests/lib.sh
dmesg_mark "45-reverse"
ensure_unloaded || exit 1

ROUNDS=${LRUOPT_REVERSE_ROUNDS:-3}
check "workload (mlockloop + faultloop) started" start_workload 900

reverse_once() {
	local ip n=0 r st
	insmod "$KO" $LRUOPT_KO_PARAMS &
	ip=$!
	# $LP appears inside klp_enable_patch(), before the transition starts.
	while [ ! -e "$LP/enabled" ] && [ $n -lt 1200 ]; do
		kill -0 $ip 2>/dev/null || break
		sleep 0.05
		n=$((n + 1))
	done
	if [ ! -e "$LP/enabled" ]; then
		wait $ip
		echo "$LP/enabled never appeared (insmod status $?)"
		return 1
	fi
	# The write blocks until klp_enable_patch() has started the transition
	# (both take klp_mutex), then reverses it; EINVAL here would mean the
	# patch had already been disabled by someone else.
	r=$(kwrite "$LP/enabled" 0)
	wait $ip
	st=$?
	echo "write 0 during enable: $r; insmod status $st"
	[ "$r" = "ok 1" ] || return 1
	[ $st -eq 0 ] || return 1
	unload_lruopt
}
i=1
while [ $i -le "$ROUNDS" ]; do
	check "round $i/$ROUNDS: disable during the enable transition, patch removed, rmmod works" reverse_once || break
	i=$((i + 1))
done

check "workload exits cleanly" stop_workload
check_not "lruopt is not loaded afterwards" lruopt_loaded
check "load after the reversed transitions works" load_lruopt
check "unload again" unload_lruopt
check_dmesg_clean "no kernel warnings from reversed transitions"
