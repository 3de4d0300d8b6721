#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (-fsanitize=fuzzer,address,
# undefined) and runs each for a short time from the seed corpus in
# fuzz/corpus/<target>/. Exits non-zero when a target crashes or an invariant
# breaks; the crashing input is left in BUILD_DIR/fuzz/artifacts/.
#
#   scripts/fuzz.sh [BUILD_DIR] [SECONDS]   defaults: <repo>/build-fuzz, 30
#
# Environment: NP_FUZZ_SECONDS (overrides SECONDS), NP_JOBS (build jobs, 2),
# NP_FUZZ_TARGETS (space-separated subset of targets).
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$src/build-fuzz}"
seconds="${NP_FUZZ_SECONDS:-${2:-30}}"
jobs="${NP_JOBS:-2}"
targets="${NP_FUZZ_TARGETS:-fuzz_config fuzz_argv fuzz_proxy_request}"

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is required" >&2; exit 2; }

cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DNP_FUZZ=ON -DNP_BUILD_TESTS=OFF -DNP_BUILD_BENCH=OFF -DNP_HOT_ORDER=OFF >/dev/null
cmake --build "$build" --target $targets -j "$jobs"

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for target in $targets; do
  work="$build/fuzz/corpus-$target"  # New inputs go here, not into the repository.
  artifacts="$build/fuzz/artifacts"
  mkdir -p "$work" "$artifacts"
  echo "== $target: ${seconds}s"
  if ! "$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=4096 -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
      "$work" "$src/fuzz/corpus/$target"; then
    echo "fuzz.sh: $target failed; see $artifacts/" >&2
    status=1
  fi
done
exit $status
