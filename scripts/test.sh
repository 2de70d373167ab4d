#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up, check formatting, build with warnings as
# errors and run every test, then again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-$(nproc)}
export HEARTH_TEST_CACHE_DIR=${HEARTH_TEST_CACHE_DIR:-$PWD/.cache}
# Compiler cache hits across clones in other folders (CI clones afresh each run).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}

./scripts/setup.sh
./scripts/fetch-test-data.sh || echo "warning: test data fetch failed; tests that need it will say so"
./scripts/check-format.sh

run_suite() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DHEARTH_FATAL_WARNINGS=ON "$@" >/dev/null
  cmake --build "$dir" -j "$JOBS"
  (cd "$dir" && ctest --output-on-failure -j "$JOBS" --timeout 900)
}

echo "== build and test (Release, -Werror)"
run_suite build-ci -DCMAKE_BUILD_TYPE=Release

# -O1 with line tables keeps the sanitizer build about half as costly to compile as -O2 -g;
# asserts stay on here.
echo "== build and test (AddressSanitizer + UndefinedBehaviorSanitizer, asserts on)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DHEARTH_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_C_FLAGS_DEBUG="-O1 -g1"

echo "== all tests passed"
