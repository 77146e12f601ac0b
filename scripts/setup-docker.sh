#!/usr/bin/env bash
# Makes this machine ready for the demo: a Docker engine (installed and started if missing) and the local base
# test image (FROM scratch + static busybox; nothing is pulled). Idempotent; needs root the first time.
# scripts/setup-env.sh runs this first, then adds what only the tests need (gVisor, Podman, PostgreSQL).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

log() { printf '[setup] %s\n' "$*"; }

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
dpkg -s busybox-static >/dev/null 2>&1 || need_pkgs+=(busybox-static)   # static: it runs in a FROM-scratch image
if [ "${#need_pkgs[@]}" -gt 0 ]; then
  log "installing ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

docker_cli=/usr/bin/docker
[ -x "$docker_cli" ] || docker_cli=docker
if ! "$docker_cli" version >/dev/null 2>&1; then
  log "starting dockerd (no bridge, no iptables: sandboxes use network 'none')"
  setsid dockerd --bridge=none --iptables=false >/var/log/dockerd.log 2>&1 < /dev/null &
  for _ in $(seq 1 240); do
    "$docker_cli" version >/dev/null 2>&1 && break
    sleep 0.25
  done
  "$docker_cli" version >/dev/null 2>&1 || { log "dockerd did not come up; see /var/log/dockerd.log"; tail -20 /var/log/dockerd.log; exit 1; }
fi
log "docker engine $("$docker_cli" version --format '{{.Server.Version}}') is up"

DOCKER="$docker_cli" "$here/build-test-images.sh" base
