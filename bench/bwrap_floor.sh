#!/usr/bin/env bash
# bench/bwrap_floor.sh: issue 19 items 1 and 2, the bubblewrap tier at its
# floor, in interleaved runs of np-spawn-harness (per-round ratios, medians).
#
#   bench/bwrap_floor.sh --np NP_EXEC --baseline OLD_NP_EXEC --harness HARNESS
#                        [--runs N] [--out DIR]
#
# NP_EXEC is the np-exec under test, OLD_NP_EXEC the one it is compared with
# (today's main, built by the caller); both are installed (copied) under
# names np-exec, as scripts/bench.sh does. Run 1 (one interleaved run):
#   old np-exec -- true | np-exec -- true | bare bwrap with np-exec's argv |
#   bare bwrap with the old argv | np-exec --version | np-exec wrap -- true
# Run 2 (one interleaved run): np-exec -- true with no extra mounts, with 64
#   read-only mounts that are every entry of one directory (merged into one
#   bind), and with 64 mounts of unrelated directories (bound one by one).
# Prints each goal's ratio with min, median and max of the per-round ratios.
set -euo pipefail

np="" old="" harness="" runs=30 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --np) np="$2"; shift ;;
    --baseline) old="$2"; shift ;;
    --harness) harness="$2"; shift ;;
    --runs) runs="$2"; shift ;;
    --out) out="$2"; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "bwrap_floor.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
for f in "$np" "$old" "$harness"; do
  [ -x "$f" ] || { echo "bwrap_floor.sh: $f is not an executable (see --help)" >&2; exit 2; }
done
command -v bwrap >/dev/null || { echo "bwrap_floor.sh: bwrap is not installed" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/np-bwrap-floor.XXXXXX")"
work="$(cd "$work" && pwd -P)"
trap 'rm -rf "$work"' EXIT
out="${out:-$work}"
mkdir -p "$out" "$work/new" "$work/old" "$work/state"
install -m 0755 "$np" "$work/new/np-exec"
install -m 0755 "$old" "$work/old/np-exec"
np="$work/new/np-exec" old="$work/old/np-exec"
export XDG_STATE_HOME="$work/state"
rounds="$out/rounds.tsv"
: >"$rounds"

project() {  # project NAME MOUNTS_JSON
  local dir="$work/$1"
  mkdir -p "$dir/.nubos-pilot" "$dir/src"
  mkdir -p "$dir"/.git/{hooks,info,modules,worktrees} \
    "$dir"/.{claude,codex,cursor,devcontainer,gemini,idea,vscode,zed} \
    "$dir"/.nubos-pilot/{bin,audit}
  touch "$dir"/.git/{config,config.worktree} "$dir"/.{devcontainer.json,envrc,mcp.json,gitmodules}
  printf '.\n' >"$dir/.git/commondir"
  cat >"$dir/.nubos-pilot/config.json" <<EOF
{"isolation":{"tier":"container","container":{"runtime":"bwrap","network":"none","mounts":$2}}}
EOF
  (cd "$dir" && "$np" trust >/dev/null && "$old" trust >/dev/null)
  echo "$dir"
}
# bare_argv NP PROJECT: the bwrap argv a printed plan runs (after
# `sandbox-exec ... --`). What the printed plan's executor would hold for the
# run (the account view's passwd, group and gitconfig) is gone once `wrap`
# returns: such a file is made here, so bare bwrap finds what np-exec's run
# finds. The project has every protected path, so no placeholder is needed.
bare_argv() {
  local argv
  mapfile -t argv < <(cd "$2" && "$1" wrap -- true |
    jq -r '(.args | index("--")) as $i | .args[$i + 1:][]')
  local i
  for ((i = 0; i + 1 < ${#argv[@]}; i++)); do
    case "${argv[$i]}" in
      --bind | --ro-bind)
        local src="${argv[$((i + 1))]}"
        if [ ! -e "$src" ]; then
          case "$src" in
            "$XDG_STATE_HOME"/*) (umask 077 && mkdir -p "$(dirname "$src")" && : >"$src") ;;
            *) echo "bwrap_floor.sh: $src, bound by the plan, is missing" >&2; exit 1 ;;
          esac
        fi
        ;;
    esac
  done
  printf '%s\n' "${argv[@]}"
}

p0="$(project p0 '[]')"
mapfile -t new_argv < <(bare_argv "$np" "$p0")
mapfile -t old_argv < <(bare_argv "$old" "$p0")
"$harness" --runs "$runs" --warmup 3 --title floor --rounds "$rounds" \
  --cmd "old np-exec -- true" --cwd "$p0" -- "$old" -- true \
  --cmd "np-exec -- true" --cwd "$p0" -- "$np" -- true \
  --cmd "bare bwrap, np-exec's argv" --cwd "$p0" -- "${new_argv[@]}" \
  --cmd "bare bwrap, old argv" --cwd "$p0" -- "${old_argv[@]}" \
  --cmd "np-exec --version" --cwd "$p0" -- "$np" --version \
  --cmd "np-exec wrap -- true" --cwd "$p0" -- "$np" wrap -- true

mkdir -p "$work/pkgs"
chmod 0755 "$work/pkgs"
merged="" unrelated=""
for i in $(seq 0 63); do
  mkdir -p "$work/pkgs/d$i" "$work/other/o$i/d"
  merged+="${merged:+,}{\"source\":\"$work/pkgs/d$i\",\"target\":\"/opt/pkgs/d$i\"}"
  unrelated+="${unrelated:+,}{\"source\":\"$work/other/o$i/d\",\"target\":\"/opt/m$i\"}"
done
p64="$(project p64 "[$merged]")"
p64u="$(project p64u "[$unrelated]")"
"$harness" --runs "$runs" --warmup 3 --title mounts --rounds "$rounds" \
  --cmd "np-exec -- true, no mounts" --cwd "$p0" -- "$np" -- true \
  --cmd "np-exec -- true, 64 mounts of one directory" --cwd "$p64" -- "$np" -- true \
  --cmd "np-exec -- true, 64 unrelated mounts" --cwd "$p64u" -- "$np" -- true \
  --cmd "old np-exec -- true, 64 mounts of one directory" --cwd "$p64" -- "$old" -- true

# ratio TITLE A B: per-round A/B, as "min median max".
ratio() {
  awk -F'\t' -v t="$1" -v a="$2" -v b="$3" '
    $1==t && $3==a {x[$2]=$4} $1==t && $3==b {y[$2]=$4}
    END {for (r in x) if ((r in y) && x[r]>0 && y[r]>0) printf "%.6f\n", x[r]/y[r]}' "$rounds" |
    sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "- - -"; exit}
      m=(NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2); printf "%.3f %.3f %.3f\n", v[1], m, v[NR]}'
}
goal() {  # goal NAME TITLE A B LIMIT
  read -r lo med hi < <(ratio "$2" "$3" "$4")
  local verdict
  verdict="$(awk -v m="$med" -v l="$5" 'BEGIN{print (m!="-" && m<=l) ? "met" : "MISSED"}')"
  printf '%-58s %7s  (min %s, max %s)  target <= %s  %s\n' "$1" "$med" "$lo" "$hi" "$5" "$verdict"
}
echo "== issue 19 goals (per-round ratios: median, min, max; $runs rounds; load $(cut -d' ' -f1-3 /proc/loadavg))"
goal "np-exec -- true / old np-exec -- true" floor "np-exec -- true" "old np-exec -- true" 0.80
goal "np-exec -- true / bare bwrap (same sandbox)" floor "np-exec -- true" "bare bwrap, np-exec's argv" 1.05
goal "np-exec -- true / bare bwrap (old argv, same sandbox)" floor "np-exec -- true" "bare bwrap, old argv" 1.05
goal "np-exec wrap -- true / np-exec --version" floor "np-exec wrap -- true" "np-exec --version" 2
goal "64 mounts of one directory / no mounts" mounts "np-exec -- true, 64 mounts of one directory" "np-exec -- true, no mounts" 1.5
goal "64 unrelated mounts / no mounts" mounts "np-exec -- true, 64 unrelated mounts" "np-exec -- true, no mounts" 1.5
goal "old np-exec, 64 mounts of one directory / new, no mounts" mounts "old np-exec -- true, 64 mounts of one directory" "np-exec -- true, no mounts" 99
echo "raw rounds: $rounds"
