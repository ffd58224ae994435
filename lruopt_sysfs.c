// SPDX-License-Identifier: GPL-2.0
/*
 * Settings and counters: the /sys/kernel/lruopt tree and the module
 * parameters.
 *
 * The library every feature builds its files with (strict parsers, bounded
 * knobs that are also module parameters, per-cpu counter sets shown under
 * stats/), the master switch, each feature's directory with its switch,
 * knobs and stats, the root files, and the testing-only fault switch.
 * lruopt_main.c hands the feature table over at init; nothing here touches
 * an unexported kernel symbol, so all of it may run before the livepatch
 * relocations are written (see the ordering rule in lruopt_main.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "lruopt_sysfs.h"

/* The feature table of lruopt_main.c, from lruopt_sysfs_init() on. */
static struct lruopt_feature *const *lruopt_features;
static unsigned int lruopt_nr_features;
static struct kobject *lruopt_kobj;

bool lruopt_enabled = true;
module_param_cb(enabled, &lruopt_bool_param_ops, &lruopt_enabled, 0444);
MODULE_PARM_DESC(enabled, "Initial value of /sys/kernel/lruopt/enabled (0|1, default 1)");

/* The values of every patch_<feature> parameter (lruopt_sysfs.h). */
static const char *const lruopt_patch_names[] = {
	[LRUOPT_PATCH_OFF] = "0",
	[LRUOPT_PATCH_ON] = "1",
	[LRUOPT_PATCH_AUTO] = "auto",
};

/* Exactly "auto", "1" or "0": anything else fails insmod with -EINVAL. */
static int lruopt_patch_param_set(const char *val,
				  const struct kernel_param *kp)
{
	int i = val ? __sysfs_match_string(lruopt_patch_names,
					   ARRAY_SIZE(lruopt_patch_names),
					   val) : -EINVAL;

	if (i < 0)
		return -EINVAL;	/* the module loader logs the parameter */
	*(int *)kp->arg = i;
	return 0;
}

static int lruopt_patch_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", lruopt_patch_names[*(int *)kp->arg]);
}

const struct kernel_param_ops lruopt_patch_param_ops = {
	.set = lruopt_patch_param_set,
	.get = lruopt_patch_param_get,
};

/**
 * lruopt_patch_mode_name - the parameter value of a patch_<feature> mode
 * @mode: LRUOPT_PATCH_OFF, LRUOPT_PATCH_ON or LRUOPT_PATCH_AUTO
 *
 * Return: "0", "1" or "auto".
 */
const char *lruopt_patch_mode_name(int mode)
{
	return lruopt_patch_names[mode];
}

static char *fault_target;
module_param(fault_target, charp, 0444);
MODULE_PARM_DESC(fault_target,
		 "Testing only: ask livepatch for a misspelt copy of this target function, to exercise the refusal path; drain_endbr: fail the ENDBR64 check of the PREEMPT_RT remote drain; drain_nomem: fail every allocation of a drain's wait block; drain_hold: hold a strict PREEMPT_RT remote drain's lock for a hint call of drain_call");

/* Faults that are not a target function: the feature concerned checks. */
static const char *const lruopt_soft_faults[] = {
	"drain_endbr", "drain_nomem", "drain_hold",
};

/**
 * lruopt_fault_is - is the testing-only fault @what requested?
 * @what: one of lruopt_soft_faults[]
 *
 * Return: true when the fault_target module parameter names @what.
 */
bool lruopt_fault_is(const char *what)
{
	return fault_target && !strcmp(fault_target, what);
}

static char *lruopt_fault_name;

/**
 * lruopt_fault_apply - misspell the fault_target function, if one is asked for
 * @funcs: the patch's functions, terminated by { }
 *
 * Testing only (50-refuse): asks livepatch for a misspelt copy of the
 * fault_target function, so that klp_enable_patch() fails the way it does
 * on a kernel lacking that function.  lruopt_fault_free() frees the name.
 *
 * Return: 0, -EINVAL (not a target of this kernel) or -ENOMEM.
 */
int lruopt_fault_apply(struct klp_func *funcs)
{
	struct klp_func *fn;

	if (!fault_target)
		return 0;
	if (match_string(lruopt_soft_faults, ARRAY_SIZE(lruopt_soft_faults),
			 fault_target) >= 0)
		return 0;
	for (fn = funcs; fn->old_name; fn++)
		if (!strcmp(fault_target, fn->old_name))
			break;
	if (!fn->old_name) {
		pr_err("fault_target=%s is not one of this kernel's targets\n",
		       fault_target);
		return -EINVAL;
	}
	lruopt_fault_name = kasprintf(GFP_KERNEL, "%s_lruopt_fault",
				      fn->old_name);
	if (!lruopt_fault_name)
		return -ENOMEM;
	fn->old_name = lruopt_fault_name;
	return 0;
}

/**
 * lruopt_fault_free - free the name lruopt_fault_apply() made
 */
void lruopt_fault_free(void)
{
	kfree(lruopt_fault_name);
	lruopt_fault_name = NULL;
}

/* ---------------------------------------------------------------- parsing */

/**
 * lruopt_parse_uint - parse one unsigned decimal value written to sysfs
 * @buf: the written bytes (sysfs NUL-terminates them at @count)
 * @count: number of bytes written
 * @min: smallest accepted value
 * @max: largest accepted value
 * @res: where the value goes; untouched on error
 *
 * Accepts decimal digits with one optional trailing newline, as
 * kstrtouint() does, but not its leading '+', and rejects embedded NUL
 * bytes, which kstrtouint() would silently stop at.
 *
 * Return: 0 or -EINVAL.
 */
int lruopt_parse_uint(const char *buf, size_t count, unsigned int min,
		      unsigned int max, unsigned int *res)
{
	unsigned int v;

	/* digits first: kstrtouint() would also take a leading '+' */
	if (!isdigit(buf[0]) || strnlen(buf, count) != count ||
	    kstrtouint(buf, 10, &v))
		return -EINVAL;
	if (v < min || v > max)
		return -EINVAL;
	*res = v;
	return 0;
}

/**
 * lruopt_uint_show - show method of a struct lruopt_uint_attr knob
 * @kobj: the knob's directory
 * @attr: the knob's kobj_attribute, embedded in its lruopt_uint_attr
 * @buf: the sysfs page
 *
 * Return: the number of bytes written to @buf.
 */
ssize_t lruopt_uint_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct lruopt_uint_attr *ua =
		container_of(attr, struct lruopt_uint_attr, kattr);

	return sysfs_emit(buf, "%u\n", READ_ONCE(*ua->val));
}

/**
 * lruopt_uint_store - store method of a struct lruopt_uint_attr knob
 * @kobj: the knob's directory
 * @attr: the knob's kobj_attribute, embedded in its lruopt_uint_attr
 * @buf: the written bytes
 * @count: number of bytes written
 *
 * Takes the value only if lruopt_parse_uint() accepts it within the knob's
 * bounds; otherwise the knob keeps its value.
 *
 * Return: @count or -EINVAL.
 */
ssize_t lruopt_uint_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count)
{
	struct lruopt_uint_attr *ua =
		container_of(attr, struct lruopt_uint_attr, kattr);
	unsigned int v;

	if (lruopt_parse_uint(buf, count, ua->min, ua->max, &v))
		return -EINVAL;
	WRITE_ONCE(*ua->val, v);
	return count;
}

/**
 * lruopt_parse_bool - parse a 0|1 sysfs write strictly
 * @buf: the written bytes
 * @count: number of bytes written
 * @res: where the value goes; untouched on error
 *
 * Exactly "0" or "1", optionally followed by one newline: a switch is not a
 * place for "01", "+1", "on" or "y".
 *
 * Return: 0 or -EINVAL.
 */
int lruopt_parse_bool(const char *buf, size_t count, bool *res)
{
	if (count == 2 && buf[1] == '\n')
		count = 1;
	if (count != 1 || (buf[0] != '0' && buf[0] != '1'))
		return -EINVAL;
	*res = buf[0] == '1';
	return 0;
}

/**
 * lruopt_store_bool - store a strict 0|1 sysfs write into a switch
 * @buf: the written bytes
 * @count: number of bytes written
 * @var: the switch; unchanged unless the input is exactly 0 or 1
 *
 * Return: @count or -EINVAL.
 */
ssize_t lruopt_store_bool(const char *buf, size_t count, bool *var)
{
	bool v;
	int ret = lruopt_parse_bool(buf, count, &v);

	if (ret)
		return ret;
	WRITE_ONCE(*var, v);
	return count;
}

/* ------------------------------------------------------ module parameters */

static int lruopt_uint_param_set(const char *val, const struct kernel_param *kp)
{
	struct lruopt_uint_attr *ua = kp->arg;
	unsigned int v;

	/* the loader hands the bare value: no newline, NUL-terminated */
	if (lruopt_parse_uint(val, strlen(val), ua->min, ua->max, &v))
		return -EINVAL;
	WRITE_ONCE(*ua->val, v);
	return 0;
}

static int lruopt_uint_param_get(char *buf, const struct kernel_param *kp)
{
	struct lruopt_uint_attr *ua = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*ua->val));
}

const struct kernel_param_ops lruopt_uint_param_ops = {
	.set = lruopt_uint_param_set,
	.get = lruopt_uint_param_get,
};

/* "bool" params would also take y/n/on/off: the sysfs files do not */
static int lruopt_parse_param_bool(const char *val, bool *res)
{
	return val ? lruopt_parse_bool(val, strlen(val), res) : -EINVAL;
}

static int lruopt_bool_param_set(const char *val, const struct kernel_param *kp)
{
	bool v;

	if (lruopt_parse_param_bool(val, &v))
		return -EINVAL;
	WRITE_ONCE(*(bool *)kp->arg, v);
	return 0;
}

static int lruopt_bool_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(*(bool *)kp->arg));
}

const struct kernel_param_ops lruopt_bool_param_ops = {
	.set = lruopt_bool_param_set,
	.get = lruopt_bool_param_get,
};

/* A feature's switch: parsed like a bool, and remembered as given. */
static int lruopt_feature_param_set(const char *val,
				    const struct kernel_param *kp)
{
	struct lruopt_feature *f = kp->arg;
	bool v;

	if (lruopt_parse_param_bool(val, &v))
		return -EINVAL;
	WRITE_ONCE(f->enabled, v);
	f->enabled_param = true;
	return 0;
}

static int lruopt_feature_param_get(char *buf, const struct kernel_param *kp)
{
	struct lruopt_feature *f = kp->arg;

	return sysfs_emit(buf, "%d\n", READ_ONCE(f->enabled));
}

const struct kernel_param_ops lruopt_feature_param_ops = {
	.set = lruopt_feature_param_set,
	.get = lruopt_feature_param_get,
};

/*
 * A feature switched on by parameter that this kernel (or this load's
 * patch_memcg choice) leaves out of the patch is an error, not a silently
 * different setting; one left at its default just reads 0.
 */
static int lruopt_check_feature_params(void)
{
	unsigned int i;

	for (i = 0; i < lruopt_nr_features; i++) {
		struct lruopt_feature *f = lruopt_features[i];

		if (f->supported || !f->enabled)
			continue;
		if (f->enabled_param) {
			pr_err("refusing to load: %s_enabled=1, but %s is not in the patch on this kernel\n",
			       f->name, f->name);
			return -EINVAL;
		}
		f->enabled = false;
	}
	return 0;
}

/* ------------------------------------------------------------ root files */

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(lruopt_enabled));
}

/**
 * lruopt_settings_changed - a switch or knob was written
 *
 * Tells the features that follow settings (their @changed hook), e.g. the
 * quiet CPUs, which follow the master and quiet switches and the drain's
 * skip knobs.  Process context; may sleep.
 */
void lruopt_settings_changed(void)
{
	unsigned int i;

	for (i = 0; i < lruopt_nr_features; i++)
		if (lruopt_features[i]->changed)
			lruopt_features[i]->changed();
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	ssize_t ret = lruopt_store_bool(buf, count, &lruopt_enabled);

	if (ret > 0)
		lruopt_settings_changed();
	return ret;
}

static struct kobj_attribute enabled_attr = __ATTR_RW_MODE(enabled, 0644);

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", LRUOPT_VERSION);
}

static struct kobj_attribute version_attr = __ATTR_RO(version);

/**
 * lruopt_func_next - walk the livepatch functions of the features in the patch
 * @fn: the previous function, or NULL to start
 * @feat: set to the index of the returned function's feature
 *
 * Walks every supported feature's @funcs, in feature order.
 *
 * Return: the next function, or NULL at the end.
 */
const struct klp_func *lruopt_func_next(const struct klp_func *fn,
					unsigned int *feat)
{
	if (fn && (++fn)->old_name)
		return fn;
	*feat = fn ? *feat + 1 : 0;
	for (; *feat < lruopt_nr_features; ++*feat)
		if (lruopt_features[*feat]->supported &&
		    lruopt_features[*feat]->funcs->old_name)
			return lruopt_features[*feat]->funcs;
	return NULL;
}

static ssize_t targets_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	const struct klp_func *fn;
	unsigned int i;
	int len = 0;

	for (fn = lruopt_func_next(NULL, &i); fn; fn = lruopt_func_next(fn, &i))
		len += sysfs_emit_at(buf, len, "%s %s\n", fn->old_name,
				     lruopt_features[i]->name);
	return len;
}

static struct kobj_attribute targets_attr = __ATTR_RO(targets);

static struct attribute *lruopt_root_attrs[] = {
	&enabled_attr.attr,
	&version_attr.attr,
	&targets_attr.attr,
	NULL,
};

static const struct attribute_group lruopt_root_group = {
	.attrs = lruopt_root_attrs,
};

/* ------------------------------------------------ per-feature switches */

static struct lruopt_feature *lruopt_feature_of(struct kobject *kobj)
{
	unsigned int i;

	for (i = 0; i < lruopt_nr_features; i++)
		if (lruopt_features[i]->kobj == kobj)
			return lruopt_features[i];
	return NULL;
}

static ssize_t feature_enabled_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  READ_ONCE(lruopt_feature_of(kobj)->enabled));
}

static ssize_t feature_enabled_store(struct kobject *kobj,
				     struct kobj_attribute *attr,
				     const char *buf, size_t count)
{
	struct lruopt_feature *f = lruopt_feature_of(kobj);
	bool v;

	if (lruopt_parse_bool(buf, count, &v))
		return -EINVAL;
	/* A feature the kernel has no path for cannot be switched on. */
	if (v && !f->supported)
		return -EINVAL;
	WRITE_ONCE(f->enabled, v);
	lruopt_settings_changed();
	return count;
}

static struct kobj_attribute feature_enabled_attr =
	__ATTR(enabled, 0644, feature_enabled_show, feature_enabled_store);

/* 0: this kernel, or this load's patch_<feature> choice, left it out. */
static ssize_t feature_supported_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", lruopt_feature_of(kobj)->supported);
}

static struct kobj_attribute feature_supported_attr =
	__ATTR(supported, 0444, feature_supported_show, NULL);

static struct attribute *lruopt_feature_attrs[] = {
	&feature_enabled_attr.attr,
	&feature_supported_attr.attr,
	NULL,
};

static const struct attribute_group lruopt_feature_group = {
	.attrs = lruopt_feature_attrs,
};

/* ---------------------------------------------------------- stats files */

struct lruopt_counter_attr {
	struct kobj_attribute kattr;
	struct lruopt_counters *set;
	unsigned int idx;
};

static ssize_t counter_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct lruopt_counter_attr *ca =
		container_of(attr, struct lruopt_counter_attr, kattr);
	struct lruopt_counters *c = ca->set;
	bool is_max = c->is_max && c->is_max[ca->idx];
	u64 v = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		u64 x = *per_cpu_ptr(&c->vals[ca->idx], cpu);

		v = is_max ? max(v, x) : v + x;
	}
	return sysfs_emit(buf, "%llu\n", v);
}

/* stats/reset: writing 0 clears every counter of the set. */
static ssize_t reset_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	struct lruopt_counter_attr *ca =
		container_of(attr, struct lruopt_counter_attr, kattr);
	struct lruopt_counters *c = ca->set;
	unsigned int v, i;
	int cpu;

	if (lruopt_parse_uint(buf, count, 0, 0, &v))
		return -EINVAL;
	/*
	 * Racy against concurrent increments by design: a reset is a test and
	 * benchmark aid, and a count that lands during it is simply kept.
	 */
	for_each_possible_cpu(cpu)
		for (i = 0; i < c->nr; i++)
			WRITE_ONCE(*per_cpu_ptr(&c->vals[i], cpu), 0);
	return count;
}

static void lruopt_counters_exit(struct lruopt_counters *c)
{
	kfree(c->attrs);
	kfree(c->group.attrs);
	free_percpu(c->vals);
	c->attrs = NULL;
	c->group.attrs = NULL;
	c->vals = NULL;
}

static int lruopt_counters_init(struct lruopt_counters *c)
{
	unsigned int i;

	for (c->nr = 0; c->names[c->nr]; c->nr++)
		;
	c->vals = __alloc_percpu(sizeof(u64) * c->nr, __alignof__(u64));
	/* nr counters plus the reset file */
	c->attrs = kcalloc(c->nr + 1, sizeof(*c->attrs), GFP_KERNEL);
	c->group.attrs = kcalloc(c->nr + 2, sizeof(*c->group.attrs),
				 GFP_KERNEL);
	if (!c->vals || !c->attrs || !c->group.attrs) {
		lruopt_counters_exit(c);
		return -ENOMEM;
	}
	for (i = 0; i <= c->nr; i++) {
		struct lruopt_counter_attr *ca = &c->attrs[i];

		sysfs_attr_init(&ca->kattr.attr);
		ca->set = c;
		ca->idx = i;
		if (i < c->nr) {
			ca->kattr.attr.name = c->names[i];
			ca->kattr.attr.mode = 0444;
			ca->kattr.show = counter_show;
		} else {
			ca->kattr.attr.name = "reset";
			ca->kattr.attr.mode = 0200;
			ca->kattr.store = reset_store;
		}
		c->group.attrs[i] = &ca->kattr.attr;
	}
	c->group.name = "stats";
	return 0;
}

/* ------------------------------------------------------------ the tree */

static void lruopt_feature_exit(struct lruopt_feature *f)
{
	if (f->kobj) {
		kobject_put(f->kobj);
		f->kobj = NULL;
	}
	if (f->counters)
		lruopt_counters_exit(f->counters);
	if (f->exit)
		f->exit();
}

static int lruopt_feature_init(struct lruopt_feature *f)
{
	struct attribute_group knobs = { .attrs = f->attrs };
	const struct attribute_group *groups[4] = { };
	int ret, n = 0;

	if (f->init) {
		ret = f->init();
		if (ret)
			return ret;
	}
	if (f->counters) {
		ret = lruopt_counters_init(f->counters);
		if (ret)
			goto err;
	}
	ret = -ENOMEM;
	f->kobj = kobject_create_and_add(f->name, lruopt_kobj);
	if (!f->kobj)
		goto err;
	groups[n++] = &lruopt_feature_group;
	if (f->attrs)
		groups[n++] = &knobs;
	if (f->counters)
		groups[n++] = &f->counters->group;
	ret = sysfs_create_groups(f->kobj, groups);
	if (ret)
		goto err;
	return 0;
err:
	/* kobject_put() removes whatever groups were created */
	lruopt_feature_exit(f);
	return ret;
}

/* Undo lruopt_features_init() for the first @n features, last first. */
static void lruopt_features_exit(int n)
{
	while (n-- > 0)
		lruopt_feature_exit(lruopt_features[n]);
}

static int lruopt_features_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < lruopt_nr_features; i++) {
		ret = lruopt_feature_init(lruopt_features[i]);
		if (ret) {
			lruopt_features_exit(i);
			return ret;
		}
	}
	return 0;
}

/**
 * lruopt_sysfs_init - check the parameters and build /sys/kernel/lruopt
 * @features: the feature table (lruopt_main.c), kept until lruopt_sysfs_exit()
 * @nr: number of entries of @features
 *
 * Runs after every feature's @decide: refuses a switch given as a
 * parameter for a feature left out of the patch, then creates the root
 * files and each feature's directory (running its @init).
 *
 * Return: 0, or an errno with nothing left behind.
 */
int lruopt_sysfs_init(struct lruopt_feature *const *features, unsigned int nr)
{
	int ret;

	lruopt_features = features;
	lruopt_nr_features = nr;
	ret = lruopt_check_feature_params();
	if (ret)
		return ret;
	lruopt_kobj = kobject_create_and_add("lruopt", kernel_kobj);
	if (!lruopt_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(lruopt_kobj, &lruopt_root_group);
	if (ret)
		goto err_kobj;
	ret = lruopt_features_init();
	if (ret)
		goto err_kobj;
	return 0;

err_kobj:
	kobject_put(lruopt_kobj);
	lruopt_kobj = NULL;
	return ret;
}

/**
 * lruopt_sysfs_exit - undo lruopt_sysfs_init()
 *
 * Runs each feature's @exit, after the patch is gone.
 */
void lruopt_sysfs_exit(void)
{
	lruopt_features_exit(lruopt_nr_features);
	kobject_put(lruopt_kobj);
	lruopt_kobj = NULL;
}
