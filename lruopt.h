/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared declarations of the lruopt livepatch module.
 */
#ifndef _LRUOPT_H
#define _LRUOPT_H

#include <linux/kobject.h>
#include <linux/livepatch.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sysfs.h>
#include "lruopt_compat.h"

#define LRUOPT_VERSION "0.2.0"

/**
 * struct lruopt_counters - a set of per-cpu event counters shown under stats/
 * @names: one sysfs file name per counter, NULL-terminated
 * @is_max: optional, same length as @names: aggregate by max, not by sum
 * @vals: per-cpu array of counters, allocated by lruopt_counters_init()
 * @nr: number of counters (computed)
 * @attrs: the generated attributes (private to lruopt_main.c)
 * @group: the "stats" attribute group (private to lruopt_main.c)
 */
struct lruopt_counters {
	const char *const *names;
	const bool *is_max;
	u64 __percpu *vals;
	unsigned int nr;
	struct lruopt_counter_attr *attrs;
	struct attribute_group group;
};

/**
 * struct lruopt_feature - one replaced kernel hot path and its sysfs directory
 * @name: directory name under /sys/kernel/lruopt
 * @enabled: the feature switch; the hot path reads it with READ_ONCE()
 * @supported: false when the running kernel has nothing to replace
 * @funcs: the livepatch functions of this feature, terminated by { }
 * @attrs: feature-specific files (knobs), NULL-terminated, may be NULL
 * @counters: the feature's stats/ files, may be NULL
 * @init: allocate state; runs before the patch is enabled, so it must not
 *        touch any unexported kernel symbol (they are resolved later)
 * @bound: may be NULL; runs once klp_enable_patch() has written the
 *         livepatch relocations, the first point where unexported symbols
 *         may be read; cannot fail (init must not fail after that point)
 * @exit: free state; runs after the patch is gone
 * @decide: may be NULL; runs first at load and may clear @supported to leave
 *          the feature out of the patch (its patch_<feature> parameter,
 *          named by @patch_param, value in *@patch_mode); returns why, for
 *          the log line printed once the patch is enabled
 * @patch_param: with @decide: the parameter's name, "patch_<feature>"
 * @patch_mode: with @decide: the parameter (LRUOPT_PATCH_*)
 * @unsupported_why: may be NULL; why this kernel has nothing to replace
 * @changed: may be NULL; runs after any switch (the feature's, the
 *           master) was written, may sleep
 * @live: may be NULL; runs with true once the transition to the patch has
 *        completed (every task runs the new functions) and with false
 *        before the patch starts going away; may sleep
 * @kobj: the feature's directory (private to lruopt_main.c)
 * @enabled_param: @enabled was given as a module parameter (lruopt_main.c)
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
	const char *patch_param;
	const int *patch_mode;
	const char *unsupported_why;
	void (*changed)(void);
	void (*live)(bool live);
	struct kobject *kobj;
	bool enabled_param;
};

extern bool lruopt_enabled;
extern struct lruopt_feature lruopt_drain_feature;
extern struct lruopt_feature lruopt_munlock_feature;
extern struct lruopt_feature lruopt_memcg_feature;
extern struct lruopt_feature lruopt_quiet_feature;

void lruopt_settings_changed(void);

/* What the quiet CPUs (lruopt_quiet.c) take from the drain (lruopt_drain.c). */
bool lruopt_cpu_isolated(int cpu);
bool lruopt_drain_skips(int cpu);
void lruopt_drain_cpu_nowait(int cpu);

/*
 * patch_<feature>: whether a feature whose replacement costs every call
 * goes into the livepatch: "0", "1" or "auto" (decided at load).
 */
enum { LRUOPT_PATCH_OFF, LRUOPT_PATCH_ON, LRUOPT_PATCH_AUTO };
extern const struct kernel_param_ops lruopt_patch_param_ops;

/* True when the master switch and the feature's switch are both on. */
static inline bool lruopt_active(const struct lruopt_feature *f)
{
	return READ_ONCE(lruopt_enabled) && READ_ONCE(f->enabled);
}

static inline void lruopt_count(struct lruopt_counters *c, unsigned int i,
				u64 n)
{
	this_cpu_add(c->vals[i], n);
}

/* Raise this CPU's @p to @v; the reader takes the max over all CPUs. */
static inline void lruopt_percpu_max(u64 __percpu *p, u64 v)
{
	preempt_disable();
	if (v > __this_cpu_read(*p))
		__this_cpu_write(*p, v);
	preempt_enable();
}

/* Raise a per-cpu maximum of a counter set. */
static inline void lruopt_count_max(struct lruopt_counters *c, unsigned int i,
				    u64 v)
{
	lruopt_percpu_max(&c->vals[i], v);
}

int lruopt_parse_uint(const char *buf, size_t count, unsigned int min,
		      unsigned int max, unsigned int *res);

/**
 * struct lruopt_uint_attr - a bounded unsigned knob in sysfs
 * @kattr: the attribute; show/store are lruopt_uint_show/lruopt_uint_store
 * @val: the knob; hot paths read it with READ_ONCE()
 * @min: smallest accepted value
 * @max: largest accepted value
 */
struct lruopt_uint_attr {
	struct kobj_attribute kattr;
	unsigned int *val;
	unsigned int min, max;
};

ssize_t lruopt_uint_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf);
ssize_t lruopt_uint_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count);

/* Define <name>_attr, a 0644 knob bound to @var, accepting @lo..@hi. */
#define LRUOPT_UINT_ATTR(name, var, lo, hi)				\
	struct lruopt_uint_attr name##_attr = {				\
		.kattr = __ATTR(name, 0644, lruopt_uint_show,		\
				lruopt_uint_store),			\
		.val = &(var), .min = (lo), .max = (hi),		\
	}

/*
 * Every knob is also a module parameter "<feature>_<knob>", read-only under
 * /sys/module/lruopt/parameters/ (the knob is written under
 * /sys/kernel/lruopt/), and validated by the same parser as the sysfs file:
 * a bad value makes the load fail with -EINVAL, and the kernel's parameter
 * parser names the parameter in dmesg.
 */
extern const struct kernel_param_ops lruopt_uint_param_ops;
extern const struct kernel_param_ops lruopt_bool_param_ops;

/* LRUOPT_UINT_ATTR() plus its module parameter @feat_@name. */
#define LRUOPT_UINT_KNOB(feat, name, var, lo, hi, desc)			\
	static LRUOPT_UINT_ATTR(name, var, lo, hi);				\
	module_param_cb(feat##_##name, &lruopt_uint_param_ops, &name##_attr,	\
			0444);							\
	MODULE_PARM_DESC(feat##_##name, desc)

int lruopt_parse_bool(const char *buf, size_t count, bool *res);
ssize_t lruopt_store_bool(const char *buf, size_t count, bool *var);
bool lruopt_fault_is(const char *what);

#endif /* _LRUOPT_H */
