#!/usr/bin/env bash
# The main demo: a session writes a file, its container is reaped after a 2 s idle TTL, and the next exec resumes it
# in a fresh container with the file still there.
#
# It needs only the Docker engine and the base image (scripts/setup-docker.sh), builds only the two modules the demo
# runs on (sandbox-api, sandbox-docker: compiled, no tests, no jars), and launches the demo's source file directly (java's source-file
# mode). Arguments are JVM options, for example: scripts/demo.sh -Dttl=PT5S
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-docker.sh
mkdir -p target
slf4j="$(sed -n 's:.*<slf4j.version>\(.*\)</slf4j.version>.*:\1:p' pom.xml)"
# Maven's output goes to a log, shown only on failure (Maven 3.8 writes colour resets even when quiet).
if ! mvn -B -ntp -q -pl sandbox-docker -am compile dependency:build-classpath dependency:copy \
    -Dmaven.test.skip=true -Djapicmp.skip=true -Dmaven.source.skip=true -Dmaven.javadoc.skip=true -Denforcer.skip=true \
    -Dmdep.includeScope=runtime -Dmdep.outputFile=target/demo.classpath \
    -Dartifact="org.slf4j:slf4j-simple:$slf4j" -DoutputDirectory=target/demo-lib >target/demo-build.log 2>&1; then
  cat target/demo-build.log
  exit 1
fi
# slf4j-simple: a logging backend, as an application would have, so the manager's own steps show beside the demo's.
cp="sandbox-docker/target/classes:$(cat sandbox-docker/target/demo.classpath):sandbox-docker/target/demo-lib/*"
exec java -cp "$cp" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.dev.sandboxkit=info \
  -Dorg.slf4j.simpleLogger.showDateTime=true -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
  -Dorg.slf4j.simpleLogger.showThreadName=false -Dorg.slf4j.simpleLogger.showShortLogName=true \
  "$@" examples/src/main/java/dev/sandboxkit/examples/ResumeAfterTtlDemo.java
