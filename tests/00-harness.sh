#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 00-harness: the VM and the harness itself work, before lruopt is touched.
# A failure here means the results of later tests cannot be trusted.
# lruopt-timeout: 120
. /tests/lib.sh
. /tests/lib-munlock.sh
dmesg_mark "00-harness"

for p in kwrite mlockloop faultloop mlockhold; do
	check "test program $p is installed" test -x "/bin/$p"
done
check "/lruopt.ko is in the initramfs" test -f "$KO"
check "kernel has livepatch support ($(dirname "$LP"))" test -d "$(dirname "$LP")"
check "no livepatch is loaded at boot" sh -c '[ -z "$(ls /sys/kernel/livepatch)" ]'
check_not "lruopt is not loaded at boot" lruopt_loaded
assert_eq "Mlocked is 0 at boot" 0 "$(meminfo Mlocked)"
assert_eq "kernel is not tainted at boot" 0 "$(cat /proc/sys/kernel/tainted)"

# The workload programs detect their own failures; make sure they run.
check "mlockloop runs for 1 s" mlockloop 1 2
check "faultloop runs for 1 s" faultloop 1 2
check "mlock accounting works (Mlocked follows a 16 MiB mlock)" mlock_accounting 16

# kwrite reports errno names precisely; /proc/sys/kernel/tainted rejects text.
assert_eq "kwrite reports EINVAL" "write-err EINVAL" "$(kwrite /proc/sys/vm/swappiness abc)"
assert_eq "kwrite reports EACCES for read-only sysfs files" "open-err EACCES" "$(kwrite /sys/kernel/livepatch/../uevent_seqnum 1)"

# Stock modules with dependencies (from tests/stock-modules) load via modprobe.
fs_check() {
	modprobe brd rd_nr=1 rd_size=32768 || return 1
	mke2fs -q /dev/ram0 >/dev/null || return 1
	mkdir -p /mnt/t
	modprobe ext4 || return 1
	grep -q ext4 /proc/filesystems || { echo "ext4 not in /proc/filesystems"; return 1; }
	mount -t ext4 /dev/ram0 /mnt/t || { lsmod; dmesg | tail -5; return 1; }
	echo hello >/mnt/t/f && sync && [ "$(cat /mnt/t/f)" = hello ] || { umount /mnt/t; return 1; }
	umount /mnt/t && rmmod brd
}
check "stock modules brd + ext4 (with deps) load and mount" fs_check

check_dmesg_clean "no kernel warnings at boot" all
