#!/usr/bin/env bash
# A container-tier spawn (`np-exec -- true` in a project on shared storage)
# on a second docker engine with its own file system (tests/e2e/
# remote_engine_up.sh: dockerd and sshd in a privileged podman container):
#   local     np-exec on the engine's own host, against its local socket
#   tunnel    from this host over ssh, through the one reused connection
#   per-call  from this host over ssh, the client dialing ssh on every call
#             (NP_EXEC_ENGINE_TUNNEL=0)
# N spawns of each per round, ROUNDS rounds; prints the medians and ratios.
#
# Usage (root, docker and podman up, the build's np-exec):
#   N=10 ROUNDS=3 bash scripts/bench-remote-engine.sh [NP_EXEC]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
np_exec=$(realpath "${1:-$repo/build/bin/np-exec}")
N=${N:-10} ROUNDS=${ROUNDS:-3}
work=$(mktemp -d /tmp/np-bench-remote.XXXXXX)
name=np-bench-remote-$$
port=$((40000 + $$ % 20000))
trap 'podman rm -f -t 0 "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$work/shared/proj/.nubos-pilot" "$work/xdg/nubos-pilot"
bash "$repo/tests/e2e/remote_engine_up.sh" "$work/engine" "$port" "$name" np-test:local \
  "$(dirname "$np_exec")" "$work/shared"
project=$work/shared/proj
echo '{"isolation":{"tier":"container","container":{"image":"np-test:local"}}}' \
  >"$project/.nubos-pilot/config.json"
echo '{"isolation":{"container":{"remote_engine":true}}}' >"$work/xdg/nubos-pilot/config.json"
ms() {
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1 || echo "failed: $*" >&2
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
}
remote() {
  (cd "$project" && PATH="$work/engine/bin:$PATH" DOCKER_HOST="ssh://root@127.0.0.1:$port" \
    XDG_CONFIG_HOME="$work/xdg" NP_EXEC_ENGINE_TUNNEL=$1 "$np_exec" -- true)
}
out=$work/times
for _ in $(seq "$ROUNDS"); do
  podman exec -w "$project" "$name" /bin/sh -c "for i in \$(seq $N); do s=\$(date +%s%N); $np_exec -- true >/dev/null 2>&1 || echo failed >&2; e=\$(date +%s%N); echo local \$(( (e - s) / 1000000 )); done" >>"$out"
  for _ in $(seq "$N"); do echo "tunnel $(ms remote 1)" >>"$out"; done
  for _ in $(seq "$N"); do echo "per-call $(ms remote 0)" >>"$out"; done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kind, value = line.split()
    d[kind].append(int(value))
m = {k: statistics.median(v) for k, v in d.items()}
for k in ("local", "tunnel", "per-call"):
    print(f"{k:9} n={len(d[k]):3} median {m[k]:6.0f} ms  min {min(d[k]):5d} ms  {m[k] / m['local']:.2f} x local")
PY
