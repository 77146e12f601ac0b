#!/usr/bin/env bash
# Builds the local test images from the host's files; nothing is pulled. sandboxkit-test: static busybox only.
# sandboxkit-test-script: the same plus the host's util-linux script(1) with its shared libraries (background
# processes on a terminal need it).
#   build-test-images.sh           both
#   build-test-images.sh base      only sandboxkit-test (the demo's)
#   build-test-images.sh script    only sandboxkit-test-script
set -euo pipefail
which="${1:-all}"
here="$(cd "$(dirname "$0")" && pwd)"
DOCKER="${DOCKER:-docker}"
image="${SANDBOXKIT_TEST_IMAGE:-sandboxkit-test:latest}"
script_image="${SANDBOXKIT_TEST_SCRIPT_IMAGE:-sandboxkit-test-script:latest}"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
build() { # tag, context
  DOCKER_BUILDKIT=0 "$DOCKER" build -q -t "$1" "$2" >/dev/null 2>&1 || DOCKER_BUILDKIT=0 "$DOCKER" build -t "$1" "$2"
}
if [ "$which" != script ]; then
  cp "$here/images/busybox/Dockerfile" "$ctx/"
  cp /bin/busybox "$ctx/busybox"
  build "$image" "$ctx"
  echo "[setup] test image $image ready"
fi
[ "$which" != base ] || exit 0

sctx="$ctx/script"
mkdir -p "$sctx/root/bin" "$sctx/root/usr/bin"
cp "$here/images/script/Dockerfile" "$sctx/"
cp /bin/busybox "$sctx/root/bin/busybox"
cp /usr/bin/script "$sctx/root/usr/bin/script"
# Every library ldd resolves, at the path it resolves to (the loader included).
for lib in $(ldd /usr/bin/script | grep -o '/[^ ]*'); do
  mkdir -p "$sctx/root$(dirname "$lib")"
  cp -L "$lib" "$sctx/root$lib"
done
build "$script_image" "$sctx"
echo "[setup] test image $script_image ready"
