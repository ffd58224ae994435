// SPDX-License-Identifier: GPL-2.0
/*
 * Module entry: the feature table, kernel binding, the livepatch.
 *
 * lruopt replaces LRU hot paths of the running kernel through one
 * livepatch (see README.md): lru_add_drain_all() (lruopt_drain.c), the
 * mlock/munlock page walk mlock_pte_range() (lruopt_munlock.c), where
 * the kernel still has cgroup-v1 charge moving, folio_memcg_lock()/unlock()
 * (lruopt_memcg.c), the LRU batch adders on quiet CPUs (lruopt_quiet.c)
 * and MADV_FREE under memory pressure (lruopt_lazyfree.c).  Every
 * replacement keeps a stock path that runs whenever
 * /sys/kernel/lruopt/enabled or the feature's own switch is 0.
 *
 * Binding to the kernel is done at build time, not guessed at run time:
 *  - private structure layouts are static_asserted against the target's BTF
 *    (lruopt_compat.h, scripts/btf-layout);
 *  - unexported symbols become livepatch relocations (scripts/klp-convert),
 *    reached only by direct calls, which keeps the module IBT-safe;
 *  - the kernel's UTS version is recorded, and a different kernel build is
 *    refused here, before anything is registered.
 *
 * The settings, the counters and the sysfs tree are lruopt_sysfs.c's; this
 * file wires the features (the table below) to it and to livepatch.
 *
 * Ordering rule: the livepatch relocations are written by klp_enable_patch().
 * Until it returns 0 no code path may touch an unexported symbol, so all the
 * state and the sysfs tree are set up first (sysfs handlers never use such
 * symbols) and klp_enable_patch() is the last step of init.  Once it has
 * succeeded nothing in init can fail any more: a livepatch cannot be
 * unwound synchronously from init.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include "lruopt_sysfs.h"
#include "lruopt_trace.h"

static struct lruopt_feature *const lruopt_features[] = {
	&lruopt_drain_feature,
	&lruopt_munlock_feature,
	&lruopt_memcg_feature,
	&lruopt_quiet_feature,
	&lruopt_lazyfree_feature,
};

static struct klp_func *lruopt_funcs;

/*
 * The livepatch callbacks (Documentation/livepatch/callbacks.rst): post-patch
 * runs once every task runs the new functions, pre-unpatch before any task
 * can go back to the old ones.  Both run under the livepatch core's mutex
 * and may sleep.
 */
static void lruopt_features_live(bool live)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(lruopt_features); i++)
		if (lruopt_features[i]->supported && lruopt_features[i]->live)
			lruopt_features[i]->live(live);
}

static void lruopt_post_patch(struct klp_object *obj)
{
	lruopt_features_live(true);
}

static void lruopt_pre_unpatch(struct klp_object *obj)
{
	lruopt_features_live(false);
}

static struct klp_object lruopt_objs[2] = {
	{
		.callbacks = {
			.post_patch = lruopt_post_patch,
			.pre_unpatch = lruopt_pre_unpatch,
		},
	},
};

static struct klp_patch lruopt_patch = {
	.mod = THIS_MODULE,
	.objs = lruopt_objs,
};

/* ---------------------------------------------------------- the patch */

static void lruopt_free_patch(void)
{
	kfree(lruopt_funcs);
	lruopt_funcs = NULL;
	lruopt_fault_free();
}

static int lruopt_build_patch(void)
{
	const struct klp_func *fn;
	unsigned int i, n = 0;
	int ret;

	for (fn = lruopt_func_next(NULL, &i); fn; fn = lruopt_func_next(fn, &i))
		n++;
	/* klp_func carries core-private state: give it a zeroed copy */
	lruopt_funcs = kcalloc(n + 1, sizeof(*lruopt_funcs), GFP_KERNEL);
	if (!lruopt_funcs)
		return -ENOMEM;
	n = 0;
	for (fn = lruopt_func_next(NULL, &i); fn; fn = lruopt_func_next(fn, &i)) {
		lruopt_funcs[n].old_name = fn->old_name;
		lruopt_funcs[n].new_func = fn->new_func;
		n++;
	}
	ret = lruopt_fault_apply(lruopt_funcs);
	if (ret) {
		lruopt_free_patch();
		return ret;
	}
	lruopt_objs[0].funcs = lruopt_funcs;	/* .name NULL: vmlinux */
	return 0;
}

/*
 * The module was built and layout-checked for one kernel build.  The
 * release string is already enforced by vermagic; the version string tells
 * apart two builds that share a release (e.g. a Debian point update that kept
 * the ABI name), whose private layouts or static symbols may still differ.
 */
static int lruopt_check_kernel(void)
{
	const char *running = init_uts_ns.name.version;

	if (strcmp(running, LRUOPT_BUILT_UTS_VERSION)) {
		pr_err("refusing to load: built and layout-checked for %s \"%s\", running \"%s\"; rebuild lruopt for this kernel\n",
		       LRUOPT_BUILT_UTS_RELEASE, LRUOPT_BUILT_UTS_VERSION,
		       running);
		return -ENOEXEC;
	}
	return 0;
}

/*
 * Whether a feature goes into the patch: not where the kernel lacks it (its
 * unsupported_why says why); with a patch_<feature> parameter, 0 and 1 are
 * the operator's choice, auto the feature's own @decide.  Returns why, for
 * the log line; NULL for a feature without the parameter or one the kernel
 * lacks.
 */
static const char *lruopt_feature_decide(struct lruopt_feature *f)
{
	f->supported = !f->unsupported_why;
	if (!f->decide || !f->supported)
		return NULL;
	switch (*f->patch_mode) {
	case LRUOPT_PATCH_OFF:
		f->supported = false;
		return "requested";
	case LRUOPT_PATCH_ON:
		return "requested";
	}
	return f->decide();
}

/* The relocations are written: tell the features that care. */
static void lruopt_features_bound(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(lruopt_features); i++)
		if (lruopt_features[i]->bound)
			lruopt_features[i]->bound();
}

static int __init lruopt_init(void)
{
	const char *why[ARRAY_SIZE(lruopt_features)] = { };
	int i, ret;

	ret = lruopt_check_kernel();
	if (ret)
		return ret;
	/* refuses a companion of another build (lruopt_trace_link.c, _own.c) */
	ret = lruopt_trace_init();
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(lruopt_features); i++)
		why[i] = lruopt_feature_decide(lruopt_features[i]);
	ret = lruopt_sysfs_init(lruopt_features, ARRAY_SIZE(lruopt_features));
	if (ret)
		goto err_trace;
	ret = lruopt_build_patch();
	if (ret)
		goto err_sysfs;

	/* Last step: see the ordering rule at the top of this file. */
	ret = klp_enable_patch(&lruopt_patch);
	if (ret) {
		/* livepatch has logged which symbol or function it lacks */
		pr_err("refusing to load: livepatch could not bind to this kernel (%d); nothing was patched\n",
		       ret);
		goto err_patch;
	}
	lruopt_features_bound();
	/* what each patch_<feature> decided, now that it holds */
	for (i = 0; i < ARRAY_SIZE(lruopt_features); i++) {
		const struct lruopt_feature *f = lruopt_features[i];

		if (f->unsupported_why)
			pr_info("%s: not applicable on this kernel: %s\n",
				f->name, f->unsupported_why);
		else if (why[i])
			pr_info("%s: %s the patch (patch_%s=%s): %s\n", f->name,
				f->supported ? "in" : "left out of", f->name,
				lruopt_patch_mode_name(*f->patch_mode), why[i]);
	}
	pr_info("loaded %s for %s (%s line); patching started\n",
		LRUOPT_VERSION, LRUOPT_BUILT_UTS_RELEASE, LRUOPT_KERNEL_LINE);
	return 0;

err_patch:
	lruopt_free_patch();
err_sysfs:
	lruopt_sysfs_exit();
err_trace:
	lruopt_trace_exit();
	return ret;
}

/*
 * Runs only after the livepatch has been disabled and its transition has
 * completed (the patch holds a module reference until then), so no task
 * executes a replaced function any more; features still cancel their own
 * asynchronous work in their exit hooks.  Mirrors the unwind ladder of
 * lruopt_init().
 */
static void __exit lruopt_exit(void)
{
	lruopt_free_patch();
	lruopt_sysfs_exit();
	lruopt_trace_exit();
}

module_init(lruopt_init);
module_exit(lruopt_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("lruopt developers");
MODULE_DESCRIPTION("Livepatch: batched, pending-aware LRU drain, munlock walk and memcg page-stat lock");
MODULE_VERSION(LRUOPT_VERSION);
/* modinfo -F trace_abi: the lruopt_events.ko this module links to (< 6.3) */
MODULE_INFO(trace_abi, LRUOPT_EVENTS_ABI);
/* modinfo -F trace_events: lruopt, or (before 6.3) lruopt_events */
MODULE_INFO(trace_events, LRUOPT_EVENTS_OWNER);
/* before 6.3, modprobe lruopt loads the companion first (lruopt_trace.h) */
LRUOPT_EVENTS_SOFTDEP;
MODULE_INFO(livepatch, "Y");
