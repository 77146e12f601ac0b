#!/usr/bin/env bash
# Builds the local test image from the host's static busybox; nothing is pulled.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
DOCKER="${DOCKER:-docker}"
image="${SANDBOXKIT_TEST_IMAGE:-sandboxkit-test:latest}"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
cp "$here/images/busybox/Dockerfile" "$ctx/"
cp /bin/busybox "$ctx/busybox"
DOCKER_BUILDKIT=0 "$DOCKER" build -q -t "$image" "$ctx" >/dev/null 2>&1 || DOCKER_BUILDKIT=0 "$DOCKER" build -t "$image" "$ctx"
echo "[setup] test image $image ready"
