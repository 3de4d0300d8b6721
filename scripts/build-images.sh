#!/usr/bin/env bash
# Builds the end-to-end test images from Debian's packages, without a registry
# (there is none on these machines): a minimal root filesystem with the
# packages a test needs unpacked into it, then `docker import` / `podman import`
# (scripts/rootfs-lib.sh says how, and how the images are cached).
#
#   np-test:local  busybox-static; ENV PATH=/bin
#   np-node:local  nodejs (node at /usr/bin/node), git, busybox-static (a
#                  shell, and /usr/bin/env for #!/usr/bin/env node);
#                  ENV PATH=/usr/bin:/bin
#
# The image's node is Debian's, whatever node the host has (Debian's nodejs
# needs libnode108 and /usr/share/nodejs; both come with the closure).
# The recipe hash is of this file and rootfs-lib.sh.
#
# Usage: bash scripts/build-images.sh [docker|podman]...   (default: both that answer)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
log_name="build-images"
# shellcheck source-path=SCRIPTDIR source=rootfs-lib.sh
. "$here/rootfs-lib.sh"

rootfs_init "$@"
recipe_tag "$here/build-images.sh" "$here/rootfs-lib.sh"

build_np_test() { make_rootfs "$1" busybox-static; }
build_np_node() { make_rootfs "$1" nodejs git busybox-static; }

publish np-test /bin build_np_test
publish np-node /usr/bin:/bin build_np_node
