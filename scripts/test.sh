#!/usr/bin/env bash
# The test command (README; .ci/run execs it). On a fresh Debian 12 machine, as
# root, it:
#   1. installs what is missing with apt (only then, after apt-get update);
#   2. configures and builds with -DNP_WERROR=ON in $BUILD_DIR (default build/),
#      every compile through ccache (its cache outlives the checkout, so a
#      second run on the same machine, or CI after a session, recompiles only
#      what changed);
#   3. meanwhile brings up docker, podman and bubblewrap and builds the test
#      images and the agent images (scripts/setup-runtimes.sh, in the
#      background: it needs no build, and the agent images spend their minutes
#      waiting on the npm registry; starts dockerd by hand when none answers);
#   4. runs ctest, every label (unit tests in parallel, the e2e and load labels
#      one at a time, since they share the engines and scan the process table),
#      then the container suites once more with warm sandboxes on;
#   5. checks the .deb with lintian and its copyright file as DEP-5
#      (scripts/check-package.sh), when lintian and python3-debian could be
#      installed;
#   6. runs scripts/sanitize.sh, scripts/fuzz.sh and scripts/bench.sh --short
#      when those exist (the short benchmarks on the build of step 2: a third
#      full build would only measure the same code at -O3; BENCHMARKS.md's
#      numbers come from bench.sh's own Release build);
#   7. stops the daemon it started (trap on EXIT) and prints a summary whose
#      last line is "N passed, M failed".
# With CI=true a runtime that cannot be brought up fails the run (and the e2e
# tests fail rather than skip). Exits non-zero on any failure.
#
# Environment: BUILD_DIR (default <repo>/build), NP_RUNTIME_DIR (runtime state,
# default $BUILD_DIR/runtimes), JOBS (default nproc).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
case $build in /*) ;; *) build=$repo/$build ;; esac
jobs=${JOBS:-$(nproc)}
export NP_RUNTIME_DIR=${NP_RUNTIME_DIR:-$build/runtimes}
export DEBIAN_FRONTEND=noninteractive
mkdir -p "$build" "$NP_RUNTIME_DIR"
logdir=$build/test-logs
mkdir -p "$logdir"

summary=()
tests_passed=0
tests_failed=0
steps_failed=0
steps_passed=0
step_notes=()  # lines a step's command adds under its summary line
counted=0  # set by run_ctest: its tests are counted one by one, not as a step

say() { printf '\n== %s\n' "$*"; }

# step NAME COMMAND...: runs it, records PASS/FAIL and the duration.
step() {
  local name=$1 start end rc
  shift
  say "$name"
  start=$(date +%s.%N)
  counted=0
  step_notes=()
  "$@"
  rc=$?
  end=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  if [ $rc -eq 0 ]; then
    summary+=("PASS  $name (${secs} s)")
    [ $counted = 1 ] || steps_passed=$((steps_passed + 1))
  else
    summary+=("FAIL  $name (exit $rc, ${secs} s)")
    [ $counted = 1 ] || steps_failed=$((steps_failed + 1))
  fi
  summary+=("${step_notes[@]}")
  return $rc
}

runtimes_pid=""
cleanup() {
  # A run ended early (a signal, a failed build) must not leave the
  # background bring-up going: end it first, so that what it started is
  # recorded before stop-runtimes.sh reads the records.
  if [ -n "$runtimes_pid" ] && kill -0 "$runtimes_pid" 2>/dev/null; then
    kill -TERM -- "-$runtimes_pid" 2>/dev/null  # its whole process group
    wait "$runtimes_pid" 2>/dev/null
  fi
  bash "$repo/scripts/stop-runtimes.sh"
}
trap cleanup EXIT

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

install_packages() {
  # Found by running this command on a fresh minimal Debian 12
  # (scripts/fresh-check.sh), not by reading the code: git for the worktree
  # and placeholder tests; ca-certificates for npm and git over https;
  # lintian and python3-debian for the package step (scripts/check-package.sh);
  # strace for the interposer's no-system-call test; hyperfine, socat and
  # ripgrep for scripts/bench.sh (srt, the peer it measures, needs the last two);
  # ccache for every build below; lld links the static np-exec in the order of
  # launcher/hot_path.order; openssh-server and openssh-client for the
  # remote engine's e2e test (an sshd of its own in a container, on a loopback port).
  local required=(build-essential ccache cmake lld clang-format libabsl-dev nlohmann-json3-dev libgtest-dev libgmock-dev
    googletest libbenchmark-dev libseccomp-dev libssl-dev clang libclang-rt-14-dev docker.io podman catatonit
    busybox-static bubblewrap tini jq groff-base util-linux iproute2 git ca-certificates
    lintian python3-debian strace hyperfine socat ripgrep openssh-server openssh-client)
  # The interposer's real-node tests exec /usr/bin/node itself.
  [ -x /usr/bin/node ] || required+=(nodejs)
  # scripts/build-agent-image.sh installs the agent CLIs with the host's npm.
  command -v npm >/dev/null 2>&1 || required+=(npm)
  local missing=() p
  for p in "${required[@]}"; do installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all packages present"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "not root: cannot install ${missing[*]}" >&2
    return 1
  fi
  apt-get update -qq || return 1
  echo "installing: ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Every C and C++ source of the project in clang-format's style (the repo's
# .clang-format: Google, 100 columns); names the files that differ.
format_check() {
  command -v clang-format >/dev/null 2>&1 || { echo "clang-format is not installed" >&2; return 1; }
  local files
  files=$(cd "$repo" && find core launcher shim tests bench fuzz \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -type f | sort)
  local bad=()
  local f
  for f in $files; do
    (cd "$repo" && clang-format --dry-run --Werror "$f" >/dev/null 2>&1) || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'not in clang-format style (run clang-format -i on them):\n' >&2
    printf '  %s\n' "${bad[@]}" >&2
    return 1
  fi
  echo "$(wc -w <<<"$files") files in clang-format style"
}

# Every build of this run (the -Werror build, the package's, the sanitizer's,
# the fuzzers') compiles through ccache, which CMake takes from these variables
# on a first configure. The base directory makes the checkout's path drop out
# of what is hashed, so a clone elsewhere hits the same cache; without the
# working directory in the hash, the debug info's paths are relative.
use_ccache() {
  command -v ccache >/dev/null 2>&1 || return 0
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$repo CCACHE_NOHASHDIR=true
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
}

build_project() {
  cmake -S "$repo" -B "$build" -DNP_WERROR=ON -DNP_BUILD_TESTS=ON -DNP_BUILD_BENCH=ON &&
    cmake --build "$build" -j "$jobs"
}

# run_ctest_warm NAME ARGS...: run_ctest with NP_E2E_WARM=1 (tests/support:
# every project's container spawns warm).
run_ctest_warm() { NP_E2E_WARM=1 run_ctest "$@"; }

# run_ctest NAME ARGS...: ctest with --output-on-failure, counting its tests.
run_ctest() {
  local name=$1 log=$logdir/$1.log rc
  shift
  (cd "$build" && ctest --output-on-failure "$@") 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  local line passed failed total
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  if [ -n "$line" ]; then
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
    total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
    passed=$((total - failed))
    tests_passed=$((tests_passed + passed))
    tests_failed=$((tests_failed + failed))
    # Counted test by test; but a non-zero ctest with no failed test (ctest
    # itself broke) stays a failed step.
    counted=1
    if [ "$failed" -eq 0 ] && [ $rc -ne 0 ]; then counted=0; fi
    summary+=("      $name: $passed of $total tests passed")
  elif grep -q 'No tests were found' "$log"; then
    summary+=("      $name: no tests")
    rc=0
  fi
  local skipped
  skipped=$(grep -cE '\*\*\*Skipped|\[  SKIPPED \] [A-Za-z]' "$log" || true)
  [ "${skipped:-0}" -gt 0 ] && summary+=("      $name: $skipped skipped (see $log)")
  [ "$rc" -eq 0 ] || note_failures "$log"
  return $rc
}

# note_failures LOG: puts under the current step's summary line the tests
# ctest listed as failed in LOG, and the log's path (CI shows the summary even
# when it cuts the rest of the output).
note_failures() {
  local log=$1 line
  while IFS= read -r line; do
    step_notes+=("      failed: ${line#"${line%%[![:space:]]*}"}")
  done < <(sed -n '/The following tests FAILED:/,/^[^[:space:]]/{/^[[:space:]]/p}' "$log")
  # The first assertions that failed, with a few lines of what they said:
  # CI keeps only the end of the output, and a failure seen once must be
  # diagnosable from the summary alone.
  while IFS= read -r line; do
    step_notes+=("        | ${line:0:200}")
  done < <(grep -A4 -E ': Failure$|^\[  FAILED  \] [A-Za-z].*\([0-9]+ ms\)$' "$log" | head -40)
  step_notes+=("      log: $log")
}

# run_logged LOG COMMAND...: runs it with its output also in LOG; see note_failures.
run_logged() {
  local log=$1 rc
  shift
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || note_failures "$log"
  return "$rc"
}

optional_script() {
  local script=$1
  shift
  if [ -f "$repo/scripts/$script" ]; then
    # Each uses its own build directory (build-asan, build-fuzz, ...).
    step "$script $*" run_logged "$logdir/${script%.sh}.log" bash "$repo/scripts/$script" "$@"
  else
    summary+=("SKIP  $script (not in this checkout)")
  fi
}

# bring_up_runtimes PID LOG: waits for the background setup-runtimes.sh and
# shows what it printed.
bring_up_runtimes() {
  local rc=0
  wait "$1" || rc=$?
  cat "$2"
  return $rc
}

started=$(date +%s)
step "install packages" install_packages
step "clang-format check" format_check
use_ccache
# In a process group of its own (setsid), so cleanup can end all of it.
setsid --wait bash "$repo/scripts/setup-runtimes.sh" >"$logdir/setup-runtimes.log" 2>&1 </dev/null &
runtimes_pid=$!
if step "configure and build (-DNP_WERROR=ON) in $build" build_project; then
  step "bring up runtimes and images (beside the build)" \
    bring_up_runtimes "$runtimes_pid" "$logdir/setup-runtimes.log"
  # CONTAINERS_CONF: podman's default_ulimits for these machines, for our runs only.
  if [ -f "$NP_RUNTIME_DIR/env" ]; then
    set -a
    # shellcheck disable=SC1091
    . "$NP_RUNTIME_DIR/env"
    set +a
  fi
  step "ctest: unit and integration" run_ctest unit -LE 'e2e|load' -j "$jobs"
  step "ctest: e2e and load (real runtimes)" run_ctest e2e-load -L 'e2e|load' -j 1
  # The whole e2e suite once more with warm sandboxes on for every project
  # (an operator file of the tests' own, NP_E2E_WARM). Tests that look for
  # what a sandbox keeps while it lives end the warm sandboxes first; the few
  # that test a cold-only property (a sandbox compared with bare bwrap or
  # with a printed plan's, containers counted per spawn) say warm false.
  step "ctest: e2e with warm sandboxes on" run_ctest_warm e2e-warm -L e2e -j 1
  step "package: lintian and DEP-5 copyright" run_logged "$logdir/package.log" \
    env NP_JOBS="$jobs" bash "$repo/scripts/check-package.sh" "$build"
  optional_script sanitize.sh
  optional_script fuzz.sh
  optional_script bench.sh --short --build-dir "$build" --no-build
else
  step "bring up runtimes and images (beside the build)" \
    bring_up_runtimes "$runtimes_pid" "$logdir/setup-runtimes.log"
  summary+=("SKIP  tests (the build failed)")
fi

# Nothing of ours may stay behind.
bash "$repo/scripts/stop-runtimes.sh"

say "summary ($(( $(date +%s) - started )) s)"
printf '%s\n' "${summary[@]}"
total_passed=$((tests_passed + steps_passed))
total_failed=$((tests_failed + steps_failed))
echo "ctest: $tests_passed passed, $tests_failed failed; other steps: $steps_passed passed, $steps_failed failed"
echo "$total_passed passed, $total_failed failed"
[ $total_failed -eq 0 ]
