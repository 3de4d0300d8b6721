#!/usr/bin/env bash
# Brings up the container runtimes the end-to-end tests use, on a machine with
# no init system (see shared/reference/runtimes.md):
#
#   docker  installs docker.io when missing; starts dockerd by hand (setsid,
#           its own log and pid file) when no daemon answers, polling up to
#           ~30 s; a daemon that already answers is used and never touched.
#   podman  installs podman and catatonit (for --init) when missing; writes a
#           containers.conf with default_ulimits for these machines (the shell
#           lacks CAP_SYS_RESOURCE and the hard NOFILE limit is 20000), used only
#           through CONTAINERS_CONF, so /etc is not edited.
#   bwrap   installs bubblewrap when missing; checks a no-op sandbox.
#
# Then builds the test images (scripts/build-images.sh) and the agent images
# (scripts/build-agent-image.sh claude, codex, gemini), installs the same CLIs
# into $NP_RUNTIME_DIR/agent-prefix for bubblewrap (scripts/install-agent-clis.sh;
# NP_AGENT_IMAGES=0 skips both outside CI) and smoke-tests each runtime with a
# hardened run.
#
# State goes to $NP_RUNTIME_DIR (default /tmp/np-exec-runtimes):
#   dockerd.pid, dockerd.log   only when this script started dockerd
#   containers.conf            for CONTAINERS_CONF
#   status                     one line per runtime: "docker ok" or "docker failed: why"
#   env                        lines to source: CONTAINERS_CONF=...
#   agent-prefix/              node and the agent CLIs (npm install -g --prefix)
#
# Exit status: 0 when every runtime is up. With CI=true any runtime that cannot
# be brought up fails the script (exit 1); otherwise it is reported and the
# tests skip what is missing. scripts/stop-runtimes.sh undoes what this started.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
state=${NP_RUNTIME_DIR:-/tmp/np-exec-runtimes}
mkdir -p "$state"
: >"$state/status"
export DEBIAN_FRONTEND=noninteractive

log() { echo "setup-runtimes: $*" >&2; }
record() { echo "$1 $2" >>"$state/status"; log "$1: $2"; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

apt_updated=0
apt_install() {
  local missing=() p
  for p in "$@"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    log "not root, cannot install: ${missing[*]}"
    return 1
  fi
  if [ $apt_updated = 0 ]; then
    apt-get update -qq >/dev/null || return 1
    apt_updated=1
  fi
  log "installing ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

docker_answers() { timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

setup_docker() {
  command -v dockerd >/dev/null 2>&1 || apt_install docker.io || { record docker "failed: cannot install docker.io"; return 1; }
  command -v docker >/dev/null 2>&1 || { record docker "failed: no docker client"; return 1; }
  if [ -z "${DOCKER_HOST:-}" ] && docker_answers; then
    record docker "ok (daemon already running, left alone)"
    return 0
  fi
  if [ -n "${DOCKER_HOST:-}" ]; then
    docker_answers && { record docker "ok (DOCKER_HOST=$DOCKER_HOST)"; return 0; }
    record docker "failed: DOCKER_HOST=$DOCKER_HOST does not answer"
    return 1
  fi
  # `service docker start` fails here (its ulimit needs CAP_SYS_RESOURCE), so
  # start the daemon by hand, detached from this shell's session.
  log "starting dockerd (log $state/dockerd.log)"
  setsid dockerd --pidfile "$state/dockerd.pid" >"$state/dockerd.log" 2>&1 </dev/null &
  local i=0
  until docker_answers; do
    i=$((i + 1))
    if [ $i -gt 300 ] || ! kill -0 $! 2>/dev/null; then
      record docker "failed: dockerd did not answer within 30 s (see $state/dockerd.log)"
      tail -20 "$state/dockerd.log" >&2
      return 1
    fi
    sleep 0.1
  done
  [ -s "$state/dockerd.pid" ] || echo $! >"$state/dockerd.pid"
  record docker "ok (dockerd started by this script, pid $(cat "$state/dockerd.pid"))"
}

setup_podman() {
  apt_install podman catatonit tini || { record podman "failed: cannot install podman/catatonit/tini"; return 1; }
  cat >"$state/containers.conf" <<'EOF'
# Written by scripts/setup-runtimes.sh for np-exec's own test runs only
# (selected with CONTAINERS_CONF). Podman asks for NOFILE and NPROC of 1048576,
# above this machine's hard limits, and the shell cannot raise them.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
events_logger = "file"
cgroup_manager = "cgroupfs"
EOF
  echo "CONTAINERS_CONF=$state/containers.conf" >"$state/env"
  export CONTAINERS_CONF="$state/containers.conf"
  if ! timeout 30 podman version --format '{{.Client.Version}}' >/dev/null 2>&1; then
    record podman "failed: podman version does not answer"
    return 1
  fi
  record podman "ok"
}

setup_bwrap() {
  apt_install bubblewrap || { record bwrap "failed: cannot install bubblewrap"; return 1; }
  if ! bwrap --unshare-all --die-with-parent --cap-drop ALL --ro-bind /usr /usr \
      --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
      --proc /proc --dev /dev --remount-ro / /usr/bin/true >/dev/null 2>&1; then
    record bwrap "failed: bubblewrap cannot create its namespaces here"
    return 1
  fi
  record bwrap "ok"
}

smoke() {
  local runtime=$1
  local out
  out=$("$runtime" run --rm -i --init --network none --cap-drop ALL --security-opt no-new-privileges \
        --read-only --pull=never np-test:local sh -c 'echo ok' 2>&1)
  if [ "$out" != ok ]; then
    sed -i "/^$runtime /d" "$state/status"
    record "$runtime" "failed: hardened smoke run printed: $out"
    return 1
  fi
}

failed=0
apt_install busybox-static || log "cannot install busybox-static"
docker_ok=0; podman_ok=0
setup_docker && docker_ok=1 || failed=1
setup_podman && podman_ok=1 || failed=1
setup_bwrap || failed=1

images=()
[ $docker_ok = 1 ] && images+=(docker)
[ $podman_ok = 1 ] && images+=(podman)
if [ ${#images[@]} -gt 0 ]; then
  if ! bash "$here/build-images.sh" "${images[@]}"; then
    log "building the test images failed"
    failed=1
  fi
  # The agent images (np-agent-claude, -codex, -gemini), from Debian's
  # packages and the npm registry; cached, so only a first run downloads.
  # NP_AGENT_IMAGES=0 skips them, except under CI=true.
  if [ "${NP_AGENT_IMAGES:-1}" = 0 ] && [ "${CI:-}" != true ]; then
    log "NP_AGENT_IMAGES=0: the agent images are not built; their tests will skip"
  else
    for agent in claude codex gemini; do
      if ! bash "$here/build-agent-image.sh" "$agent" "${images[@]}"; then
        log "building np-agent-$agent failed"
        failed=1
      fi
    done
  fi
fi
# The same CLIs on the host, in a user-level npm prefix, for the bubblewrap
# container tier (scripts/install-agent-clis.sh; cached, and npm reuses what
# the images' build fetched). NP_AGENT_IMAGES=0 skips it too, except under CI=true.
if [ "${NP_AGENT_IMAGES:-1}" = 0 ] && [ "${CI:-}" != true ]; then
  log "NP_AGENT_IMAGES=0: the agent CLIs are not installed in $state/agent-prefix; their bubblewrap tests will skip"
elif ! bash "$here/install-agent-clis.sh" "$state/agent-prefix"; then
  log "installing the agent CLIs into $state/agent-prefix failed"
  failed=1
fi
[ $docker_ok = 1 ] && { smoke docker || failed=1; }
[ $podman_ok = 1 ] && { smoke podman || failed=1; }

cat "$state/status" >&2
if [ $failed != 0 ]; then
  if [ "${CI:-}" = true ]; then
    log "CI=true and a runtime or an image could not be brought up: failing"
    exit 1
  fi
  log "some runtimes are unavailable; their end-to-end tests will skip (CI is not true)"
fi
exit 0
