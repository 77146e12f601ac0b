/**
 * The benchmark harness ({@code scripts/bench.sh}): the library against docker-java and the docker CLI, side
 * by side in one run; writes {@code docs/benchmarks.md} and a chart.
 */
package dev.sandboxkit.benchmarks;
