/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Settings and counters (lruopt_sysfs.c): the master switch, strict
 * parsers, bounded knobs that are also module parameters, per-cpu counter
 * sets, and the /sys/kernel/lruopt tree built from the feature table.
 */
#ifndef _LRUOPT_SYSFS_H
#define _LRUOPT_SYSFS_H

#include <linux/kobject.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sysfs.h>
#include "lruopt.h"

/* /sys/kernel/lruopt/enabled: every feature's path needs it on. */
extern bool lruopt_enabled;

/* True when the master switch and the feature's switch are both on. */
static inline bool lruopt_active(const struct lruopt_feature *f)
{
	return READ_ONCE(lruopt_enabled) && READ_ONCE(f->enabled);
}

/**
 * struct lruopt_counters - a set of per-cpu event counters shown under stats/
 * @names: one sysfs file name per counter, NULL-terminated
 * @is_max: optional, same length as @names: aggregate by max, not by sum
 * @vals: per-cpu array of counters, allocated by lruopt_counters_init()
 * @nr: number of counters (computed)
 * @attrs: the generated attributes (private to lruopt_sysfs.c)
 * @group: the "stats" attribute group (private to lruopt_sysfs.c)
 */
struct lruopt_counters {
	const char *const *names;
	const bool *is_max;
	u64 __percpu *vals;
	unsigned int nr;
	struct lruopt_counter_attr *attrs;
	struct attribute_group group;
};

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

/*
 * patch_<feature>: whether a feature whose replacement costs every call
 * goes into the livepatch: "0", "1" or "auto" (decided at load).
 */
enum { LRUOPT_PATCH_OFF, LRUOPT_PATCH_ON, LRUOPT_PATCH_AUTO };
extern const struct kernel_param_ops lruopt_patch_param_ops;

/* Define int patch_<feat>, default auto, and its module parameter. */
#define LRUOPT_PATCH_PARAM(feat, desc)					\
	static int patch_##feat = LRUOPT_PATCH_AUTO;			\
	module_param_cb(patch_##feat, &lruopt_patch_param_ops,		\
			&patch_##feat, 0444);				\
	MODULE_PARM_DESC(patch_##feat, desc)

extern const struct kernel_param_ops lruopt_feature_param_ops;

/*
 * <feat>_enabled: the initial value of a feature's switch, parsed like a
 * bool and remembered as given (an explicit 1 for a feature left out of the
 * patch refuses the load).  Beside the feature's descriptor.
 */
#define LRUOPT_FEATURE_PARAM(feat)					\
	module_param_cb(feat##_enabled, &lruopt_feature_param_ops,	\
			&lruopt_##feat##_feature, 0444);		\
	MODULE_PARM_DESC(feat##_enabled,				\
			 "Initial value of " #feat "/enabled (0|1; see docs/sysfs.md)")

const char *lruopt_patch_mode_name(int mode);

bool lruopt_fault_is(const char *what);
int lruopt_fault_apply(struct klp_func *funcs);
void lruopt_fault_free(void);

void lruopt_settings_changed(void);
const struct klp_func *lruopt_func_next(const struct klp_func *fn,
					unsigned int *feat);
int lruopt_sysfs_init(struct lruopt_feature *const *features, unsigned int nr);
void lruopt_sysfs_exit(void);

#endif /* _LRUOPT_SYSFS_H */
