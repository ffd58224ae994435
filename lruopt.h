/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared declarations of the lruopt livepatch module: the feature
 * descriptor every feature fills in (lruopt_main.c wires them) and what
 * one feature takes from another.  The settings and counters library, with
 * the switches a feature's path reads, is lruopt_sysfs.h.
 */
#ifndef _LRUOPT_H
#define _LRUOPT_H

#include <linux/kobject.h>
#include <linux/livepatch.h>
#include "lruopt_compat.h"

struct lruopt_counters;

#define LRUOPT_VERSION "0.3.2"

/**
 * struct lruopt_feature - one replaced kernel hot path and its sysfs directory
 * @name: directory name under /sys/kernel/lruopt
 * @enabled: the feature switch; the hot path reads it with READ_ONCE()
 * @supported: whether the feature is in the patch, set at load: false when
 *             the running kernel has nothing to replace (@unsupported_why)
 *             or @decide left the feature out
 * @funcs: the livepatch functions of this feature (LRUOPT_FUNC()),
 *         terminated by { }
 * @attrs: feature-specific files (knobs), NULL-terminated, may be NULL
 * @counters: the feature's stats/ files, may be NULL
 * @init: allocate state; runs before the patch is enabled, so it must not
 *        touch any unexported kernel symbol (they are resolved later)
 * @bound: may be NULL; runs once klp_enable_patch() has written the
 *         livepatch relocations, the first point where unexported symbols
 *         may be read; cannot fail (init must not fail after that point)
 * @exit: free state; runs after the patch is gone
 * @decide: may be NULL; what patch_<feature>=auto decides (its parameter,
 *          patch_<feature>, value in *@patch_mode; 0 and 1 need no
 *          decision): runs first at load, only where the kernel has the
 *          feature, and may clear @supported to leave the feature out of
 *          the patch; returns why, for the log line printed once the patch
 *          is enabled
 * @patch_mode: with @decide: the parameter (LRUOPT_PATCH_PARAM())
 * @unsupported_why: NULL where the kernel has the feature; else why this
 *                   kernel has nothing to replace
 * @changed: may be NULL; runs after any switch (the feature's, the
 *           master) was written, may sleep
 * @live: may be NULL; runs with true once the transition to the patch has
 *        completed (every task runs the new functions) and with false
 *        before the patch starts going away; may sleep
 * @kobj: the feature's directory (private to lruopt_sysfs.c)
 * @enabled_param: @enabled was given as a module parameter (lruopt_sysfs.c)
 */
struct lruopt_feature {
	const char *name;
	bool enabled;
	bool supported;
	const struct klp_func *funcs;
	struct attribute **attrs;
	struct lruopt_counters *counters;
	int (*init)(void);
	void (*bound)(void);
	void (*exit)(void);
	const char *(*decide)(void);
	const int *patch_mode;
	const char *unsupported_why;
	void (*changed)(void);
	void (*live)(bool live);
	struct kobject *kobj;
	bool enabled_param;
};

/* A livepatch function: lruopt_<fn>() replaces the kernel's <fn>(). */
#define LRUOPT_FUNC(fn) { .old_name = #fn, .new_func = lruopt_##fn }

extern struct lruopt_feature lruopt_drain_feature;
extern struct lruopt_feature lruopt_munlock_feature;
extern struct lruopt_feature lruopt_memcg_feature;
extern struct lruopt_feature lruopt_quiet_feature;
extern struct lruopt_feature lruopt_lazyfree_feature;

/* What the quiet CPUs (lruopt_quiet.c) take from the drain (lruopt_drain.c). */
bool lruopt_cpu_isolated(int cpu);
bool lruopt_drain_skips(int cpu);
void lruopt_drain_cpu_nowait(int cpu);

#endif /* _LRUOPT_H */
