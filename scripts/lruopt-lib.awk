# SPDX-License-Identifier: GPL-2.0
# lruopt-lib.awk: how lruopt-stat and lruopt-prometheus read
# /sys/kernel/lruopt (installed as /usr/share/lruopt/lruopt-lib.awk).  Not a
# program: each puts it in front of its own awk program.  Plain POSIX awk
# (mawk, gawk, busybox).

# lo_read(FILE): the first line of FILE, "" if there is none (then lo_gone
# is set to 1: the file is missing or empty)
function lo_read(f,   v) {
	v = ""
	if ((getline v < f) <= 0)
		lo_gone = 1
	close(f)
	return v
}

# lo_drain(LO): one sample of the lru_add_drain_all() calls that reached
# lruopt, split by caller class.  Reads LO/drain/callers, then stats/stock,
# then stats/calls: each call counts calls first, then stock or its caller
# row, so in this order hint + stock <= calls holds even while drains go on.
# Sets lo_calls and lo_stock (the files' lines), lo_hint (the sum of the
# calls column of the hint rows), lo_strict (the rest: calls - stock - hint,
# at least 0) and the rows of callers: lo_caller[i], lo_class[i] and
# lo_ccalls[i] for i = 1..lo_nrows.
function lo_drain(lo,   path, l, a) {
	lo_hint = 0
	lo_nrows = 0
	path = lo "/drain/callers"
	while ((getline l < path) > 0) {
		if (l ~ /^#/ || split(l, a, " ") < 3)
			continue
		lo_nrows++
		lo_caller[lo_nrows] = a[1]
		lo_class[lo_nrows] = a[2]
		lo_ccalls[lo_nrows] = a[3]
		if (a[2] == "hint")
			lo_hint += a[3]
	}
	close(path)
	lo_stock = lo_read(lo "/drain/stats/stock")
	lo_calls = lo_read(lo "/drain/stats/calls")
	lo_strict = lo_calls - lo_stock - lo_hint
	if (lo_strict < 0)
		lo_strict = 0
}
