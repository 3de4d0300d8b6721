#!/usr/bin/env bash
# Checks the README's promise on a genuinely fresh Debian 12: builds a
# minimal bookworm root filesystem (debootstrap --variant=minbase, from the
# mirror this machine's apt uses), gives it what a fresh machine of this kind
# has and the project cannot know (ca-certificates with the host's added
# certificate authorities, nothing else of the host), imports it into docker
# with CI=true set as CI sets it, copies the
# committed tree in (`git archive HEAD`: what a clone would hold, nothing
# untracked or built), and runs the README's two commands in it:
#   bash scripts/run-main.sh     then     bash scripts/test.sh
# It prints run-main's output and test.sh's summary block (ending in
# "N passed, M failed"), keeps the full logs in the folder it names, removes
# the root filesystem, image, container and volumes it created, and exits
# non-zero when either command failed. Not part of .ci/run: it takes as long
# as the suite (30-45 min on 2 cores).
#
# Needs root, debootstrap (installed when missing) and a docker daemon that
# answers (bash scripts/setup-runtimes.sh starts one).
#
# Environment: NP_FRESH_LOGS (logs folder, default /tmp/np-fresh-check.<date>),
# NP_FRESH_MIRROR (default: this machine's bookworm mirror),
# NP_FRESH_NETWORK (docker network of the container, default host: bridge
# networking does not work on these machines, and the container needs the mirror).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
logs=${NP_FRESH_LOGS:-/tmp/np-fresh-check.$(date -u +%Y%m%dT%H%M%SZ)}
network=${NP_FRESH_NETWORK:-host}
id=np-fresh-check-$$
image=$id:bookworm

say() { echo "fresh-check: $*"; }
die() { say "$*" >&2; exit 2; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, and the container's own engines)"
timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1 ||
  die "no docker daemon answers (start one: bash scripts/setup-runtimes.sh)"
git -C "$repo" rev-parse --verify -q HEAD >/dev/null || die "$repo is not a git checkout"
if ! command -v debootstrap >/dev/null 2>&1; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap \
    >/dev/null || die "cannot install debootstrap"
fi

mkdir -p "$logs" || die "cannot create $logs"
work=$(mktemp -d /var/tmp/np-fresh-check.XXXXXX)
cleanup() {
  docker rm -f -v "$id" >/dev/null 2>&1
  docker rmi "$image" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The mirror of this machine's bookworm suite (the same one apt uses here),
# and its security archive, as a fresh install's sources.list has them.
repo_uri() {
  # shellcheck disable=SC2016  # apt's own $(FIELD) syntax, not the shell's
  apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null |
    awk -v r="$1" '$1 == r { print $2; exit }'
}
mirror=${NP_FRESH_MIRROR:-$(repo_uri bookworm)}
mirror=${mirror:-http://deb.debian.org/debian/}
security=$(repo_uri bookworm-security)
security=${security:-http://deb.debian.org/debian-security/}

started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }

say "logs: $logs"
say "debootstrap --variant=minbase --include=ca-certificates bookworm from $mirror (log: $logs/debootstrap.log)"
rootfs=$work/rootfs
debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" "$mirror" >"$logs/debootstrap.log" 2>&1 ||
  die "debootstrap failed (see $logs/debootstrap.log)"
cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
# A fresh machine has no package lists yet (debootstrap leaves its own):
# the test command must run apt-get update itself.
rm -rf "$rootfs/var/lib/apt/lists/"*
# What a fresh machine of this kind has and the project cannot know: the
# certificate authorities its image adds (the proxy the npm registry is
# reached through), as the image installs them: the host's added ones are
# copied to /usr/local/share/ca-certificates and update-ca-certificates folds
# them into the system bundle (the ca-certificates package, whose
# maintainer script runs it, comes with the machine image).
added_cas=(/usr/local/share/ca-certificates/*.crt)
if [ -e "${added_cas[0]}" ]; then
  mkdir -p "$rootfs/usr/local/share/ca-certificates"
  cp "${added_cas[@]}" "$rootfs/usr/local/share/ca-certificates/"
fi
chroot "$rootfs" update-ca-certificates >>"$logs/debootstrap.log" 2>&1 ||
  die "update-ca-certificates failed in the root filesystem (see $logs/debootstrap.log)"
say "added certificate authorities: ${#added_cas[@]} (${added_cas[*]##*/})"
tar -C "$rootfs" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$image" >/dev/null ||
  die "docker import failed"
rm -rf "$rootfs"
say "imported $image ($(elapsed))"

# The container: near-privileged, as the suite needs its own docker, podman
# and bubblewrap inside. --privileged is refused here (the host's bounding set
# lacks CAP_SYS_RESOURCE), so every other capability, no seccomp, apparmor or
# masked /proc and /sys paths, every device, /sys/fs/cgroup read-write, and
# fresh anonymous volumes for the engines' state (overlayfs cannot stack on
# the container's own overlay root).
# CI=true, as CI runs the command: a test that lacks what it needs fails.
docker create --name "$id" --init --network "$network" -e CI=true \
  --cap-add ALL --cap-drop SYS_RESOURCE \
  --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
  --security-opt systempaths=unconfined --device-cgroup-rule 'a *:* rwm' \
  -v /sys/fs/cgroup:/sys/fs/cgroup:rw -v /var/lib/docker -v /var/lib/containers \
  -v "$logs:/fresh-logs" -w /root/np-exec "$image" bash -c '
    bash scripts/run-main.sh >/fresh-logs/run-main.out 2>&1; echo $? >/fresh-logs/run-main.rc
    cp build-main/run-main.log /fresh-logs/ 2>/dev/null
    start=$(date +%s)
    bash scripts/test.sh >/fresh-logs/test.out 2>&1; echo $? >/fresh-logs/test.rc
    echo $(($(date +%s) - start)) >/fresh-logs/test.seconds
    cp -r build/test-logs /fresh-logs/ 2>/dev/null
    true' >/dev/null || die "docker create failed"
mkdir -p "$work/tree/root/np-exec"
git -C "$repo" archive HEAD | tar -x -C "$work/tree/root/np-exec" || die "git archive failed"
docker cp "$work/tree/root" "$id:/" || die "docker cp failed"
say "copied $(git -C "$repo" rev-parse --short HEAD) (git archive HEAD) to /root/np-exec"
say "running run-main.sh, then test.sh (about 30-45 min; follow $logs/test.out)"
docker start -a "$id" >"$logs/container.out" 2>&1

rc_of() { cat "$logs/$1.rc" 2>/dev/null || echo missing; }
main_rc=$(rc_of run-main)
test_rc=$(rc_of test)

echo
echo "== run-main.sh (exit $main_rc)"
cat "$logs/run-main.out" 2>/dev/null
echo
echo "== test.sh (exit $test_rc, $(cat "$logs/test.seconds" 2>/dev/null || echo '?') s)"
# The summary block: from test.sh's "== summary" line to its end.
sed -n '/^== summary/,$p' "$logs/test.out" 2>/dev/null
echo
say "done in $(elapsed); full logs in $logs"
[ "$main_rc" = 0 ] && [ "$test_rc" = 0 ]
