#!/usr/bin/env bash
# Makes this machine ready for the tests: a Docker engine and the base image (scripts/setup-docker.sh, all the demo
# needs), gVisor registered as a runtime, the script test image, Podman's Docker API
# on /run/sandboxkit-podman.sock (skip it with SANDBOXKIT_NO_PODMAN=1), and a
# throwaway PostgreSQL on 127.0.0.1:54329 for the JDBC store tests (skip it with SANDBOXKIT_NO_POSTGRES=1).
# Idempotent; needs root the first time (it installs packages and starts dockerd).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

log() { printf '[setup] %s\n' "$*"; }

"$here/setup-docker.sh"   # the engine and the base image: all the demo needs

need_pkgs=()
command -v runsc >/dev/null 2>&1 || need_pkgs+=(runsc)                   # gVisor, a second wall (tests run on it too)
command -v openssl >/dev/null 2>&1 || need_pkgs+=(openssl)               # certificates for the TLS engine tests (TlsEngine)
command -v node >/dev/null 2>&1 || need_pkgs+=(nodejs)                   # the TypeScript MCP SDK client (TypeScriptClientIT)
command -v npm >/dev/null 2>&1 || need_pkgs+=(npm)
if [ "${#need_pkgs[@]}" -gt 0 ]; then
  log "installing ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

# gVisor's runsc as a Docker runtime. --network=none: with dockerd's --bridge=none every runsc start fails with
# "cannot run with network enabled in root network namespace" otherwise. Merged into an existing daemon.json.
register_runsc() {
  python3 - <<'PY'
import json, os
p = "/etc/docker/daemon.json"
cfg = json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) > 0 else {}
want = {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none"]}
if cfg.get("runtimes", {}).get("runsc") != want:
    cfg.setdefault("runtimes", {})["runsc"] = want
    os.makedirs("/etc/docker", exist_ok=True)
    json.dump(cfg, open(p, "w"), indent=2)
PY
}
register_runsc

docker_cli=/usr/bin/docker
[ -x "$docker_cli" ] || docker_cli=docker
if ! "$docker_cli" info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' | grep -qw runsc; then
  log "reloading dockerd so that it sees the runsc runtime"
  kill -HUP "$(pidof dockerd)"
  for _ in $(seq 1 40); do
    "$docker_cli" info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}' | grep -qw runsc && break
    sleep 0.25
  done
fi
log "docker engine $("$docker_cli" version --format '{{.Server.Version}}') is up, runtimes: $("$docker_cli" info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}')"

DOCKER="$docker_cli" "$here/build-test-images.sh" script

# sandbox-mcp's TypeScriptClientIT runs the official TypeScript MCP SDK, pinned by its package-lock.json. One npm ci
# here fills npm's cache, from which the test installs it into sandbox-mcp/target/ts-client (npm ci --prefer-offline).
ts_src="$here/../sandbox-mcp/src/test/node"
ts_dir="${XDG_CACHE_HOME:-$HOME/.cache}/sandboxkit/ts-client"
ts_lock="$(sha256sum "$ts_src/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$ts_dir/.installed-from" 2>/dev/null)" != "$ts_lock" ]; then
  log "installing the TypeScript MCP SDK for the MCP tests (npm ci)"
  mkdir -p "$ts_dir"
  cp "$ts_src/package.json" "$ts_src/package-lock.json" "$ts_dir/"
  (cd "$ts_dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$ts_lock" > "$ts_dir/.installed-from"
fi

# Podman's Docker-compatible API on a socket of its own, for the Docker driver's Podman tests.
if [ "${SANDBOXKIT_NO_PODMAN:-0}" != 1 ]; then
  DOCKER="$docker_cli" "$here/setup-podman.sh"
fi

if [ "${SANDBOXKIT_NO_POSTGRES:-0}" != 1 ]; then
  url="$("$here/setup-postgres.sh" | tail -1)"
  log "postgresql ready at $url"
fi
