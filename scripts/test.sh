#!/usr/bin/env bash
# The test command.
#
#   scripts/test.sh          the default tier: every unit test and, on the real Docker engine, the driver's
#                            conformance kit on runc in the default exec mode and every module's tests but those
#                            tagged gvisor, podman, postgres, tls, volume, s3, node or slow. Needs only Docker
#                            (scripts/setup-docker.sh, run here) and the test images.
#   scripts/test.sh --all    every tier, what CI runs (.ci/run): also sets up gVisor, Podman, PostgreSQL and Node
#                            (scripts/setup-env.sh, run here).
#
# Further arguments go to Maven, for example: scripts/test.sh -pl sandbox-docker -am -Dtest='DockerExecTest'
# A test never skips because its engine is missing: it fails and names the setup script to run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --all ]; then
  shift
  scripts/setup-env.sh
  exec mvn -B -ntp -Dstyle.color=never -T 2 verify -Pall "$@"
fi
scripts/setup-docker.sh
scripts/build-test-images.sh script   # the script(1) image of the terminal and reattach tests
# Two modules at a time (their tests mostly wait on the engine); no javadoc or source jars (CI builds them).
exec mvn -B -ntp -Dstyle.color=never -T 2 verify -Dmaven.javadoc.skip=true -Dmaven.source.skip=true "$@"
