# fembench: `make setup` installs PoCL and NVRTC (Debian/Ubuntu); `make test` runs the test suite;
# `make reproduce` runs every experiment and writes its report (GPU cases are skipped, with the
# reason, where no GPU is present).
#   make reproduce QUICK=1     the small CPU/PoCL subset (a few minutes on 2 cores)
#   make reproduce BACKENDS="cuda opencl"   only those backends

CARGO    ?= cargo
# PROFILE=dev: the harness as `make test` builds it, on the test build's compiled dependencies
# (CI runs the quick reproduction so, rather than compile every dependency a second time,
# optimised). Timings to keep come from the release build.
PROFILE  ?= release
HARNESS  := $(or $(CARGO_TARGET_DIR),target)/$(if $(filter dev,$(PROFILE)),debug,$(PROFILE))/harness
RESULTS  ?= results
QUICK    ?=
# NVRTC as scripts/setup.sh installs it (a system NVRTC is found by the loader as it is).
NVRTC_DIR ?= $(HOME)/.cache/fembench/nvrtc
NVRTC_LIB := $(patsubst %/,%,$(dir $(firstword $(shell find $(NVRTC_DIR) -name 'libnvrtc.so.*' 2>/dev/null))))
export LD_LIBRARY_PATH := $(NVRTC_LIB)$(if $(NVRTC_LIB),$(if $(LD_LIBRARY_PATH),:))$(LD_LIBRARY_PATH)
# The full reproduction runs CUDA and the host: every paper table and figure comes from them.
# The OpenCL mirror of the GPU cases (the same kernel sources
# through the other API) would double the GPU minutes; `make reproduce-opencl` runs it as a run of
# its own. QUICK=1 runs every backend (CI runs the kernels on PoCL).
# BACKENDS="opencl cpu" for a GPU without CUDA.
BACKENDS ?= $(if $(QUICK),,cuda cpu)
# STOP_AFTER=<seconds>: start no case after that many seconds (the rest are left for --resume).
STOP_AFTER ?=
# GPUS=all (or 0,2,3): one worker per GPU of the node, then the CPU cases alone, then one merged
# run folder (docs/cluster.md).
GPUS ?=

RUN_FLAGS := $(if $(QUICK),--quick) $(foreach b,$(BACKENDS),--backend $(b)) $(if $(STOP_AFTER),--stop-after $(STOP_AFTER)) $(if $(GPUS),--gpus $(GPUS))
# The full reproduction first compiles, on every core, the kernels every stored run compiled
# (the union of their kernels.json) into the disk kernel cache, so that no case waits on NVRTC;
# a program that no longer compiles is reported and the run goes on (its cases say why).
# PRECOMPILE= turns it off, PRECOMPILE=<run or kernels.json ...> picks.
PRECOMPILE ?= $(sort $(wildcard results/published/*/kernels.json $(RESULTS)/*/kernels.json))

.PHONY: all setup build test reproduce reproduce-opencl validate devices bench gpu-bundle fmt clean

all: build

setup:
	./scripts/setup.sh

build:
	$(CARGO) build --profile $(PROFILE) --bin harness

# Without a Rust toolchain (a GPU machine), the carried binary in target/release is used as it is.
$(HARNESS):
	$(CARGO) build --profile $(PROFILE) --bin harness

test:
	$(CARGO) test --workspace

reproduce: $(if $(shell command -v $(CARGO)),build)
	$(HARNESS) validate experiments
	$(if $(QUICK),,$(if $(PRECOMPILE),-$(HARNESS) precompile $(PRECOMPILE) --any-device $(foreach b,$(filter-out cpu,$(BACKENDS)),--backend $(b))))
	$(HARNESS) run experiments $(RUN_FLAGS) --out $(RESULTS) --report

reproduce-opencl: $(if $(shell command -v $(CARGO)),build)
	$(if $(QUICK),,$(if $(PRECOMPILE),-$(HARNESS) precompile $(PRECOMPILE) --any-device --backend opencl))
	$(HARNESS) run experiments --backend opencl $(if $(QUICK),--quick) $(if $(STOP_AFTER),--stop-after $(STOP_AFTER)) --out $(RESULTS) --report

validate: $(HARNESS)
	$(HARNESS) validate experiments

devices: $(HARNESS)
	$(HARNESS) devices

bench:
	$(CARGO) bench --bench cpu_bandwidth

# Pack the release binary and the GPU test binary for a machine without Rust (see scripts/).
gpu-bundle:
	./scripts/gpu-bundle.sh

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
