#!/usr/bin/env bash
# Runs the benchmark harness (library vs raw engine, side by side) and writes docs/benchmarks.md and
# docs/benchmarks.svg. Best on an otherwise idle machine.
#   scripts/bench.sh            every section, full iterations
#   scripts/bench.sh quick      every section, a tenth of the iterations (smoke run)
#   scripts/bench.sh full B1,B4 some sections only; written to target/bench-partial, docs untouched
#   scripts/bench.sh full B9 B10 the same, sections as separate words
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh
mvn -B -ntp -q install -DskipTests -pl sandbox-benchmarks -am
out="$(pwd)/docs"
mode="${1:-full}"
sections=""
if [ $# -gt 1 ]; then shift; sections="$(IFS=,; echo "$*")"; out="$(pwd)/sandbox-benchmarks/target/bench-partial"; fi
exec mvn -B -ntp -q -pl sandbox-benchmarks exec:java -Dexec.mainClass=dev.sandboxkit.benchmarks.BenchmarkMain -Dexec.classpathScope=test \
  -Dexec.args="$out $mode $sections"
