# SPDX-License-Identifier: GPL-2.0
#
# The test, benchmark, gate and debug-kernel targets of lruopt, included by
# the top Makefile (which keeps the module, its install and DKMS; "make help"
# lists both).  The harness they drive lives beside this file: tests/vm/
# (QEMU boots), tests/bench/ (the A/B benchmark), tests/gates/ (checkpatch,
# sparse, kernel-doc), tests/pkg/ (the Debian package).

.PHONY: check check-all check-bpf stress matrix demo check-rt check-deb tools style \
	sparse w1 gates kerneldoc debug-kernel debug-kernel-rt check-trixie \
	check-deb-trixie check-boot

# The stock kernels the tests and gates use (override: KERNELS="<kver> ...").
KERNELS = $(shell scripts/kernels)
MODULE_SRCS := $(wildcard lruopt_*.c lruopt*.h)

# ------------------------------------------------------------ tests

# make check: the job queue of tests/vm/check's "check" plan (what it runs
# and costs: docs/testing.md).  KERNELS="<kver> ..." or TESTS=GLOB (e.g.
# TESTS='60-*,99-*') narrows it to boots of those kernels (default: the six
# of scripts/kernels) and tests, without the gates and the package check.
# LRUOPT_JOBS=N: jobs at once (default 2, one per core).
CHECK_ARGS = $(if $(TESTS),--tests '$(TESTS)')
CHECK_ENV = LRUOPT_KERNELS="$(KERNELS)"
NARROW = $(or $(TESTS),$(filter command line environment,$(origin KERNELS)))
check:
ifneq ($(NARROW),)
	$(CHECK_ENV) tests/vm/check $(CHECK_ARGS)
else
	tests/vm/check --plan check
endif

# make check-all: every flavour (Debian 12's six, Debian 13's three), each
# with the main, iso, stress (20 cycles; STRESS_CYCLES=N) and bpftrace
# suites, plus the gates, the host checks and the package: about 2 hours on
# two cores.  Run it before resolving work that touches one flavour's own
# code path.
check-all:
	$(if $(STRESS_CYCLES),LRUOPT_STRESS_CYCLES=$(STRESS_CYCLES)) tests/vm/check --plan all

# make check on Debian 13's three flavours (generic, cloud, rt) only.
check-trixie:
	scripts/deps trixie
	LRUOPT_KERNELS="$$(scripts/kernels --line 6.12+deb13)" tests/vm/check $(CHECK_ARGS)

# The bpftrace suite (scripts/*.bt against known workloads, each kernel of
# KERNELS, about 2 min each); make check-all runs it on every flavour.
check-bpf:
	scripts/deps bpf
	$(CHECK_ENV) LRUOPT_SUITES=bpf tests/vm/check $(CHECK_ARGS)

# The stress boot per kernel (100 load/toggle/unload cycles under a mixed
# workload, ~20 min on 6.1 and ~10 on 6.12 under one TCG thread); make
# check-all runs it on every flavour.  STRESS_CYCLES=N changes the number
# of cycles.
stress:
	scripts/deps check
	$(CHECK_ENV) LRUOPT_SUITES=stress \
		$(if $(STRESS_CYCLES),LRUOPT_STRESS_CYCLES=$(STRESS_CYCLES)) tests/vm/check

# Every Debian 12 point release the archive serves (tests/vm/matrix, see
# docs/kernels.md): downloads into build/cache, builds lruopt for each,
# smoke-boots the oldest and newest of each line, prints the table.
matrix:
	tests/vm/matrix $(MATRIX_ARGS)

# make demo ARGS="--rounds 10 --workloads rt-drain": options of tests/bench/demo
# (make itself would take "--rounds" as one of its own).
demo:
	tests/bench/demo $(ARGS)


# ------------------------------------------------------------ quality gates

# checkpatch.pl and its data files are not in linux-headers: take them (and
# 6.1's kernel-doc, the fallback below) from Debian's linux-source-6.1, once.
KSRC_TARBALL := /usr/src/linux-source-6.1.tar.xz
TOOLS := build/tools/scripts
TOOL_FILES := checkpatch.pl spelling.txt const_structs.checkpatch kernel-doc

tools: $(TOOLS)/checkpatch.pl

$(TOOLS)/checkpatch.pl:
	@test -r $(KSRC_TARBALL) || { echo "lruopt: $(KSRC_TARBALL) missing:" \
		"scripts/deps gates installs linux-source-6.1" >&2; exit 1; }
	rm -rf build/tools.tmp && mkdir -p build/tools.tmp
	tar -xJf $(KSRC_TARBALL) -C build/tools.tmp --strip-components=1 \
		$(addprefix linux-source-6.1/scripts/,$(TOOL_FILES))
	rm -rf build/tools && mv build/tools.tmp build/tools

# checkpatch --strict: any error, warning or check fails.
style: $(TOOLS)/checkpatch.pl
	perl $(TOOLS)/checkpatch.pl --strict --no-tree --show-types --terse \
		--file $(MODULE_SRCS)
	@echo "style: $(words $(MODULE_SRCS)) files checkpatch --strict clean"

# sparse on every source (C=2) for each stock kernel, lock-context tracking
# on: fails on any sparse or compiler warning other than the expected
# "context imbalance" function+message pairs of tests/gates/sparse-context.allow
# (functions that hold a lock under a condition, as the stock
# mlock_pte_range() and folio_memcg_lock() do), and on an expected one that
# went missing (tests/gates/sparse-gate).  Log in build/<kver>.sparse.log;
# SPARSE_FLAGS goes to sparse (CF=).
SPARSE_FLAGS ?=
# w1: the compiler's W=1 warnings, none allowed (log build/<kver>.w1.log).
# gates: both in one build per kernel (sparse runs beside the compiler, so
# one C=2 W=1 build costs about what a plain one does), judged by
# tests/gates/sparse-gate, which fails on any warning but the allowed
# context imbalances: what make check's build of each flavour does.
# Each builds in build/<gate>/<kver>/, not in the module's build/<kver>/,
# so that it can run beside the kernel's own build.
GATE_sparse = C=2 CF="$(SPARSE_FLAGS)"
GATE_w1 = W=1
GATE_gates = C=2 CF="$(SPARSE_FLAGS)" W=1
sparse w1 gates: | build
	@bad=0; for k in $(KERNELS); do \
		log=build/$$k.$@.log; \
		echo "$@: $$k: $(GATE_$@)"; \
		if ! $(MAKE) --no-print-directory KVER=$$k B=build/$@/$$k \
			$(GATE_$@) module >$$log 2>&1; then \
			echo "$@: $$k: build failed, see $$log" >&2; bad=1; \
		fi; \
		if [ $@ != w1 ]; then \
			tests/gates/sparse-gate $$log $$k || bad=1; \
		else \
			w=$$(grep -E '(warning|error):' $$log | \
				sed "s#$(CURDIR)/build/$@/$$k/##" | sort -u); \
			if [ -n "$$w" ]; then echo "$$w"; bad=1; fi; \
			echo "$@: $$k: $$(printf '%s' "$$w" | grep -c .) warning(s)"; \
		fi; \
	done; exit $$bad

build:
	mkdir -p $@

# kernel-doc of each installed kernel (else 6.1's from linux-source):
# -Wall (6.1: -v) warnings fail, and so does a non-static function without
# a kernel-doc comment.
KERNELDOC ?= $(or $(wildcard /usr/src/linux-headers-*-common/scripts/kernel-doc),\
	$(TOOLS)/kernel-doc)
kerneldoc: $(if $(filter $(TOOLS)/%,$(KERNELDOC)),$(TOOLS)/checkpatch.pl)
	python3 tests/gates/kdoc-check $(addprefix --kernel-doc ,$(KERNELDOC)) \
		$(MODULE_SRCS)

# make check on Debian's two PREEMPT_RT kernels only (tests/vm/check-rt).
check-rt:
	tests/vm/check-rt

# The Debian package on this machine: make deb, lintian, apt install, dkms
# status for the generic kernels of scripts/kernels, purge leaves nothing
# (tests/pkg/check-deb).
check-deb:
	tests/pkg/check-deb

# The package's boot-time loading in a real systemd boot of a bookworm image
# under QEMU (tests/vm/check-boot): the unit disabled by default, enabled
# with a modprobe.d option, the crash guard after a boot that died in the
# load, lruopt-load --rearm.  The generic kernels of scripts/kernels unless
# KERNELS= is given; the image is cached in build/boot/.  Not in CI.
check-boot:
	scripts/deps boot
	tests/vm/check-boot --no-deps \
		$(if $(filter command line environment,$(origin KERNELS)),--kernels "$(KERNELS)")

# The same inside the trixie root (scripts/trixie): trixie's debhelper,
# dh-dkms, lintian and dkms, DKMS builds for its three kernel flavours.
check-deb-trixie:
	scripts/deps trixie-tools
	scripts/trixie root --deb
	# promtool (check-deb checks the collector's output), only here: the
	# root CI makes for make check does not need it
	scripts/trixie run sh -c 'command -v promtool >/dev/null || \
		apt-get install -y --no-install-recommends prometheus'
	scripts/trixie run env LRUOPT_KERNELS="$$(scripts/kernels --line 6.12+deb13)" \
		tests/pkg/check-deb --no-deps

# A KASAN/PROVE_LOCKING/DEBUG_VM/KMEMLEAK 6.1 kernel from linux-source-6.1,
# installed so that "make KVER=$$(tests/vm/build-debug-kernel --release)",
# tests/vm/mkinitramfs and tests/vm/vmrun find it (hours on 2 cores; cached).
debug-kernel:
	scripts/deps --debug-kernel
	tests/vm/build-debug-kernel --install

# The 6.12 PREEMPT_RT lockdep kernel from linux-source-6.12, installed the
# same way ("tests/vm/build-debug-kernel --rt --release" names it).
debug-kernel-rt:
	scripts/deps --debug-kernel
	tests/vm/build-debug-kernel --rt --install
