package dev.sandboxkit.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Latency samples in nanoseconds, with the percentiles the report uses. */
final class Samples {
    final String name;
    private final List<Long> nanos = new ArrayList<>();

    Samples(String name) {
        this.name = name;
    }

    void add(long durationNanos) {
        nanos.add(durationNanos);
    }

    /** Drops the samples so far (after a warm-up). */
    void clear() {
        nanos.clear();
    }

    int count() {
        return nanos.size();
    }

    double p50Millis() {
        return percentile(0.50);
    }

    double p95Millis() {
        return percentile(0.95);
    }

    /** Nearest-rank percentile, in milliseconds. */
    double percentile(double p) {
        if (nanos.isEmpty()) {
            return Double.NaN;
        }
        List<Long> sorted = new ArrayList<>(nanos);
        Collections.sort(sorted);
        int rank = (int) Math.ceil(p * sorted.size());
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1))) / 1e6;
    }
}
