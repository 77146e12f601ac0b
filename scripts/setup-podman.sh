#!/usr/bin/env bash
# Podman for the tests that run the Docker driver against Podman's Docker-compatible API: installs podman and
# catatonit (its --init), writes the containers.conf rlimit fix, serves the API on a socket of its own and loads the
# test image from Docker's store, so Podman never pulls. Idempotent; needs root. Called by setup-env.sh.
set -euo pipefail

log() { printf '[setup] %s\n' "$*"; }
sock="${SANDBOXKIT_PODMAN_SOCKET:-/run/sandboxkit-podman.sock}"
image="${SANDBOXKIT_TEST_IMAGE:-sandboxkit-test:latest}"
DOCKER="${DOCKER:-docker}"

need=()
command -v podman >/dev/null 2>&1 || need+=(podman)
dpkg -s catatonit >/dev/null 2>&1 || need+=(catatonit)   # Podman's init binary (HostConfig.Init)
if [ "${#need[@]}" -gt 0 ]; then
  log "installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
fi

# This VM forbids raising rlimits past the parent's hard limits, and Podman raises nofile/nproc by default: every
# start fails with "error setting rlimit type 7: operation not permitted" unless containers.conf sets lower ones.
# Merged: other sections and keys of an existing file are kept.
python3 - <<'PY'
import os, re
p = "/etc/containers/containers.conf"
want = 'default_ulimits = ["nofile=10000:10000", "nproc=4096:4096"]'
text = open(p).read() if os.path.exists(p) else ""
lines = text.splitlines()
start = next((i for i, l in enumerate(lines) if l.strip() == "[containers]"), None)
if start is None:
    lines += (["" ] if lines else []) + ["[containers]", want]
else:
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"\s*\[", lines[i])), len(lines))
    keys = [i for i in range(start + 1, end) if re.match(r"\s*default_ulimits\s*=", lines[i])]
    if keys:
        lines[keys[0]] = want  # a one-line array; ours replaces it
    else:
        lines.insert(start + 1, want)
new = "\n".join(lines) + "\n"
if new != text:
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "w").write(new)
PY

ping() { curl -sf --max-time 2 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; }
# A service whose working directory was deleted (started from a clone since removed) still answers pings, but
# conmon inherits that directory and every container start fails ("write child: broken pipe"): restart it.
for pid in $(pgrep -f "podman system service --time=0 unix://$sock" || true); do
  if readlink "/proc/$pid/cwd" | grep -q ' (deleted)$'; then
    log "restarting podman system service (its working directory is gone)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
done
if ! ping; then
  rm -f "$sock"
  log "starting podman system service on unix://$sock"
  (cd / && setsid podman system service --time=0 "unix://$sock" >/var/log/sandboxkit-podman.log 2>&1 < /dev/null &)
  for _ in $(seq 1 100); do
    ping && break
    sleep 0.1
  done
  ping || { log "podman service did not answer; see /var/log/sandboxkit-podman.log"; tail -20 /var/log/sandboxkit-podman.log; exit 1; }
fi

# The test image, copied from Docker's store (same image id), so that nothing is pulled or rebuilt.
want_id="$("$DOCKER" image inspect --format '{{.Id}}' "$image")"
have_id="$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
if [ "sha256:$have_id" != "$want_id" ] && [ "$have_id" != "$want_id" ]; then
  "$DOCKER" save "$image" | podman load -q >/dev/null
fi
log "podman $(podman version --format '{{.Server.Version}}' 2>/dev/null || podman --version) serving unix://$sock, image $image loaded"
