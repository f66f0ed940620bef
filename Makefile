# The two commands of the README: `make demo` and `make test`. Both install missing
# Debian packages (as root), configure, and build Release before they run.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build demo test sanitize tsan fuzz fuzz-long format bench clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@./scripts/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

sanitize: deps
	@cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=ON \
	  -DTESSERA_BUILD_BENCH=OFF >/dev/null
	@cmake --build build-sanitize -j $(JOBS)
	@cd build-sanitize && ctest --output-on-failure -j $(JOBS)

# ThreadSanitizer over the work scheduler and the TPC kernels, which spread cores over host threads.
TSAN_TESTS = test_sim test_tpc_intrinsics test_tpc_runtime test_tpc_library test_tpc_kernels_elementwise \
  test_tpc_kernels_reduce test_tpc_kernels_pool test_tpc_kernels_movement \
  test_tpc_kernels_determinism test_tpc_mme
tsan: deps
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_TSAN=ON \
	  -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_EXAMPLES=OFF >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target $(TSAN_TESTS)
	@cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -L 'sim|tpc'

# libFuzzer targets (fuzz/README.md), built with Debian's clang 16 into build-fuzz/: clang 14,
# Debian's default, has no _Float16 on x86-64 (ipu, aicore) and cannot capture a structured binding.
FUZZ_SECONDS ?= 300
FUZZ_TARGETS = onnx tsm preset ctable bmodel
FUZZ_PACKAGES = clang-16 libclang-rt-16-dev libomp-16-dev
fuzz:
	@command -v clang++-16 >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get install -y --no-install-recommends $(FUZZ_PACKAGES); } \
	  || { echo "make fuzz: needs the Debian packages $(FUZZ_PACKAGES)" >&2; exit 1; }
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-16 \
	  -DCMAKE_CXX_COMPILER=clang++-16 -DTESSERA_FUZZ=ON -DTESSERA_WERROR=OFF -DTESSERA_BUILD_TESTS=OFF \
	  -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_EXAMPLES=OFF >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target $(addsuffix _fuzzer,$(FUZZ_TARGETS))

# Each target for FUZZ_SECONDS, one after the other; new inputs go to build-fuzz/corpus/<t>,
# crashes to build-fuzz/artifacts/ (add them to tests/regressions/ once fixed).
fuzz-long: fuzz
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus/$$t build-fuzz/artifacts; \
	  echo "== $$t for $(FUZZ_SECONDS) s"; \
	  build-fuzz/fuzz/$${t}_fuzzer build-fuzz/corpus/$$t fuzz/corpus/$$t \
	    $$([ -f fuzz/$$t.dict ] && echo -dict=fuzz/$$t.dict) \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=30 -rss_limit_mb=2560 -print_final_stats=1 \
	    -artifact_prefix=build-fuzz/artifacts/$$t- || exit 1; \
	done

bench: build
	@for b in $(BUILD)/bench/bench_*; do echo "== $$b"; $$b; done

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	@rm -rf $(BUILD) build-sanitize build-tsan build-fuzz
