#!/usr/bin/env bash
# The main demo: a session writes a file, its container is reaped after a 2 s idle TTL, and the next
# exec resumes it in a fresh container with the file still there.
set -euo pipefail
cd "$(dirname "$0")/.."
SANDBOXKIT_NO_POSTGRES=1 scripts/setup-env.sh   # the demo needs no database
mvn -B -ntp -q install -DskipTests
exec mvn -B -ntp -q -pl examples exec:java -Dexec.mainClass=dev.sandboxkit.examples.ResumeAfterTtlDemo "$@"
