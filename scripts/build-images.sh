#!/usr/bin/env bash
# Builds the end-to-end test images from Debian's packages, without a registry
# (there is none on these machines): a minimal root filesystem with the
# packages a test needs unpacked into it, then `docker import` / `podman import`.
#
#   np-test:local  busybox-static; ENV PATH=/bin
#   np-node:local  nodejs (node at /usr/bin/node), git, busybox-static (a
#                  shell, and /usr/bin/env for #!/usr/bin/env node);
#                  ENV PATH=/usr/bin:/bin
#
# How: apt resolves each package list against an empty dpkg status (so it
# lists the whole dependency closure, as on an empty machine, alternatives and
# virtual packages resolved its own way), `apt-get download` fetches exactly
# those versions from the mirror in /etc/apt/sources.list(.d), and each .deb
# is unpacked with dpkg-deb into a merged-/usr tree, as bookworm lays it out.
# Why not debootstrap: it would add a package the test command does not
# install, run a second-stage chroot (which needs more rights than a build
# should), and unpack ~200 MB of minbase for every image; this takes a few
# seconds and needs only apt and dpkg, which every Debian machine has. No
# maintainer script runs: the images need files, and the one thing these
# packages' scripts do that matters, the loader cache (libc-bin's trigger), is
# done here with `ldconfig -r`. The image's node is Debian's, whatever node the
# host has (Debian's nodejs needs libnode108 and /usr/share/nodejs; both come
# with the closure).
#
# Caching: each image is also tagged <name>:recipe-<hash>, where the hash is
# of this file (the package lists and the recipe live here). When that tag is
# present nothing is built; <name>:local is (re)pointed at it either way, and
# older recipe-* tags of the same name are removed. NP_REBUILD_IMAGES=1 forces
# a build.
#
# Usage: bash scripts/build-images.sh [docker|podman]...   (default: both that answer)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
recipe=$(sha256sum "$here/build-images.sh" | cut -c1-12)
tag=recipe-$recipe

log() { echo "build-images: $*" >&2; }

# name | packages | ENV PATH
images=(
  "np-test|busybox-static|/bin"
  "np-node|nodejs git busybox-static|/usr/bin:/bin"
)

runtimes=("$@")
if [ ${#runtimes[@]} -eq 0 ]; then
  command -v docker >/dev/null 2>&1 && docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && runtimes+=(docker)
  command -v podman >/dev/null 2>&1 && runtimes+=(podman)
fi
[ ${#runtimes[@]} -gt 0 ] || { log "no runtime to build for"; exit 0; }

work=$(mktemp -d /tmp/np-images.XXXXXX)
trap 'rm -rf "$work"' EXIT
empty_status=$work/dpkg-status
: >"$empty_status"
# apt's downloads run as _apt, which cannot enter a 0700 temporary folder.
apt_opts=(-q -o "Dir::State::status=$empty_status" -o Debug::NoLocking=1)
[ "$(id -u)" = 0 ] && apt_opts+=(-o APT::Sandbox::User=root)

# closure PACKAGE...: name=version of every package an empty machine would
# install for them (no recommends), one a line.
closure() {
  apt-get "${apt_opts[@]}" -s install --no-install-recommends "$@" |
    awk '/^Inst /{ v = $3; gsub(/[()]/, "", v); print $2 "=" v }'
}

# download DIR PACKAGE...: resolves the closure and fetches it into DIR.
download() {
  local dir=$1 list
  shift
  list=$(closure "$@") && [ -n "$list" ] || return 1
  # shellcheck disable=SC2086  # one name=version a word
  (cd "$dir" && apt-get "${apt_opts[@]}" download $list >/dev/null)
}

# fetch_debs DIR PACKAGE...: downloads the closure into DIR. Missing or stale
# package lists (a version the mirror dropped) are refreshed once when root.
fetch_debs() {
  local dir=$1
  shift
  mkdir -p "$dir"
  download "$dir" "$@" && return 0
  [ "$(id -u)" = 0 ] || { log "cannot resolve or download: $* (apt-get update as root may help)"; return 1; }
  log "resolving or downloading failed; apt-get update and one retry"
  apt-get -qq update >/dev/null
  rm -f "$dir"/*.deb
  download "$dir" "$@" || { log "cannot resolve or download: $*"; return 1; }
}

# make_rootfs DIR PACKAGE...: the packages and their closure unpacked into DIR.
make_rootfs() {
  local r=$1 debs=$1.debs deb d
  shift
  fetch_debs "$debs" "$@"
  mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib" "$r/usr/lib64"
  # Merged /usr, as bookworm's debootstrap makes it; tar keeps these links
  # instead of replacing them with the packages' ./bin, ./lib, ... folders.
  for d in bin sbin lib lib64; do ln -s "usr/$d" "$r/$d"; done
  for deb in "$debs"/*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$r"
  done
  mkdir -p "$r/etc" "$r/tmp" "$r/home" "$r/root"
  chmod 1777 "$r/tmp"
  echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
  echo 'root:x:0:' >"$r/etc/group"
  # busybox --install -s, done from outside: a link for every applet no
  # package provides (sh, env, cat, ...).
  local applet
  for applet in $("$r/usr/bin/busybox" --list); do
    [ -e "$r/usr/bin/$applet" ] || [ -L "$r/usr/bin/$applet" ] || ln -s busybox "$r/usr/bin/$applet"
  done
  # The loader cache libc-bin's trigger would write.
  if [ -d "$r/etc/ld.so.conf.d" ]; then
    echo 'include /etc/ld.so.conf.d/*.conf' >"$r/etc/ld.so.conf"
    "$(command -v ldconfig || echo /sbin/ldconfig)" -r "$r"
  fi
  rm -rf "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/info" "$r/usr/share/locale"
}

has_image() { "$1" image inspect "$2" >/dev/null 2>&1; }

# import RUNTIME ROOTFS NAME PATH: imports the tree as NAME:recipe-<hash>.
import() {
  local runtime=$1 r=$2 name=$3 env_path=$4 change
  change=(--change "ENV PATH=$env_path")
  [ "$runtime" = podman ] && change+=(--quiet)
  tar -C "$r" -c . | "$runtime" import "${change[@]}" - "$name:$tag" >/dev/null
}

# drop_old_recipes RUNTIME NAME: removes NAME:recipe-* tags other than ours
# (an image in use stays; the next build tries again).
drop_old_recipes() {
  local runtime=$1 name=$2 ref
  for ref in $("$runtime" image ls --format '{{.Repository}}:{{.Tag}}' 2>/dev/null |
    grep -E "(^|/)$name:recipe-" | grep -v ":$tag\$" || true); do
    "$runtime" rmi "$ref" >/dev/null 2>&1 || true
  done
}

for entry in "${images[@]}"; do
  IFS='|' read -r name packages env_path <<<"$entry"
  rootfs=""
  for runtime in "${runtimes[@]}"; do
    if [ "${NP_REBUILD_IMAGES:-0}" != 1 ] && has_image "$runtime" "$name:$tag"; then
      log "$runtime $name:$tag present"
    else
      if [ -z "$rootfs" ]; then
        rootfs=$work/$name
        start=$(date +%s)
        # shellcheck disable=SC2086  # the package list is words
        make_rootfs "$rootfs" $packages
        log "$name root filesystem: $(du -sm "$rootfs" | cut -f1) MB from $(find "$rootfs.debs" -name "*.deb" | wc -l) packages in $(($(date +%s) - start)) s"
      fi
      import "$runtime" "$rootfs" "$name" "$env_path"
      log "$runtime $name:$tag built"
    fi
    "$runtime" tag "$name:$tag" "$name:local"
    drop_old_recipes "$runtime" "$name"
  done
done
