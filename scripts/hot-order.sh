#!/usr/bin/env bash
# scripts/hot-order.sh: remakes launcher/hot_path.order, the list of functions
# np-exec runs on a spawn, which the static link hands to lld
# (--symbol-ordering-file) so that they lie together in the binary: a spawn
# then faults in a few pages of np-exec's text instead of one page here and
# there across ten megabytes (BENCHMARKS.md has the numbers).
#
#   scripts/hot-order.sh [BUILD_DIR]     (default: build-bench, a Release build)
#
# The list is what valgrind's callgrind records in np-exec's own process, up to
# its exec of the program: first a direct-tier spawn, then a warm and a cold
# bubblewrap spawn, each in a project of the benchmark's kind. Each string function's
# CPU variants follow it (valgrind's CPU is not the one it runs on), every
# ifunc resolver comes along (a static binary runs them all at start), and so
# does the vDSO's set-up, which glibc runs natively and valgrind, which gives
# no vDSO, never shows. Names missing from a later binary are only skipped, and
# tests/launcher/hot_order_test.cc fails once too many of them are gone: run
# this script again then. Needs valgrind, bubblewrap and nm.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-bench}
np=$build/bin/np-exec
out=$src/launcher/hot_path.order
for tool in valgrind bwrap nm git; do
  command -v "$tool" >/dev/null || { echo "hot-order.sh: needs $tool" >&2; exit 1; }
done
[ -x "$np" ] || { echo "hot-order.sh: no $np (build it first)" >&2; exit 1; }

work=$(mktemp -d /tmp/np-hot-order.XXXXXX)
trap 'rm -rf "$work"' EXIT

project() {  # project NAME TIER [RUNTIME [MORE_CONTAINER_KEYS]]
  local dir="$work/$1" container=""
  mkdir -p "$dir/.nubos-pilot" "$dir/src"
  git -C "$dir" init -q
  [ -n "${3:-}" ] && container=",\"container\":{\"runtime\":\"$3\",\"network\":\"none\"${4:-}}"
  printf '{"project":{"name":"hot"},"workflow":{"auto_commit":true},\n "isolation":{"tier":"%s"%s}}\n' \
    "$2" "$container" >"$dir/.nubos-pilot/config.json"
  (cd "$dir" && "$np" trust >/dev/null)
  echo "$dir"
}

trace() {  # trace NAME DIR PROGRAM: callgrind files of one spawn, every process up to its exec
  (cd "$2" && "$np" -- "$3" >/dev/null) # the warm-up spawn records the ratchet
  (cd "$2" && valgrind -q --tool=callgrind --demangle=no --dump-before='*execve*' \
    --callgrind-out-file="$work/$1.%p" "$np" -- "$3" >/dev/null)
}

# The function names of callgrind files, in the order they first appear.
names_of() {
  cat "$@" | sed -n 's/^c\{0,1\}fn=([0-9]*) //p' | awk '!seen[$0]++'
}

trace direct "$(project direct direct)" /bin/true
warm=$(project warm container bwrap ',"warm":{"idle_seconds":60}')
trace warm "$warm" true # the warm-up spawn starts the sandbox; the traced one is handed to it
(cd "$warm" && "$np" warm --stop >/dev/null)
trace bwrap "$(project bwrap container bwrap)" true

nm --defined-only "$np" | awk '$2 ~ /^[tTwWiI]$/ {print $3}' | sort -u >"$work/symbols"
{
  names_of "$work"/direct.*
  names_of "$work"/warm.*
  names_of "$work"/bwrap.*
} | awk -v symbols="$work/symbols" '
  BEGIN {
    while ((getline s < symbols) > 0) { have[s] = 1; list[++n] = s }
    # What every start runs first: the ifunc resolvers, the vDSO set-up (with
    # the strcmp its symbol lookup calls), and the exec at the end.
    for (i = 1; i <= n; i++) if (list[i] ~ /_ifunc$/) add(list[i])
    split("__getpagesize _dl_new_object _dl_add_to_namespace_list _dl_setup_hash " \
          "_dl_lookup_symbol_x do_lookup_x check_match _dl_name_match_p strcmp __execve", native, " ")
    for (i = 1; i in native; i++) { add(native[i]); variants(native[i]) }
  }
  function add(s) { if (s in have && !(s in done)) { done[s] = 1; print s } }
  # The CPU variants of a string function valgrind saw: __memmove_avx_unaligned
  # or memmove -> every __memmove_<cpu>.
  function variants(s,   base, i) {
    if (match(s, /^__[a-z0-9]+_(sse2|ssse3|sse4|avx|evex)/)) {
      base = substr(s, 1, index(substr(s, 3), "_") + 2)
    } else if (s ~ /^[a-z0-9]+$/) {
      base = "__" s "_"
    } else {
      return
    }
    for (i = 1; i <= n; i++) {
      if (index(list[i], base) == 1 && list[i] ~ /_(sse2|ssse3|sse4|avx|evex|erms)/) add(list[i])
    }
  }
  { add($0); variants($0) }
' >"$work/order"

{
  echo "# The functions a spawn runs, in the order lld places them in np-exec's text"
  echo "# (start-up, a direct spawn, a warm and a cold bubblewrap one). Made by scripts/hot-order.sh"
  echo "# from $(git -C "$src" rev-parse --short HEAD); do not edit by hand."
  cat "$work/order"
} >"$out"
echo "hot-order.sh: $(wc -l <"$work/order") functions in ${out#"$src"/}"
