#!/usr/bin/env bash
# Builds the end-to-end test images locally, without a registry (there is none
# on these machines): `docker import` / `podman import` of a rootfs made here.
#
#   np-test:local  busybox-static, ENV PATH=/bin
#   np-node:local  the same plus the host's /usr/bin/node and the libraries ldd
#                  lists, and /usr/bin/env -> busybox (for #!/usr/bin/env node)
#
# Usage: bash scripts/build-images.sh [docker|podman]...   (default: both that answer)
# An image that is already present is not rebuilt (NP_REBUILD_IMAGES=1 forces it).
set -euo pipefail

runtimes=("$@")
if [ ${#runtimes[@]} -eq 0 ]; then
  command -v docker >/dev/null 2>&1 && docker version --format '{{.Server.Version}}' >/dev/null 2>&1 && runtimes+=(docker)
  command -v podman >/dev/null 2>&1 && runtimes+=(podman)
fi

busybox=""
for candidate in /bin/busybox /usr/bin/busybox; do
  if [ -x "$candidate" ] && file -L "$candidate" 2>/dev/null | grep -q 'statically linked'; then
    busybox=$candidate
    break
  fi
done
# `file` may be missing on a minimal machine; ldd answers too.
if [ -z "$busybox" ]; then
  for candidate in /bin/busybox /usr/bin/busybox; do
    if [ -x "$candidate" ] && ! ldd "$candidate" >/dev/null 2>&1; then busybox=$candidate; break; fi
  done
fi
[ -n "$busybox" ] || { echo "build-images: no static busybox (apt-get install busybox-static)" >&2; exit 1; }

work=$(mktemp -d /tmp/np-images.XXXXXX)
trap 'rm -rf "$work"' EXIT

make_busybox_rootfs() {
  local r=$1
  mkdir -p "$r/bin" "$r/etc" "$r/tmp" "$r/home" "$r/usr/bin"
  chmod 1777 "$r/tmp"
  cp "$busybox" "$r/bin/busybox"
  local applet
  for applet in $("$busybox" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$r/bin/$applet"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
  echo 'root:x:0:' >"$r/etc/group"
}

make_node_rootfs() {
  local r=$1 node lib
  make_busybox_rootfs "$r"
  node=$(readlink -f "$(command -v node)")
  [ -x "$node" ] || { echo "build-images: no node on the host" >&2; return 1; }
  mkdir -p "$r/usr/bin"
  cp "$node" "$r/usr/bin/node"
  # Every library ldd lists (and the loader), at the same path as on the host.
  for lib in $(ldd "$node" | grep -o '/[^ ]*'); do
    mkdir -p "$r$(dirname "$lib")"
    cp -L "$lib" "$r$lib"
  done
  ln -sf /bin/busybox "$r/usr/bin/env"
}

has_image() {
  [ "${NP_REBUILD_IMAGES:-0}" = 1 ] && return 1
  "$1" image inspect "$2" >/dev/null 2>&1
}

build() {
  local runtime=$1 image=$2 maker=$3 env_path=$4
  if has_image "$runtime" "$image"; then
    echo "build-images: $runtime $image present"
    return 0
  fi
  local r="$work/$runtime-${image%%:*}"
  rm -rf "$r"
  "$maker" "$r"
  local change=(-c "ENV PATH=$env_path")
  [ "$runtime" = podman ] && change=(--quiet --change "ENV PATH=$env_path")
  tar -C "$r" -c . | "$runtime" import "${change[@]}" - "$image" >/dev/null
  echo "build-images: $runtime $image built"
}

for runtime in "${runtimes[@]}"; do
  build "$runtime" np-test:local make_busybox_rootfs /bin
  build "$runtime" np-node:local make_node_rootfs /usr/bin:/bin
done
