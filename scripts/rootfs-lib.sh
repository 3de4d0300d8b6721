# Sourced, not run: the machinery scripts/build-images.sh and
# scripts/build-agent-image.sh share to build an image with no registry, from
# Debian's packages: a minimal root filesystem with a package list's whole
# dependency closure unpacked into it, then `docker import` / `podman import`,
# cached by a recipe-hash tag.
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
# done here with `ldconfig -r`.
#
# Caching: each image is also tagged <name>:recipe-<hash>, where the hash is
# of the files that make the recipe (recipe_tag). When that tag is present
# nothing is built; <name>:local is (re)pointed at it either way, and older
# recipe-* tags of the same name are removed. NP_REBUILD_IMAGES=1 forces a
# build.
#
# The sourcing script sets `log_name` (its log prefix) and calls, in order:
#   rootfs_init RUNTIME...     the runtimes to build for (none given: docker
#                              when its daemon answers, and podman when
#                              installed; exits 0 when there is none), a work
#                              directory removed on exit, apt's options
#   recipe_tag FILE...         sets `tag` to recipe-<hash of the files>
#   publish NAME PATH BUILD    for each runtime, NAME:$tag present or built
#                              (BUILD DIR makes the root filesystem in DIR,
#                              once, only when some runtime lacks the tag),
#                              imported with ENV PATH=PATH, then NAME:local
# BUILD functions use make_rootfs DIR PACKAGE... and may add to DIR after it.
# shellcheck shell=bash

log() { echo "${log_name:-rootfs}: $*" >&2; }

rootfs_init() {
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
  return 0
}

recipe_tag() {
  tag=recipe-$(cat "$@" | sha256sum | cut -c1-12)
}

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

# make_rootfs DIR PACKAGE...: the packages and their closure unpacked into
# DIR. The list must hold busybox-static (the shell and the small tools, and
# /usr/bin/env for #!/usr/bin/env scripts).
make_rootfs() {
  local r=$1 debs=$1.debs deb d
  shift
  fetch_debs "$debs" "$@" || return 1
  mkdir -p "$r/usr/bin" "$r/usr/sbin" "$r/usr/lib" "$r/usr/lib64"
  # Merged /usr, as bookworm's debootstrap makes it; tar keeps these links
  # instead of replacing them with the packages' ./bin, ./lib, ... folders.
  for d in bin sbin lib lib64; do ln -s "usr/$d" "$r/$d"; done
  for deb in "$debs"/*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$r" || return 1
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

# import RUNTIME ROOTFS NAME PATH: imports the tree as NAME:$tag.
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

# publish NAME PATH BUILD: see the top of this file. The root filesystem is
# removed once imported everywhere.
publish() {
  local name=$1 env_path=$2 build=$3 rootfs="" runtime start
  for runtime in "${runtimes[@]}"; do
    if [ "${NP_REBUILD_IMAGES:-0}" != 1 ] && has_image "$runtime" "$name:$tag"; then
      log "$runtime $name:$tag present"
    else
      if [ -z "$rootfs" ]; then
        rootfs=$work/$name
        start=$(date +%s)
        "$build" "$rootfs" || { log "building the root filesystem of $name failed"; return 1; }
        log "$name root filesystem: $(du -sm "$rootfs" | cut -f1) MB from $(find "$rootfs.debs" -name '*.deb' | wc -l) packages in $(($(date +%s) - start)) s"
      fi
      start=$(date +%s)
      import "$runtime" "$rootfs" "$name" "$env_path" || { log "$runtime import of $name failed"; return 1; }
      log "$runtime $name:$tag built (import $(($(date +%s) - start)) s)"
    fi
    "$runtime" tag "$name:$tag" "$name:local" || return 1
    drop_old_recipes "$runtime" "$name"
  done
  [ -z "$rootfs" ] || rm -rf "$rootfs" "$rootfs.debs"
}
