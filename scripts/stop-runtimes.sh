#!/usr/bin/env bash
# Stops what scripts/setup-runtimes.sh started, and only that: the dockerd
# whose pid it recorded in $NP_RUNTIME_DIR/dockerd.pid. A daemon that was
# already running before is never touched.
set -uo pipefail

state=${NP_RUNTIME_DIR:-/tmp/np-exec-runtimes}
# The podman API services np-exec itself started for the tests' warm spawns,
# each in a test process's own state store (they would end after their idle
# time).
pkill -TERM -f '/np-exec-test-state[^/]*/np-exec/engines/podman-' 2>/dev/null
pidfile=$state/dockerd.pid
[ -s "$pidfile" ] || exit 0
pid=$(cat "$pidfile")
# Only if that pid is still a dockerd (it may have exited and the pid been reused).
if [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = dockerd ]; then
  echo "stop-runtimes: stopping dockerd (pid $pid)" >&2
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "stop-runtimes: dockerd did not stop in 15 s; killing it" >&2
    kill -KILL "$pid" 2>/dev/null
  fi
fi
rm -f "$pidfile"
exit 0
