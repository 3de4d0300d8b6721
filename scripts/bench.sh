#!/usr/bin/env bash
# scripts/bench.sh: build np-exec for speed and measure the promises of
# design.md section 6 (and issue 9's bubblewrap row). Results: BENCHMARKS.md.
#
#   scripts/bench.sh [--short] [--build-dir DIR] [--no-build] [--out DIR]
#
#   --short       a quick run for CI: few repetitions, prints the ratios, and
#                 never fails on timing; it fails only on errors (a build that
#                 breaks, a command that exits non-zero).
#   --build-dir   the CMake build directory (default: build-bench, Release).
#   --no-build    use what is already built there.
#   --out DIR     where the raw results go (micro.json, spawn.tsv); default
#                 <build-dir>/bench-results.
#
# What runs:
#   1. np-micro-bench (Google Benchmark): BuildContainerArgv, LoadConfig,
#      ValidateMount, FindRealProgram (20-directory PATH), ResolveTier.
#   2. np-spawn-harness, one interleaved run per scenario (commands alternate
#      round by round, so a drifting machine load cancels in the ratios):
#        direct:    env /bin/true | /bin/true | a static exec wrapper (the floor of
#                   any static launcher) | np-exec -- /bin/true | node shim
#        probe:     docker version --format ... | np-exec probe
#        container: docker run <np-exec's own argv> | np-exec -- true | node -e 0
#        runtimes:  np-exec -- true on bwrap | docker | podman, and bare bwrap
#        bwrap-pair: bare bwrap with np-exec's printed argv | np-exec -- true on
#                   bwrap, alone and in 200 rounds (issue 28's bar)
#        preload:   1000 posix_spawns of /bin/true | the same under LD_PRELOAD
#        peers (issue 19), each np-exec against a peer, same settings:
#          bwrap:   np-exec -- true | srt true; np-exec -- sh -c WRITE | srt ...
#          docker:  np-exec -- true | node + docker version + docker run
#   3. A summary: each target, the measured value, met or missed.
# srt is Anthropic's sandbox-runtime from the npm registry (pinned: SRT_VERSION),
# installed into <build-dir>/peers; it needs Debian's socat and ripgrep, which
# are installed with apt-get when missing and the script runs as root.
# Scenarios whose runtime is missing (no docker daemon, no podman, no bwrap)
# are skipped with a note, never counted as failures.
set -euo pipefail

short=0
build_dir=""
do_build=1
out_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1 ;;
    --build-dir) build_dir="$2"; shift ;;
    --no-build) do_build=0 ;;
    --out) out_dir="$2"; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

src="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="${build_dir:-$src/build-bench}"
case "$build_dir" in /*) ;; *) build_dir="$PWD/$build_dir" ;; esac

if [ "$short" = 1 ]; then
  R_DIRECT=40 R_PROBE=10 R_CONTAINER=3 R_RUNTIMES=3 R_BWRAP=10 WARM=2 MICRO_MIN=0.05
  R_PRELOAD=3 R_PEERS=3 PEER_WARM=1
else
  R_DIRECT=400 R_PROBE=60 R_CONTAINER=40 R_RUNTIMES=30 R_BWRAP=200 WARM=5 MICRO_MIN=0.5
  R_PRELOAD=20 R_PEERS=20 PEER_WARM=2
fi

if [ "$do_build" = 1 ]; then
  echo "== build ($build_dir, Release)"
  # Tests off: the benchmarks must not depend on every test compiling.
  cmake -S "$src" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DNP_BUILD_BENCH=ON \
    -DNP_BUILD_TESTS=OFF >/dev/null
  # np-cpuid-cost exists on x86 only (bench/CMakeLists.txt).
  cpuid_target=()
  case "$(uname -m)" in x86_64 | i?86) cpuid_target=(np-cpuid-cost) ;; esac
  cmake --build "$build_dir" -j "$(nproc)" --target np-exec np-micro-bench np-spawn-harness \
    np-exec-preload np-spawn-loop np-empty-preload np-exec-floor "${cpuid_target[@]}"
fi
bin="$build_dir/bin"
np="$bin/np-exec"
harness="$bin/np-spawn-harness"
exec_floor="$bin/np-exec-floor"
for f in "$np" "$harness" "$bin/np-micro-bench" "$bin/np-spawn-loop" "$exec_floor"; do
  [ -x "$f" ] || { echo "bench.sh: $f is not built" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/np-bench.XXXXXX")"
work="$(cd "$work" && pwd -P)"
view_dirs=()
cleanup() { rm -rf "$work" "${view_dirs[@]}"; }
trap cleanup EXIT
# Measure np-exec as it ships: installed (copied), not as the linker left it in
# the build tree. On this machine the very same bytes run about 10% slower
# straight from the linker's output file than from a copy (same page faults;
# the page cache holds the two files differently), which would be a property
# of the build directory, not of np-exec. The build-tree binary is still
# measured in the direct scenario, as a separate row.
built_np="$np"
mkdir -p "$work/bin"
install -m 0755 "$built_np" "$work/bin/np-exec"
np="$work/bin/np-exec"
# The interposer beside it, as installed (it finds np-exec in the same directory).
install -m 0644 "$bin/libnp-exec-preload.so" "$work/bin/libnp-exec-preload.so"
out_dir="${out_dir:-$build_dir/bench-results}"
mkdir -p "$out_dir"
tsv="$out_dir/spawn.tsv"
: >"$tsv"
status=0

echo "== machine"
echo "nproc $(nproc); kernel $(uname -r); cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load $(cut -d' ' -f1-3 /proc/loadavg)"
# What every process start pays here before its own code runs: one CPUID
# (glibc's start-up executes about 70, static or dynamic; a hypervisor traps
# each) and a static C program's exec to main. BENCHMARKS.md explains the
# ratios below with them.
if [ -x "$bin/np-cpuid-cost" ]; then
  echo "start-up costs (medians, us): $("$bin/np-cpuid-cost")"
fi

# A printed plan binds the caller's account view (passwd, group, gitconfig),
# which sandbox-exec makes when it runs the plan; run bare, the argv needs it
# made here: a copy of this host's files, held (flock, as sandbox-exec holds
# it) so that np-exec's own spawns in this run do not take it for a killed
# plan's leftover.
make_printed_view() {  # the plan's JSON on stdin
  local dir fd
  dir="$(jq -r '(.args | index("--account-view")) as $i | if $i then .args[$i + 1] else "" end')"
  [ -n "$dir" ] || return 0
  (umask 077 && mkdir -p "$dir")
  cp /etc/passwd "$dir/passwd"
  cp /etc/group "$dir/group"
  : > "$dir/gitconfig"
  exec {fd}<"$dir"
  flock -x "$fd"
  view_dirs+=("$dir")
}

# --- 1. micro-benchmarks ------------------------------------------------------
echo "== micro-benchmarks"
"$bin/np-micro-bench" --benchmark_min_time="$MICRO_MIN" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out_dir/micro.json" \
  --benchmark_out_format=json || status=1

# --- 2. spawn scenarios ---------------------------------------------------------
# A project of each kind. Every config is a typical one: the keys np-exec
# reads plus keys of the rest of nubos-pilot it must skip.
protected_rows() {  # the paths of docs/security.md's protected-paths table
  sed -n '/<!-- protected-paths-table/,/<!-- \/protected-paths-table -->/p' "$src/docs/security.md" |
    sed -n 's/^| `\([^`]*\)` |.*/\1/p'
}
[ -n "$(protected_rows)" ] || { echo "bench.sh: no protected-paths table in docs/security.md" >&2; exit 1; }
project() {  # project NAME TIER [RUNTIME]
  local dir="$work/$1"
  mkdir -p "$dir/.nubos-pilot" "$dir/src"
  # Every protected path present as a real node, so the argv `wrap` prints
  # runs as it is (np-exec creates placeholders for missing ones only around
  # its own spawns). The list is docs/security.md's table, which
  # tests/recipes/protected_paths_table_test.cc keeps equal to core's: a row
  # ending in / is a directory.
  local rel
  while IFS= read -r rel; do
    case "$rel" in
      */) mkdir -p "$dir/$rel" ;;
      *) mkdir -p "$(dirname "$dir/$rel")" && touch "$dir/$rel" ;;
    esac
  done < <(protected_rows)
  printf '.\n' >"$dir/.git/commondir"
  local container=""
  if [ -n "${3:-}" ]; then
    container=",\"container\":{\"runtime\":\"$3\",\"image\":\"np-test:local\",\"network\":\"none\"}"
  fi
  cat >"$dir/.nubos-pilot/config.json" <<EOF
{"project":{"name":"bench"},"workflow":{"worktree_isolation":false,"auto_commit":true},
 "isolation":{"tier":"$2"$container}}
EOF
  # The operator trusts the bench's own configs (bubblewrap widens the tier).
  (cd "$dir" && "$np" trust >/dev/null)
  echo "$dir"
}
run() {  # run ARGS...: one harness run; a non-zero exit is an error.
  if ! "$harness" --tsv "$tsv" "$@"; then
    echo "bench.sh: a scenario failed (see above)" >&2
    status=1
  fi
  echo
}

echo "== spawn overhead"
direct="$(project direct direct)"
mkdir -p "$work/shims" "$work/real"
ln -s "$np" "$work/shims/node"       # the shim: np-exec under the name node
ln -s /bin/true "$work/real/node"    # the real "node" it resolves to, later on PATH
run --title direct --runs "$R_DIRECT" --warmup "$WARM" \
  --cmd "env /bin/true" --cwd "$direct" -- env /bin/true \
  --cmd "/bin/true" --cwd "$direct" -- /bin/true \
  --cmd "a static exec wrapper -> /bin/true" --cwd "$direct" -- "$exec_floor" /bin/true \
  --cmd "np-exec -- /bin/true" --cwd "$direct" -- "$np" -- /bin/true \
  --cmd "same, build-tree binary" --cwd "$direct" -- "$built_np" -- /bin/true \
  --cmd "node shim -> /bin/true" --cwd "$direct" --env "PATH=$work/shims:$work/real:$PATH" -- node

have_docker=0
if command -v docker >/dev/null && docker version --format '{{.Server.Version}}' >/dev/null 2>&1 &&
   docker image inspect np-test:local >/dev/null 2>&1; then
  have_docker=1
else
  echo "(no docker daemon or no image np-test:local: probe and docker rows skipped)"
fi

if [ "$have_docker" = 1 ]; then
  run --title probe --runs "$R_PROBE" --warmup "$WARM" \
    --cmd "docker version" --cwd "$direct" -- docker version --format '{{.Server.Version}}' \
    --cmd "np-exec probe" --cwd "$direct" -- "$np" probe

  cdocker="$(project container-docker container docker)"
  # The same argv np-exec runs, from `wrap` (which plans without running),
  # with a unique name per spawn; np-exec's own run adds only an owner label.
  # A printed plan is np-exec sandbox-exec ... -- RUNTIME ARGS: the bare
  # runtime is what follows the first "--".
  dplan="$(cd "$cdocker" && "$np" wrap -- true)"
  make_printed_view <<<"$dplan"
  mapfile -t dargv < <(jq -r '(.args | index("--")) as $i | .args[$i + 1:][]' <<<"$dplan")
  for i in "${!dargv[@]}"; do
    if [ "${dargv[$i]}" = "--name" ]; then dargv[$((i + 1))]="np-bench-{n}"; fi
  done
  node_cmd=()
  if command -v node >/dev/null; then node_cmd=(--cmd "node -e 0" --cwd "$cdocker" -- node -e 0); fi
  run --title container --runs "$R_CONTAINER" --warmup "$WARM" \
    --cmd "docker run (same argv, direct)" --cwd "$cdocker" -- "${dargv[@]}" \
    --cmd "np-exec -- true (docker)" --cwd "$cdocker" -- "$np" -- true \
    "${node_cmd[@]}"
fi

# Runtimes side by side, each through np-exec (issue 9): bubblewrap first,
# as the baseline of the ratios.
rt=()
if command -v bwrap >/dev/null; then
  cbwrap="$(project container-bwrap container bwrap)"
  # A printed plan is np-exec sandbox-exec ... -- RUNTIME ARGS: the bare
  # runtime is what follows the first "--".
  bplan="$(cd "$cbwrap" && "$np" wrap -- true)"
  make_printed_view <<<"$bplan"
  mapfile -t bargv < <(jq -r '(.args | index("--")) as $i | .args[$i + 1:][]' <<<"$bplan")
  rt+=(--cmd "np-exec -- true (bwrap)" --cwd "$cbwrap" -- "$np" -- true)
  rt+=(--cmd "bwrap (same argv, direct)" --cwd "$cbwrap" -- "${bargv[@]}")
else
  echo "(bwrap not installed: its row is skipped)"
fi
if [ "$have_docker" = 1 ]; then
  rt+=(--cmd "np-exec -- true (docker)" --cwd "$cdocker" -- "$np" -- true)
fi
if command -v podman >/dev/null; then
  # Rootful podman 4.3 asks for rlimits above this machine's hard limit
  # (runtimes.md section 5); a private containers.conf fixes that per run.
  printf '[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]\n' \
    >"$work/containers.conf"
  export CONTAINERS_CONF="$work/containers.conf"
  if ! podman image exists np-test:local 2>/dev/null && [ "$have_docker" = 1 ]; then
    cid="$(docker create np-test:local true)"
    docker export "$cid" | podman import --change 'ENV PATH=/bin' - np-test:local >/dev/null
    docker rm "$cid" >/dev/null
  fi
  if podman image exists np-test:local 2>/dev/null; then
    cpodman="$(project container-podman container podman)"
    rt+=(--cmd "np-exec -- true (podman)" --cwd "$cpodman" -- "$np" -- true)
  else
    echo "(podman has no image np-test:local: its row is skipped)"
  fi
else
  echo "(podman not installed: its row is skipped)"
fi
if [ "${#rt[@]}" -gt 0 ] && [ "$(printf '%s\n' "${rt[@]}" | grep -c '^--cmd$')" -ge 2 ]; then
  run --title runtimes --runs "$R_RUNTIMES" --warmup "$WARM" "${rt[@]}"
fi
# np-exec on bubblewrap against bare bubblewrap with the same argv, the pair
# alone and in many rounds: the runtimes block above interleaves docker and
# podman runs, whose daemons' work afterwards lands on the next spawns, and its
# 30 rounds scatter the ratio by a few percent.
if [ -n "${cbwrap:-}" ]; then
  run --title bwrap-pair --runs "$R_BWRAP" --warmup "$WARM" \
    --cmd "bwrap (same argv, direct)" --cwd "$cbwrap" -- "${bargv[@]}" \
    --cmd "np-exec -- true (bwrap)" --cwd "$cbwrap" -- "$np" -- true
fi

# --- 2b. the interposer where it does not wrap (issue 19) ------------------------
# A dynamically linked host that posix_spawns /bin/true 1000 times, with and
# without LD_PRELOAD: every child loads the library too, and none is wrapped.
# An empty library preloaded the same way is the floor of any LD_PRELOAD.
run --title preload --runs "$R_PRELOAD" --warmup "$PEER_WARM" \
  --cmd "1000 posix_spawns" --cwd "$direct" -- "$bin/np-spawn-loop" 1000 /bin/true \
  --cmd "same, LD_PRELOAD (nothing wrapped)" --cwd "$direct" \
    --env "LD_PRELOAD=$work/bin/libnp-exec-preload.so" -- "$bin/np-spawn-loop" 1000 /bin/true \
  --cmd "same, an empty library preloaded" --cwd "$direct" \
    --env "LD_PRELOAD=$bin/libnp-empty-preload.so" -- "$bin/np-spawn-loop" 1000 /bin/true

# --- 2c. peers, side by side (issue 19) -------------------------------------------
# Each peer runs in the same interleaved run as np-exec, with the same settings.
SRT_VERSION="${SRT_VERSION:-0.0.83}"
peers_dir="$build_dir/peers"
srt=""
install_srt() {  # Leaves srt's path in $srt, or "" with a note.
  local need=()
  command -v socat >/dev/null || need+=(socat)
  command -v rg >/dev/null || need+=(ripgrep)
  if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" \
        >"$work/apt.log" 2>&1 || { echo "(apt-get install ${need[*]} failed: srt rows skipped)"; return; }
    else
      echo "(srt needs ${need[*]}: srt rows skipped)"; return
    fi
  fi
  command -v npm >/dev/null || { echo "(no npm: srt rows skipped)"; return; }
  local pkg="$peers_dir/node_modules/@anthropic-ai/sandbox-runtime/package.json"
  if [ ! -f "$pkg" ] || [ "$(jq -r .version "$pkg")" != "$SRT_VERSION" ]; then
    mkdir -p "$peers_dir"
    if ! npm install --prefix "$peers_dir" --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/sandbox-runtime@$SRT_VERSION" >"$work/npm.log" 2>&1; then
      echo "(npm install of srt $SRT_VERSION failed: srt rows skipped; see below)"
      tail -5 "$work/npm.log"
      return
    fi
  fi
  srt="$peers_dir/node_modules/.bin/srt"
  [ -x "$srt" ] || { echo "(srt not found after install: srt rows skipped)"; srt=""; }
}

echo "== peers"
if command -v bwrap >/dev/null; then
  install_srt
  if [ -n "$srt" ]; then
    # srt's settings equivalent to np-exec's bubblewrap tier with network
    # "none": no host is allowed (no network), reads are open, and writes
    # go only to the project.
    jq -n --arg project "$cbwrap" '{network: {allowedDomains: [], deniedDomains: []},
      filesystem: {denyRead: [], allowWrite: [$project], denyWrite: []}}' >"$work/srt-settings.json"
    srt_cmd=("$srt" --settings "$work/srt-settings.json")
    write=(sh -c 'echo np >>bench-write.txt')
    run --title peers-bwrap-true --runs "$R_PEERS" --warmup "$PEER_WARM" \
      --cmd "np-exec -- /bin/true (bwrap)" --cwd "$cbwrap" -- "$np" -- /bin/true \
      --cmd "srt /bin/true" --cwd "$cbwrap" -- "${srt_cmd[@]}" /bin/true
    run --title peers-bwrap-write --runs "$R_PEERS" --warmup "$PEER_WARM" \
      --cmd "np-exec -- write into the project (bwrap)" --cwd "$cbwrap" -- "$np" -- "${write[@]}" \
      --cmd "srt write into the project" --cwd "$cbwrap" -- "${srt_cmd[@]}" "${write[@]}"
  fi
else
  echo "(bwrap not installed: srt rows skipped)"
fi
if [ "$have_docker" = 1 ] && command -v node >/dev/null; then
  run --title peers-docker --runs "$R_PEERS" --warmup "$PEER_WARM" \
    --cmd "np-exec -- true (docker)" --cwd "$cdocker" -- "$np" -- true \
    --cmd "reference: node + docker version + docker run" --cwd "$cdocker" -- \
      node "$src/bench/reference_path.js" "${dargv[@]}"
else
  echo "(no docker daemon or no node: the reference row is skipped)"
fi

# --- 2d. warm sandboxes (issue 28) ---------------------------------------------
# A warm spawn on each runtime beside the direct tier (the baseline), the cold
# spawn of the same project, `docker exec` into a running container, and srt,
# in one interleaved run; then the memory an idle warm sandbox holds.
warm_project() {  # warm_project NAME RUNTIME: a container project with warm on
  local dir
  dir="$(project "$1" container "$2")"
  jq '.isolation.container.warm = {"idle_seconds": 900}' "$dir/.nubos-pilot/config.json" \
    >"$dir/.nubos-pilot/config.json.new"
  mv "$dir/.nubos-pilot/config.json.new" "$dir/.nubos-pilot/config.json"
  (cd "$dir" && "$np" trust >/dev/null)
  echo "$dir"
}
echo "== warm sandboxes"
warm=(--cmd "np-exec -- /bin/true (direct)" --cwd "$direct" -- "$np" -- /bin/true)
if command -v bwrap >/dev/null; then
  wbwrap="$(warm_project warm-bwrap bwrap)"
  warm+=(--cmd "warm: np-exec -- true (bwrap)" --cwd "$wbwrap" -- "$np" -- true)
  warm+=(--cmd "cold: np-exec -- true (bwrap)" --cwd "$cbwrap" -- "$np" -- true)
fi
if [ "$have_docker" = 1 ]; then
  wdocker="$(warm_project warm-docker docker)"
  warm+=(--cmd "warm: np-exec -- true (docker)" --cwd "$wdocker" -- "$np" -- true)
  warm+=(--cmd "cold: np-exec -- true (docker)" --cwd "$cdocker" -- "$np" -- true)
  docker rm -f np-bench-exec >/dev/null 2>&1 || true
  docker run -d --rm --name np-bench-exec --network none np-test:local sleep 3600 >/dev/null
  warm+=(--cmd "docker exec into a running container" --cwd "$direct" -- docker exec np-bench-exec true)
fi
podman_service=""
if [ -n "${cpodman:-}" ]; then
  wpodman="$(warm_project warm-podman podman)"
  # Without an API service of the caller's np-exec asks one of its own
  # (launcher/runtime/podman_service.h); the client-only row is what a warm
  # spawn costs when it may not (NP_EXEC_PODMAN_SERVICE=0).
  warm+=(--cmd "warm: np-exec -- true (podman)" --cwd "$wpodman" -- "$np" -- true)
  warm+=(--cmd "warm: np-exec -- true (podman, client only)" --cwd "$wpodman" \
    --env NP_EXEC_PODMAN_SERVICE=0 -- "$np" -- true)
  warm+=(--cmd "cold: np-exec -- true (podman)" --cwd "$cpodman" -- "$np" -- true)
  # The same with podman's API service (what `systemctl enable --now
  # podman.socket` gives): np-exec then asks the engine on its socket, as on
  # docker, instead of through podman's client. A socket of the run's own,
  # named by CONTAINER_HOST for these two rows only.
  mkdir -p "$work/podman-api"
  setsid podman system service --time=0 "unix://$work/podman-api/podman.sock" \
    >"$work/podman-api/log" 2>&1 </dev/null &
  podman_service=$!
  for _ in $(seq 50); do [ -S "$work/podman-api/podman.sock" ] && break; sleep 0.1; done
  api=(--env "CONTAINER_HOST=unix://$work/podman-api/podman.sock")
  wpodman_api="$(warm_project warm-podman-api podman)"
  warm+=(--cmd "warm: np-exec -- true (podman, API service)" --cwd "$wpodman_api" "${api[@]}" -- "$np" -- true)
  warm+=(--cmd "cold: np-exec -- true (podman, API service)" --cwd "$cpodman" "${api[@]}" -- "$np" -- true)
fi
if [ -n "$srt" ]; then
  warm+=(--cmd "srt /bin/true" --cwd "$cbwrap" -- "${srt_cmd[@]}" /bin/true)
fi
if [ "$have_docker" = 1 ] && command -v node >/dev/null; then
  warm+=(--cmd "reference: node + docker version + docker run" --cwd "$cdocker" -- \
    node "$src/bench/reference_path.js" "${dargv[@]}")
fi
run --title warm --runs "$R_RUNTIMES" --warmup "$WARM" "${warm[@]}"
# The memory an idle warm sandbox holds: its holder (np-exec's process that
# keeps it, forked off the spawn that started it, its cwd the project) and
# everything below it (the runtime's client or bubblewrap, the watchdog,
# bubblewrap's keeper), and on an engine the keeper and the engine's process
# beside it (containerd's shim, conmon). RSS counts a page in every process
# that maps it (np-exec's own binary twice: holder and keeper); PSS shares it
# out among them; USS is what no other process maps.
descendants() {  # descendants PID: PID and every process below it
  echo "$1"
  local child
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do descendants "$child"; done
}
sandbox_memory() {  # sandbox_memory RUNTIME PROJECT: "RSS PSS USS PROCESSES" in KB
  local pids=() pid holder name keeper
  for pid in $(pgrep -x np-exec); do
    [ "$(ps -o ppid= -p "$pid" | tr -d ' ')" = 1 ] || continue
    [ "$(readlink "/proc/$pid/cwd")" = "$2" ] || continue
    holder="$pid"
  done
  [ -n "${holder:-}" ] || return 0
  mapfile -t pids < <(descendants "$holder")
  if [ "$1" != bwrap ]; then
    name="$(tr '\0' '\n' <"/proc/$(pgrep -P "$holder" -x "$1" | head -1)/cmdline" 2>/dev/null |
      awk 'p {print; exit} $0 == "--name" {p = 1}')"
    keeper="$("$1" inspect -f '{{.State.Pid}}' "$name" 2>/dev/null)"
    [ -n "$keeper" ] && [ "$keeper" != 0 ] && pids+=("$keeper" "$(ps -o ppid= -p "$keeper" | tr -d ' ')")
  fi
  for pid in "${pids[@]}"; do cat "/proc/$pid/smaps_rollup" 2>/dev/null; done |
    awk -v n="${#pids[@]}" '/^Rss:/ {r += $2} /^Pss:/ {p += $2}
      /^Private_(Clean|Dirty):/ {u += $2} END {print r, p, u, n}'
}
warm_kb=""
for pair in "bwrap ${wbwrap:-}" "docker ${wdocker:-}" "podman ${wpodman:-}"; do
  read -r rt dir <<<"$pair"
  [ -n "${dir:-}" ] || continue
  read -r rss pss uss procs < <(sandbox_memory "$rt" "$dir") || true
  [ -n "${rss:-}" ] || { echo "idle warm $rt sandbox: not found"; continue; }
  echo "idle warm $rt sandbox ($procs processes): RSS $rss KB, PSS $pss KB, USS $uss KB"
  [ "$rt" = bwrap ] && warm_kb="$pss"
  unset rss pss uss procs dir
done
(cd "$direct" && "$np" warm --stop --all >/dev/null) || true
[ -n "$podman_service" ] && { kill "$podman_service" 2>/dev/null; wait "$podman_service" 2>/dev/null; } || true
# np-exec's own podman service of this run's warm spawns (it would end after
# the idle time).
pkill -f "${XDG_STATE_HOME:-$HOME/.local/state}/np-exec/engines/podman-" 2>/dev/null || true
[ "$have_docker" = 1 ] && docker rm -f np-bench-exec >/dev/null 2>&1 || true

# --- 3. summary -----------------------------------------------------------------
echo "== targets (design.md section 6, issue 9)"
med() { awk -F'\t' -v t="$1" -v l="$2" '$1==t && $2==l {print $5}' "$tsv" | tail -1; }
rat() { awk -F'\t' -v t="$1" -v l="$2" '$1==t && $2==l {print $7}' "$tsv" | tail -1; }
verdict() {  # verdict NAME MEASURED OP LIMIT UNIT
  if [ -z "$2" ]; then printf '%-46s %12s   (not measured)\n' "$1" "-"; return; fi
  local ok
  ok="$(awk -v m="$2" -v l="$4" -v op="$3" 'BEGIN{print (op=="<=" ? m<=l : m>=l) ? "met" : "MISSED"}')"
  printf '%-46s %12s   target %s %s %s   %s\n' "$1" "$2" "$3" "$4" "$5" "$ok"
}
argv_ns="$(jq -r '.benchmarks[] | select(.name=="BM_BuildContainerArgv_median") | .cpu_time' \
  "$out_dir/micro.json" 2>/dev/null | awk '{printf "%.0f", $1}')"
verdict "argv build (cpu time, median of 3)" "$argv_ns" "<=" 1000 ns
verdict "np-exec -- /bin/true / env /bin/true" "$(rat direct 'np-exec -- /bin/true')" "<=" 0.95 x
verdict "node shim / env /bin/true (same bar, informative)" "$(rat direct 'node shim -> /bin/true')" "<=" 0.95 x
verdict "a static exec wrapper / env /bin/true (the floor, informative)" \
  "$(rat direct 'a static exec wrapper -> /bin/true')" "<=" 0.95 x
probe_x="$(awk -v r="$(rat probe 'np-exec probe')" 'BEGIN{ if (r > 0) printf "%.1f", 1 / r }')"
verdict "docker version / np-exec probe (speed-up)" "$probe_x" ">=" 10 x
verdict "np-exec -- true / docker run (docker)" "$(rat container 'np-exec -- true (docker)')" "<=" 1.02 x
verdict "np-exec -- true on bwrap, median per spawn" "$(med runtimes 'np-exec -- true (bwrap)')" "<=" 10 ms
verdict "np-exec on bwrap / bare bwrap, same argv" "$(rat bwrap-pair 'np-exec -- true (bwrap)')" "<=" 1.15 x
verdict "LD_PRELOAD, 1000 posix_spawns it does not wrap" "$(rat preload 'same, LD_PRELOAD (nothing wrapped)')" "<=" 1.02 x
verdict "an empty LD_PRELOAD library (the floor, informative)" "$(rat preload 'same, an empty library preloaded')" "<=" 1.02 x
verdict "srt / np-exec on bwrap, /bin/true" "$(rat peers-bwrap-true 'srt /bin/true')" ">=" 50 x
verdict "srt / np-exec on bwrap, a write" "$(rat peers-bwrap-write 'srt write into the project')" ">=" 50 x
verdict "reference node path / np-exec on docker" \
  "$(rat peers-docker 'reference: node + docker version + docker run')" ">=" 1 x
verdict "warm spawn on bwrap / direct spawn" "$(rat warm 'warm: np-exec -- true (bwrap)')" "<=" 2 x
for r in docker podman "podman, API service"; do
  w="$(med warm "warm: np-exec -- true ($r)")"
  c="$(med warm "cold: np-exec -- true ($r)")"
  verdict "warm / cold spawn on $r"     "$(awk -v w="$w" -v c="$c" 'BEGIN{ if (w > 0 && c > 0) printf "%.3f", w / c }')" "<=" 0.05 x
done
verdict "warm (client only) / cold on podman (informative)" "$(awk -v w="$(med warm 'warm: np-exec -- true (podman, client only)')" -v c="$(med warm 'cold: np-exec -- true (podman)')" 'BEGIN{ if (w > 0 && c > 0) printf "%.3f", w / c }')" "<=" 0.05 x
verdict "srt / warm spawn on bwrap" "$(awk -v s="$(med warm 'srt /bin/true')"   -v w="$(med warm 'warm: np-exec -- true (bwrap)')" 'BEGIN{ if (s > 0 && w > 0) printf "%.0f", s / w }')" ">=" 100 x
verdict "an idle warm bubblewrap sandbox (PSS)" "$warm_kb" "<=" 5120 KB
echo "== peers: ratio min / median / max over the rounds, peak RSS of the tree (KB)"
awk -F'\t' '$1 ~ /^(peers-|preload)/ {printf "%-20s %-46s %7.3f %7.3f %7.3f %9d\n", $1, $2, $8, $7, $9, $11}' "$tsv"
if [ "$short" = 1 ]; then
  echo "(--short: few repetitions; the ratios are indicative and never fail the run)"
fi
echo "raw results: $out_dir"
exit "$status"
