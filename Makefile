# SPDX-License-Identifier: GPL-2.0
#
# User targets of lruopt (the kbuild objects are in Kbuild).
#
#   make                      build lruopt.ko for the running kernel
#   make KVER=<uname -r>      build for another installed kernel (or KDIR=)
#   make check                the test suite: both stock kernels, in QEMU
#   make demo                 the A/B benchmark: both stock kernels, in QEMU
#   make deps                 install the Debian packages the above need
#
# Each kernel gets its own build directory, build/<kver>/, holding symlinks
# to the sources, the generated BTF layout header and the module.

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

RUNNING := $(shell uname -r)
KVER ?= $(RUNNING)
KDIR ?= /lib/modules/$(KVER)/build
B := build/$(KVER)

SRCS := lruopt_main.c lruopt_drain.c lruopt_munlock.c lruopt_memcg.c \
	lruopt.h lruopt_compat.h Kbuild

# Private structures mirrored in lruopt_compat.h, checked against BTF.
BTF_STRUCTS := cpu_fbatches lru_rotate mlock_pvec mlock_fbatch folio_batch \
	move_charge_struct
# Unexported plain data symbols that BTF cannot vouch for (see klp-convert).
KLP_DATA := mm_percpu_wq,mc,huge_zero_pfn,huge_zero_folio

# Where the target kernel's BTF comes from: the running kernel's sysfs copy,
# else the installed image.  Override with BTF=<file> and UTS_VERSION=<str>.
ifeq ($(KVER),$(RUNNING))
BTF ?= /sys/kernel/btf/vmlinux
UTS_VERSION ?= $(shell uname -v)
endif
ifneq ($(BTF),)
BTF_SRC := --btf $(BTF)
else
BTF_SRC := --vmlinuz /boot/vmlinuz-$(KVER)
endif
ifneq ($(UTS_VERSION),)
BTF_SRC += --uts-version "$(UTS_VERSION)"
endif

.PHONY: all module check demo deps clean style sparse help

all: module
ifeq ($(KVER),$(RUNNING))
	cp $(B)/lruopt.ko lruopt.ko
endif

module: | $(B)
	@test -d $(KDIR) || { echo "lruopt: no kernel build tree at $(KDIR):" \
		"install linux-headers-$(KVER) or pass KVER=/KDIR=" >&2; exit 1; }
	@for f in $(SRCS); do ln -sfn ../../$$f $(B)/$$f; done
	python3 scripts/btf-layout $(BTF_SRC) --kver $(KVER) \
		--ksyms $(B)/ksyms.txt -o $(B)/lruopt_btf.h.new $(BTF_STRUCTS)
	@cmp -s $(B)/lruopt_btf.h.new $(B)/lruopt_btf.h || \
		mv $(B)/lruopt_btf.h.new $(B)/lruopt_btf.h; rm -f $(B)/lruopt_btf.h.new
	@# modpost reports the unexported symbols as undefined: klp-convert
	@# checks and converts every one of them just below.
	$(MAKE) -C $(KDIR) M=$(abspath $(B)) KBUILD_MODPOST_WARN=1 modules 2>&1 \
		| { grep -v -e 'undefined!$$' || true; }
	python3 scripts/klp-convert --symvers $(KDIR)/Module.symvers \
		--ksyms $(B)/ksyms.txt --data $(KLP_DATA) --list $(B)/lruopt.ko

$(B):
	mkdir -p $@

check:
	scripts/check

demo:
	scripts/demo

deps:
	scripts/deps

clean:
	rm -rf build lruopt.ko

help:
	@sed -n '3,12p' Makefile
