#!/usr/bin/env bash
# The test command: prepares the machine (Docker engine, test image), then runs every module's tests
# against the real engine. Tests that need Docker fail, never skip, when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh
exec mvn -B -ntp verify "$@"
