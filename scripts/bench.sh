#!/usr/bin/env bash
# Runs the benchmark harness (library vs raw engine, side by side) and writes docs/benchmarks.md and
# docs/benchmarks.svg. Pass "quick" for a short smoke run. Best on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh
mvn -B -ntp -q install -DskipTests -pl sandbox-benchmarks -am
exec mvn -B -ntp -q -pl sandbox-benchmarks exec:java -Dexec.mainClass=dev.sandboxkit.benchmarks.BenchmarkMain \
  -Dexec.args="$(pwd)/docs ${1:-}"
