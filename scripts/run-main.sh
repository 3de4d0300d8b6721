#!/usr/bin/env bash
# The README's first command: install what is missing, build np-exec, and run
# its main job: a real spawn through the default (direct) tier in a demo
# project, then `np-exec status`, the audit log, and `wrap`. Debian 12, as root
# (or with sudo for the install). One line per step; apt's and cmake's output
# goes to $BUILD_DIR/run-main.log (default build-main/run-main.log), which the
# first line names and a failed step's last lines are shown from.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${BUILD_DIR:-$root/build-main}
mkdir -p "$build"
log=$build/run-main.log
: >"$log"
echo "log: $log"

# quiet STEP COMMAND...: runs it with its output in the log; on failure shows
# the log's tail and stops.
quiet() {
  local step=$1 start rc=0
  shift
  start=$(date +%s)
  echo "== $step" >>"$log"
  "$@" >>"$log" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    echo "$step: FAILED (exit $rc); the end of $log:"
    tail -20 "$log"
    exit $rc
  fi
  echo "$step: ok ($(($(date +%s) - start)) s)"
}

need=()
for pkg in build-essential cmake lld libabsl-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libseccomp-dev libssl-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  quiet "apt-get update" $sudo env DEBIAN_FRONTEND=noninteractive apt-get update
  quiet "apt-get install ${need[*]}" \
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
else
  echo "packages: all present"
fi

quiet "cmake configure ($build)" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DNP_BUILD_TESTS=OFF -DNP_BUILD_BENCH=OFF
quiet "cmake build np-exec" cmake --build "$build" --target np-exec -j"$(nproc)"
np="$build/bin/np-exec"
echo "built $np ($("$np" --version))"

demo=$(mktemp -d /tmp/np-exec-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir -p "$demo/.nubos-pilot" "$demo/src"
# No tier set: the spawn runs on the default tier, and `np-exec status` says
# `effective_from: default` (an operator file or NP_EXEC_TIER would raise it).
printf '{\n  "isolation": {}\n}\n' >"$demo/.nubos-pilot/config.json"
cd "$demo/src"

echo
echo "\$ np-exec -- sh -c 'echo \"hello from pid \$\$ in \$PWD (depth \$NP_EXEC_DEPTH)\"; exit 3'"
set +e
"$np" -- sh -c 'echo "hello from pid $$ in $PWD (depth $NP_EXEC_DEPTH)"; exit 3'
rc=$?
set -e
echo "exit status: $rc (the program's own)"
echo
echo "\$ np-exec status"
"$np" status
echo
echo "audit log ($demo/.nubos-pilot/audit/np-exec.jsonl):"
cat "$demo/.nubos-pilot/audit/np-exec.jsonl"
echo
echo "\$ np-exec wrap -- node tool.cjs   (what the container tier would run; nothing runs)"
NP_EXEC_TIER=container "$np" wrap -- node tool.cjs || echo "(refused: no container runtime usable here; the container tier is never downgraded)"
