#!/usr/bin/env bash
# Checks the Debian package against Debian's own tools:
#   1. builds the .deb from BUILD_DIR (cmake --build --target np-exec-dist,
#      then cpack -G DEB into a scratch directory);
#   2. runs lintian on it and fails on any error (warnings and infos are
#      printed; the overrides are packaging/lintian-overrides, each with why);
#   3. parses packaging/copyright as machine-readable (DEP-5) with
#      python3-debian's strict parser, checks that every license a Files
#      paragraph names has its text, and that the .deb ships this very file.
#
#   scripts/check-package.sh [BUILD_DIR]     default: <repo>/build
#
# Needs lintian and python3-debian (scripts/test.sh installs both when apt can
# and runs this as its "package: lintian and DEP-5" step). Takes ~15 s.
# Environment: NP_JOBS (parallel jobs, default 2).
set -euo pipefail

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$src/build}"
jobs="${NP_JOBS:-2}"

for tool in lintian cpack dpkg-deb /usr/bin/python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "check-package: $tool is not installed" >&2; exit 1; }
done
/usr/bin/python3 -c 'import debian.copyright' 2>/dev/null ||
  { echo "check-package: python3-debian is not installed" >&2; exit 1; }

scratch=$(mktemp -d /tmp/np-check-package.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

echo "building the .deb from $build"
cmake --build "$build" -j "$jobs" --target np-exec-dist >"$scratch/build.log" 2>&1 ||
  { tail -20 "$scratch/build.log" >&2; exit 1; }
(cd "$build" && cpack -G DEB -B "$scratch/out") >"$scratch/cpack.log" 2>&1 ||
  { tail -20 "$scratch/cpack.log" >&2; exit 1; }
debs=("$scratch"/out/*.deb)
[ -f "${debs[0]}" ] || { echo "check-package: cpack made no .deb" >&2; exit 1; }
deb=${debs[0]}
echo "built $(basename "$deb")"

# 2. lintian: exit status 2 on an error (--fail-on error), 0 otherwise.
echo "lintian:"
rc=0
lintian --fail-on error --display-info "$deb" >"$scratch/lintian.log" 2>&1 || rc=$?
grep -v '^running with root privileges' "$scratch/lintian.log" | sed 's/^/  /' || true
if [ "$rc" -ne 0 ]; then
  echo "check-package: lintian reports errors (exit $rc)" >&2
  exit 1
fi
echo "lintian: no errors"

# 3. DEP-5.
/usr/bin/python3 - "$src/packaging/copyright" <<'EOF'
import sys
from debian import copyright

path = sys.argv[1]
with open(path, encoding="utf-8") as f:
    parsed = copyright.Copyright(f, strict=True)  # raises on a malformed file
files = list(parsed.all_files_paragraphs())
if not files:
    sys.exit(f"{path}: no Files paragraph")
texts = {p.license.synopsis for p in parsed.all_license_paragraphs() if p.license.text}
for p in files:
    if not p.copyright.strip():
        sys.exit(f"{path}: Files {' '.join(p.files)} has an empty Copyright")
    if not p.license.text and p.license.synopsis not in texts:
        sys.exit(f"{path}: license {p.license.synopsis} has no License paragraph with its text")
names = sorted({p.license.synopsis for p in files})
print(f"copyright: machine-readable (DEP-5), {len(files)} Files paragraph(s), license {', '.join(names)}")
EOF
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/doc/np-exec/copyright >"$scratch/copyright"
cmp -s "$scratch/copyright" "$src/packaging/copyright" ||
  { echo "check-package: the .deb's copyright is not packaging/copyright" >&2; exit 1; }
echo "package: OK"
