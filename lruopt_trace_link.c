// SPDX-License-Identifier: GPL-2.0
/*
 * lruopt.ko's side of the trace events before v6.3: linking to the
 * companion lruopt_events.ko at run time (lruopt_events.c says why the
 * events live there on such kernels).
 *
 * lruopt.ko loads and works alone: it has no link-time reference to the
 * companion.  The events fire once lruopt_events_ops is linked, which
 * happens
 *  - at lruopt.ko's load, if the companion is already loaded (modprobe's
 *    softdep order): symbol_get() in lruopt_trace_init();
 *  - when the companion goes live after lruopt.ko: the module notifier
 *    below, at MODULE_STATE_LIVE (symbol_get() refuses a module that is
 *    still COMING).
 * A link holds a reference on the companion (symbol_get()), dropped only by
 * lruopt_trace_exit() at lruopt.ko's exit, when no patched function and no
 * work item of lruopt runs any more: the ops table cannot go away under a
 * caller, and rmmod lruopt_events fails while it is linked.  rmmod -f
 * (CONFIG_MODULE_FORCE_UNLOAD, set in Debian's 6.1) ignores that reference:
 * the notifier then unlinks at MODULE_STATE_GOING and forgets the reference,
 * which went with the module (lruopt_trace.h says why no caller is left).
 *
 * Which build a companion is of is read first, from lruopt_events_abi,
 * which every companion exports (0.3.0's too, which had no ops table).  A
 * companion of another build is refused at load; one that goes live later
 * is ignored with a warning and its reference dropped at once: never
 * half-used.
 *
 * Lock order: link_lock is taken under the module notifier chain's rwsem
 * (the notifier) and alone (init, exit); it is never held across anything
 * that takes that rwsem (register/unregister_module_notifier()), so the two
 * cannot deadlock.  symbol_get() and symbol_put() take no sleeping lock of
 * the module loader (a walk with preemption off and a reference count).
 *
 * The reference is dropped under link_lock while the notifier is still
 * registered, and only then is the notifier removed: a forced removal of
 * the companion at that moment either finds the link already gone or
 * waits for link_lock in its GOING callback, before free_module() makes
 * its symbols unfindable, so symbol_put() never looks for a vanished
 * module (its BUG_ON()) nor puts a newer companion's reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include "lruopt.h"
#include "lruopt_trace.h"

#define LRUOPT_EVENTS_MODULE "lruopt_events"

/* Read under RCU-sched by trace_*() (lruopt_trace.h); written under link_lock. */
const struct lruopt_events_ops __rcu *lruopt_events;

static DEFINE_MUTEX(link_lock);
/* lruopt_trace_exit() ran: no new link, whatever the notifier sees. */
static bool link_closed;

enum lruopt_link {
	LINK_NONE,	/* no companion loaded (or going, or the link closed) */
	LINK_OK,	/* linked (now or before) */
	LINK_FOREIGN,	/* a companion of another build, not linked */
};

/*
 * Take the companion's ops if it is loaded and of this build.  @at_load:
 * from lruopt.ko's init, where a companion of another build fails the load
 * (the caller returns -EINVAL); later it is ignored.  Either is said here.
 */
static enum lruopt_link lruopt_events_link(bool at_load)
{
	const struct lruopt_events_ops *ops;
	const char (*abi)[];
	enum lruopt_link ret = LINK_OK;

	mutex_lock(&link_lock);
	if (link_closed) {
		ret = LINK_NONE;
		goto out;
	}
	if (rcu_access_pointer(lruopt_events))
		goto out;
	abi = symbol_get(lruopt_events_abi);
	if (!abi) {
		ret = LINK_NONE;
		goto out;
	}
	if (strcmp(*abi, LRUOPT_EVENTS_ABI)) {
		if (at_load)
			pr_err("refusing to load: lruopt_events is of another build (trace ABI %s, this module's %s); rmmod lruopt_events and load the pair from one build\n",
			       *abi, LRUOPT_EVENTS_ABI);
		else
			pr_warn("trace events: ignoring lruopt_events of another build (trace ABI %s, this module's %s); the lruopt:* events stay off until it is replaced: rmmod lruopt_events, then insmod this build's lruopt_events.ko\n",
				*abi, LRUOPT_EVENTS_ABI);
		symbol_put(lruopt_events_abi);
		ret = LINK_FOREIGN;
		goto out;
	}
	/*
	 * Its ABI names its lruopt_trace.h, which declares the ops table: only
	 * a companion already going away (try_module_get() fails) has none.
	 * The table's reference pins the module; the identity's is not needed.
	 */
	ops = symbol_get(lruopt_events_ops);
	symbol_put(lruopt_events_abi);
	if (!ops) {
		ret = LINK_NONE;
		goto out;
	}
	/*
	 * Pairs with rcu_dereference_sched() in trace_*() (lruopt_trace.h): a
	 * caller that sees the pointer sees the table (the companion's const
	 * data).
	 */
	rcu_assign_pointer(lruopt_events, ops);
out:
	mutex_unlock(&link_lock);
	return ret;
}

/*
 * The companion went away without lruopt.ko's consent: rmmod -f, the only
 * removal its reference allows.  Unlink; its reference is gone with it.
 */
static void lruopt_events_gone(void)
{
	mutex_lock(&link_lock);
	if (rcu_access_pointer(lruopt_events)) {
		/*
		 * Callers that loaded the pointer before this store are RCU-sched
		 * readers (lruopt_trace.h): the companion's free_module() waits for
		 * them in synchronize_rcu().
		 */
		RCU_INIT_POINTER(lruopt_events, NULL);
		pr_warn("trace events: lruopt_events was force-removed; the lruopt:* events are off\n");
	}
	mutex_unlock(&link_lock);
}

static int lruopt_events_notify(struct notifier_block *nb,
				unsigned long action, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, LRUOPT_EVENTS_MODULE))
		return NOTIFY_DONE;
	if (action == MODULE_STATE_GOING) {
		lruopt_events_gone();
	} else if (action == MODULE_STATE_LIVE) {
		switch (lruopt_events_link(false)) {
		case LINK_OK:
			pr_info("trace events: lruopt_events loaded, lruopt:* events on\n");
			break;
		case LINK_NONE:		/* going again, or lruopt's exit */
		case LINK_FOREIGN:	/* said by lruopt_events_link() */
			break;
		}
	}
	return NOTIFY_DONE;
}

static struct notifier_block lruopt_events_nb = {
	.notifier_call = lruopt_events_notify,
};

/**
 * lruopt_trace_init - link the trace events of lruopt_events.ko
 *
 * Description: registers the module notifier first, then looks for a
 * companion that is already loaded, so that one going live in between is
 * seen by one of the two (the link is taken only once).  Without a
 * companion the events are off and one line says how to get them.  A
 * companion of another build fails the load.
 *
 * Return: 0, -EINVAL for a companion of another build, or the notifier's
 * registration error.
 */
int lruopt_trace_init(void)
{
	enum lruopt_link link;
	int ret;

	ret = register_module_notifier(&lruopt_events_nb);
	if (ret)
		return ret;
	link = lruopt_events_link(true);
	if (link == LINK_FOREIGN) {
		lruopt_trace_exit();
		return -EINVAL;
	}
	if (link == LINK_NONE)
		pr_info("trace events: off until lruopt_events.ko is loaded (before 6.3 a livepatch module cannot own trace events; modprobe lruopt loads both)\n");
	return 0;
}

/**
 * lruopt_trace_exit - drop the link to lruopt_events.ko
 *
 * Called last by lruopt.ko's exit (and by its init's unwind), when no
 * patched function and no work item of lruopt can fire an event any more.
 * The link is closed and its reference dropped before the notifier goes
 * (the header comment says why this order).
 */
void lruopt_trace_exit(void)
{
	mutex_lock(&link_lock);
	link_closed = true;
	if (rcu_access_pointer(lruopt_events)) {
		RCU_INIT_POINTER(lruopt_events, NULL);
		symbol_put(lruopt_events_ops);
	}
	mutex_unlock(&link_lock);
	unregister_module_notifier(&lruopt_events_nb);
}
