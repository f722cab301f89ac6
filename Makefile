# dsmm: the two README commands.
#   make demo   installs what is missing (Debian/Ubuntu), builds in Release, runs the main job
#   make test   same set-up, builds and runs the whole test suite (ctest)
# CI=true adds -Werror (and .ci/run adds a sanitizer build of the suite).
BUILD     ?= build
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
ifeq ($(CI),true)
  CMAKE_ARGS += -DDSMM_WERROR=ON
endif

.PHONY: all deps demo test test-sanitize valgrind install bench fuzz cuda-check clean

all: demo

deps:
	@bash scripts/install-deps.sh

demo: deps
	cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	cmake --build $(BUILD)/release -j $(JOBS) --target dsmm_cli
	bash scripts/demo.sh $(BUILD)/release/bin/dsmm

test: deps
	cmake -S . -B $(BUILD)/test -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS) >/dev/null
	cmake --build $(BUILD)/test -j $(JOBS)
	cd $(BUILD)/test && ctest --output-on-failure -j $(JOBS)

# The sanitizer build compiles at -O1, as ASan's documentation advises, and runs the MPI tests at
# up to 4 ranks (`make test` runs them all): on a 2-core Zen 1 VM its ctest took 1028 s, against
# 2097 s at -O0 with every rank count (test_spmm 36 s against 159).
test-sanitize: deps
	cmake -S . -B $(BUILD)/asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
	  -DDSMM_SANITIZE=address,undefined -DDSMM_TEST_MAX_RANKS=4 $(CMAKE_ARGS) >/dev/null
	cmake --build $(BUILD)/asan -j $(JOBS)
	cd $(BUILD)/asan && ctest --output-on-failure -j $(JOBS)

valgrind: test
	@bash scripts/install-deps.sh valgrind
	bash scripts/valgrind.sh $(BUILD)/test

# cuda-check: the CUDA sources compile and link (host code at -O0, which takes 80 s here where
# -O2 took 200; device code is optimised either way); the GPU tests skip without a GPU.
cuda-check:
	@if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then \
	  PATH=$$PATH:/usr/local/cuda/bin cmake -S . -B $(BUILD)/cuda -DCMAKE_BUILD_TYPE=Debug -DDSMM_USE_CUDA=ON -DDSMM_BUILD_TESTS=ON -DDSMM_BUILD_BENCH=ON $(CMAKE_ARGS) >/dev/null && \
	  PATH=$$PATH:/usr/local/cuda/bin cmake --build $(BUILD)/cuda -j $(JOBS) --target dsmm_cli test_gpu_host test_gpu bench_gpu && \
	  echo "cuda-check: CUDA sources compiled" && \
	  (cd $(BUILD)/cuda && ctest -R '^test_gpu' --output-on-failure); \
	else echo "cuda-check: no nvcc, skipped"; fi

install: deps
	cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	cmake --build $(BUILD)/release -j $(JOBS)
	cmake --install $(BUILD)/release $(if $(PREFIX),--prefix $(PREFIX),)

bench: deps
	@bash scripts/install-deps.sh bench
	cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	cmake --build $(BUILD)/release -j $(JOBS)
	bash bench/run_all.sh $(BUILD)/release

fuzz:
	@bash scripts/install-deps.sh fuzz
	CC=clang cmake -S . -B $(BUILD)/fuzz -DDSMM_FUZZ=ON -DDSMM_USE_MPI=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD)/fuzz -j $(JOBS) --target fuzz_mtx fuzz_abc fuzz_read fuzz_clusters fuzz_json
	bash scripts/fuzz.sh $(BUILD)/fuzz $(or $(FUZZ_SECONDS),60)

clean:
	rm -rf $(BUILD)
