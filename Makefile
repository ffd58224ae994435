# SPDX-License-Identifier: GPL-2.0
#
# User targets of lruopt (the kbuild objects are in Kbuild).  "make help"
# prints this block, up to its first empty line.
#
#   make                      build lruopt.ko for the running kernel (and,
#                             before 6.3, lruopt_events.ko: its trace events)
#   make KVER=<uname -r>      build for another installed kernel (or KDIR=);
#                             Debian 13's on Debian 12: scripts/trixie make KVER=
#   make module-notrace       the same without its trace calls, in
#                             build/KVER-notrace/ (benchmark configuration F)
#   make install / uninstall  host install into /lib/modules/KVER/updates/
#   make dkms-install         DKMS package (/usr/src/lruopt-VER), built+installed
#   make dkms-remove          remove it from DKMS for all kernels
#   make deb                  the Debian package build/lruopt-dkms_VER_all.deb
#   make deps                 install the Debian packages every target needs
#   make clean                remove build/ (demo results stay in results/)
#
# Tests, benchmark and gates (tests/tests.mk; the kernels are those of
# scripts/kernels unless KERNELS="<release> ..." says otherwise):
#   make check                CI's run, ~30 min: every flavour built and
#                             gated, host checks, the package, and the test
#                             suites in QEMU on 6.1, 6.12, 6.12-rt and Debian
#                             13 (KERNELS= / TESTS=: only those boots)
#   make check-all            every flavour with every suite (~2 hours):
#                             before resolving a flavour's own code path
#   make check-trixie         the suites on Debian 13's three flavours, built
#                             and booted from a trixie root (scripts/trixie)
#   make demo [ARGS="..."]    the A/B benchmark in QEMU (default: the generic
#                             and cloud kernels); ARGS go to tests/bench/demo
#                             (e.g. ARGS="--rounds 10")
#   make check-rt             make check on the PREEMPT_RT kernels only
#   make stress               only the stress boot (100 cycles under load;
#                             STRESS_CYCLES=N)
#   make check-bpf            the bpftrace tools against known workloads
#   make check-deb            the Debian package: build, lintian, install, purge
#   make check-deb-trixie     the same inside the trixie root
#   make check-boot           the package's loading at boot (lruopt.service,
#                             crash guard, --rearm) in a systemd boot in QEMU
#   make matrix               build for every served point release, smoke-boot
#                             the oldest and newest, print the support table
#   make style                checkpatch --strict on the module sources
#   make sparse / make w1     sparse (C=2) / W=1 builds for each kernel
#   make gates                both in one build per kernel (make check's)
#   make kerneldoc            kernel-doc -Wall, and docs on non-static functions
#   make debug-kernel         build+install a KASAN/lockdep 6.1 kernel (long)
#   make debug-kernel-rt      build+install a PREEMPT_RT lockdep 6.12 kernel
#
# Each kernel gets its own build directory, build/<kver>/, holding symlinks
# to the sources, the generated BTF layout header and the module.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

RUNNING := $(shell uname -r)
KVER ?= $(RUNNING)
KDIR ?= /lib/modules/$(KVER)/build
B := build/$(KVER)

SRCS := lruopt_main.c lruopt_sysfs.c lruopt_drain.c lruopt_drain_sites.c lruopt_munlock.c \
	lruopt_memcg.c lruopt_quiet.c lruopt_lazyfree.c lruopt_events.c lruopt_trace_link.c \
	lruopt_trace_own.c lruopt_drain_sites.h \
	lruopt_quiet_adders.h \
	lruopt.h lruopt_sysfs.h lruopt_compat.h lruopt_mm_internal.h lruopt_trace.h \
	Kbuild

# Private structures mirrored in lruopt_compat.h, checked against BTF.
BTF_STRUCTS := cpu_fbatches lru_rotate mlock_pvec mlock_fbatch folio_batch \
	move_charge_struct
# Functions whose prototype the code restates (name=prototype as BTF spells
# it; PROTO|PROTO where 6.1 and 6.12 differ): LRUOPT_BTF_FN_<name> is 0
# where BTF has another one, and the feature stays out of the patch.
# lazyfree replaces the first and calls the others (lruopt_lazyfree.c).
FN_PROTOS := \
	--func 'madvise_dontneed_free_valid_vma=bool(struct vm_area_struct *, long unsigned int, long unsigned int *, int)' \
	--func 'madvise_free_pte_range=int(pmd_t *, long unsigned int, long unsigned int, struct mm_walk *)' \
	--func 'walk_page_range=int(struct mm_struct *, long unsigned int, long unsigned int, const struct mm_walk_ops *, void *)' \
	--func 'folio_isolate_lru=int(struct folio *)|bool(struct folio *)' \
	--func 'folio_putback_lru=void(struct folio *)' \
	--func 'reclaim_pages=long unsigned int(struct list_head *)' \
	--func 'zone_watermark_ok=bool(struct zone *, unsigned int, long unsigned int, int, unsigned int)'
# Unexported plain data symbols that BTF cannot vouch for (see klp-convert).
KLP_DATA := mm_percpu_wq,mc,huge_zero_pfn,huge_zero_folio,lru_disable_count,lru_gen_caps
# Unexported functions whose address the code may take: mm/swap.c's move
# functions (6.1 names, then 6.12 names), handed to folio_batch_move_lru() by
# the PREEMPT_RT remote drain; lruopt_drain.c checks their ENDBR64 at load
# (folio_batch_move_lru: only read, by that check's testing-only fault).
KLP_ADDR_OK := folio_batch_move_lru \
	lru_add_fn lru_move_tail_fn lru_deactivate_file_fn \
	lru_deactivate_fn lru_lazyfree_fn folio_activate_fn \
	lru_add lru_move_tail lru_deactivate_file lru_deactivate lru_lazyfree \
	lru_activate
empty :=
space := $(empty) $(empty)
comma := ,

# Where the target kernel's BTF comes from: the running kernel's sysfs copy,
# else the installed image.  Override with BTF=<file> and UTS_VERSION=<str>.
ifeq ($(KVER),$(RUNNING))
BTF ?= /sys/kernel/btf/vmlinux
UTS_VERSION ?= $(shell uname -v)
endif
# VMLINUZ: an image that is not installed (tests/vm/matrix: dpkg -x'd).
VMLINUZ ?= /boot/vmlinuz-$(KVER)
ifneq ($(BTF),)
BTF_SRC := --btf $(BTF)
else
BTF_SRC := --vmlinuz $(VMLINUZ)
endif
ifneq ($(UTS_VERSION),)
BTF_SRC += --uts-version "$(UTS_VERSION)"
endif

.PHONY: all module module-notrace deps clean help install uninstall dkms-install \
	dkms-remove dkms-src deb

# The modules a build made (kbuild's modules.order, .o on 6.12): lruopt.ko,
# and before v6.3 the companion that owns its trace events (lruopt_events.c,
# Kbuild).  Read when a recipe runs, after the build.
KOS = $(shell sed 's|.*/||; s/\.o$$/.ko/' $(B)/modules.order 2>/dev/null)
ALL_KOS := lruopt_events.ko lruopt.ko

all: module
ifeq ($(KVER),$(RUNNING))
	rm -f $(ALL_KOS)
	cp $(addprefix $(B)/,$(KOS)) .
	@echo "lruopt: built $(B)/{$(subst $(space),$(comma),$(KOS))}, copied to ./;" \
		"load with: insmod lruopt.ko"
else
	@echo "lruopt: built $(B)/{$(subst $(space),$(comma),$(KOS))} for $(KVER)" \
		"(./*.ko are made only for the running kernel)"
endif

# Checked before build/<kver>/ exists, so that a failed attempt leaves none.
# Buildable: a kernel with a build tree and an image (the BTF comes from it).
module:
	@test -d $(KDIR) || { \
		echo "lruopt: no kernel build tree at $(KDIR)" \
			"(linux-headers-$(KVER) is not installed)." >&2; \
		echo "lruopt: it supports Debian 12's stock 6.1 and 6.12 kernels and" \
			"Debian 13's 6.12, and their flavours (docs/kernels.md; Debian 13's" \
			"on Debian 12: scripts/trixie make KVER=...); installed ones it can build for:" >&2; \
		n=0; for d in /lib/modules/*/build; do k=$${d#/lib/modules/}; k=$${k%/build}; \
			[ -d $$d ] && [ -e /boot/vmlinuz-$$k ] || continue; \
			echo "    make KVER=$$k" >&2; n=1; done; \
		[ $$n = 1 ] || echo "    none: scripts/deps build installs the stock ones" >&2; \
		exit 1; }
	@mkdir -p $(B)
	@# absolute: B may be deeper than build/<kver>/ (make check's gate builds)
	@for f in $(SRCS); do ln -sfn $(CURDIR)/$$f $(B)/$$f; done
	python3 scripts/btf-layout $(BTF_SRC) --kver $(KVER) \
		--ksyms $(B)/ksyms.txt -o $(B)/lruopt_btf.h.new \
		$(FN_PROTOS) $(BTF_STRUCTS)
	@cmp -s $(B)/lruopt_btf.h.new $(B)/lruopt_btf.h || \
		mv $(B)/lruopt_btf.h.new $(B)/lruopt_btf.h; rm -f $(B)/lruopt_btf.h.new
	@# modpost reports the unexported symbols as undefined (klp-convert
	@# checks and converts every one of them just below), and Debian's
	@# headers have no vmlinux to make module BTF from: both expected, said
	@# once after kbuild's output.
	@# A companion left by an earlier build must not outlive a kernel that
	@# builds none (6.3+, Kbuild): kbuild relinks it where it belongs.
	@rm -f $(B)/lruopt_events.ko
	@echo '$(MAKE) -C $(KDIR) M=$(abspath $(B)) KBUILD_MODPOST_WARN=1 modules'
	@$(MAKE) -C $(KDIR) M=$(abspath $(B)) KBUILD_MODPOST_WARN=1 modules 2>&1 \
		| awk '/undefined!$$/ { next } \
			/unresolved symbol|Skipping BTF generation/ { x = 1 } { print } \
			END { if (x) print "lruopt: expected, not a problem:" \
				" modpost lists the unexported kernel symbols lruopt uses" \
				" (klp-convert checks and converts each), and no module BTF" \
				" is made (the headers ship no vmlinux; lruopt needs none)" }'
	python3 scripts/klp-convert --symvers $(KDIR)/Module.symvers \
		--ksyms $(B)/ksyms.txt --data $(KLP_DATA) \
		--addr-ok $(subst $(space),$(comma),$(strip $(KLP_ADDR_OK))) \
		--list $(B)/lruopt.ko

# Configuration F of the benchmark (docs/benchmarks.md, "The cost of the
# trace events"): lruopt.ko without its trace calls (LRUOPT_NO_TRACE,
# lruopt_trace.h), beside the normal build so that both can be loaded in
# turn; the demo and scripts/lruopt-ab build it here.
module-notrace:
	$(MAKE) --no-print-directory B=build/$(KVER)-notrace KCFLAGS=-DLRUOPT_NO_TRACE module

$(B):
	mkdir -p $@

deps:
	scripts/deps

clean:
	rm -rf build $(ALL_KOS)

help:
	@sed -n '3,/^$$/{/^$$/q;s/^# \{0,1\}//;p}' Makefile

# Plain host install of build/KVER/lruopt.ko (and lruopt_events.ko before 6.3) into
# /lib/modules/KVER/$(INSTALL_MOD_DIR) (default updates/, which depmod ranks
# above the kernel's own tree), then depmod.  Not kbuild's modules_install:
# on Debian's headers that tries to sign with the absent distribution key
# (and on 6.12 would xz the module first).  SIGN_KEY=<key> SIGN_CERT=<der
# cert> signs the installed copy for Secure Boot (e.g. the DKMS MOK key,
# docs/install.md, "Secure Boot").  INSTALL_MOD_PATH= for a staging root.
INSTALL_MOD_DIR ?= updates
MOD_DEST = $(INSTALL_MOD_PATH)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)
DEPMOD = depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KVER)

install: module
	@# a companion an earlier version installed where none is built now (6.3+)
	rm -f $(addprefix $(MOD_DEST)/,$(filter-out $(KOS),$(ALL_KOS)))
	install -D -m 0644 -t $(MOD_DEST) $(addprefix $(B)/,$(KOS))
ifneq ($(SIGN_KEY),)
	for m in $(KOS); do $(KDIR)/scripts/sign-file sha256 $(SIGN_KEY) \
		$(SIGN_CERT) $(MOD_DEST)/$$m || exit 1; done
endif
	$(DEPMOD)

uninstall:
	rm -f $(addprefix $(MOD_DEST)/,$(ALL_KOS))
	$(DEPMOD)

# DKMS: copy what the build needs to /usr/src/lruopt-VER (dkms.conf with
# the version of lruopt.h), add it, build and install it for DKMS_KERNELS
# (default: KVER), replacing an earlier registration of the same version.
DKMS_VER := $(shell sed -n 's/^\#define LRUOPT_VERSION "\(.*\)"/\1/p' lruopt.h)
DKMS_SRC := /usr/src/lruopt-$(DKMS_VER)
DKMS_KERNELS ?= $(KVER)
# What DKMS needs in /usr/src/lruopt-VER to run the "module" target (BTF
# layout check + klp-convert), for dkms-install and the Debian package alike.
DKMS_FILES := Makefile $(SRCS)
DKMS_SCRIPTS := scripts/btf-layout scripts/klp-convert
# What the Debian package installs besides the DKMS source: the boot-time
# loader, lruopt-stat, the node-exporter collector, the awk library the last
# two share and their systemd units (debian/lruopt-dkms.install).
DEB_SCRIPTS := scripts/lruopt-load scripts/lruopt-stat scripts/lruopt-prometheus \
	scripts/lruopt-lib.awk

dkms-install:
	@command -v dkms >/dev/null || { echo "lruopt: dkms is not installed:" \
		"scripts/deps --dkms" >&2; exit 1; }
	@test -n "$(DKMS_VER)" || { echo "lruopt: no LRUOPT_VERSION in lruopt.h" >&2; exit 1; }
	if [ -n "$$(dkms status lruopt/$(DKMS_VER) 2>/dev/null)" ]; then \
		dkms remove lruopt/$(DKMS_VER) --all; fi
	rm -rf $(DKMS_SRC)
	$(MAKE) --no-print-directory dkms-src
	sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(DKMS_VER)"/' dkms.conf \
		>$(DKMS_SRC)/dkms.conf
	dkms add lruopt/$(DKMS_VER)
	set -e; for k in $(DKMS_KERNELS); do \
		dkms install lruopt/$(DKMS_VER) -k $$k; done
	dkms status lruopt

dkms-remove:
	if [ -n "$$(dkms status lruopt/$(DKMS_VER) 2>/dev/null)" ]; then \
		dkms remove lruopt/$(DKMS_VER) --all; fi
	rm -rf $(DKMS_SRC)

# The DKMS source tree (without dkms.conf) under $(DESTDIR)/usr/src.
dkms-src:
	install -d $(DESTDIR)$(DKMS_SRC)/scripts
	install -m 0644 $(DKMS_FILES) $(DESTDIR)$(DKMS_SRC)/
	install -m 0755 $(DKMS_SCRIPTS) $(DESTDIR)$(DKMS_SRC)/scripts/

# make deb: build/lruopt-dkms_VER_all.deb with debhelper + dh-dkms, from a
# staged copy of the tree (dpkg-buildpackage writes to the parent directory
# and leaves debian/ build state behind).  Installs what it needs (debhelper,
# dh-dkms, dkms) first, as the other targets do.
DEB_STAGE := build/deb/lruopt-$(DKMS_VER)
deb:
	scripts/deps deb
	rm -rf build/deb && mkdir -p $(DEB_STAGE)/scripts
	cp -r $(DKMS_FILES) dkms.conf debian etc systemd $(DEB_STAGE)/
	cp $(DKMS_SCRIPTS) $(DEB_SCRIPTS) $(DEB_STAGE)/scripts/
	cd $(DEB_STAGE) && dpkg-buildpackage -b -us -uc --no-pre-clean >../build.log 2>&1 \
		|| { tail -n 30 ../build.log >&2; exit 1; }
	mv build/deb/lruopt-dkms_$(DKMS_VER)_all.deb build/
	@echo "deb: build/lruopt-dkms_$(DKMS_VER)_all.deb (log build/deb/build.log)"

# Tests, benchmark, gates, debug kernels: absent from the DKMS and package
# source trees, which only build and install the module.
-include tests/tests.mk
