# leakhound - SPDX-License-Identifier: MIT
# Thin wrapper over CMake: the habits (make, make demo, make check, make bench).
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
BUILD ?= build
SANITIZER ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
CTEST_ARGS ?=
FUZZ_SECONDS ?= 60

comma := ,
ifneq ($(SANITIZER),)
  BUILD := build-$(subst $(comma),-,$(SANITIZER))
  CMAKE_FLAGS += -DLH_SANITIZER=$(SANITIZER)
endif

.PHONY: all deps build demo check unit bench fuzz lint clean help

all: build ## build everything (agent, CLI, tests)

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

deps: ## install missing Debian packages (as root) or print the apt-get line
	@scripts/deps.sh test

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: deps $(BUILD)/Makefile ## configure and build with CMake
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory | { grep -v -e '^\[ *[0-9]*%\] Built target' -e '^Consolidate compiler' || true; }

demo: build ## run the bundled leaky server under leakhound and print the report
	@examples/demo.sh $(BUILD)

check: build ## build and run every test (unit, end-to-end, real programs)
	cd $(BUILD) && LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
		ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

fuzz: build ## run each fuzz target for FUZZ_SECONDS (default 60) over its corpus
	cd $(BUILD) && LH_FUZZ_SECONDS=$(FUZZ_SECONDS) ctest -L fuzz --output-on-failure

lint: deps ## cppcheck on the project's C code (the suppressions are explained in .ci/run)
	@cppcheck --enable=warning,performance,portability --std=c11 -D_GNU_SOURCE -D__x86_64__ \
	  -D__linux__ --error-exitcode=1 --inline-suppr -q -I format -I analysis -I agent \
	  -I views -I cli --suppress=shiftTooManyBitsSigned:format/enc.h \
	  --suppress=autoVariables:agent/snapshot.c agent format analysis views cli

bench: build ## run the benchmarks side by side (bench/RESULTS.md)
	@scripts/deps.sh bench
	@bench/run $(BUILD)

clean: ## remove build directories
	rm -rf build build-*
