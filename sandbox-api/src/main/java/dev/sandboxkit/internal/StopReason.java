package dev.sandboxkit.internal;

/** Why a container is stopped; idle reaping is the only stop that yields to activity. */
enum StopReason {
    IDLE("idle for more than the TTL", "the sandbox was reaped (idle for more than the TTL)"),
    LIFETIME("maximum lifetime reached", "the sandbox was killed at its maximum lifetime"),
    SPEC_CHANGED("spec changed", "the sandbox was replaced (its spec changed)"),
    CLOSED("manager closed", "the sandbox was suspended (its manager closed)"),
    RESTORED("workdir restored from a snapshot", "the sandbox was removed (its workdir was restored from a snapshot)");

    final String text;
    /** What a background process's handle says happened to it. */
    final String processFate;

    StopReason(String text, String processFate) {
        this.text = text;
        this.processFate = processFate;
    }
}
