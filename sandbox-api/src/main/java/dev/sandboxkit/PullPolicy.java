package dev.sandboxkit;

/** When the driver may pull a sandbox image from a registry. */
public enum PullPolicy {
    /** Pull before every create. */
    ALWAYS,
    /** Pull only when the image is not present locally (the default). */
    IF_MISSING,
    /** Never pull; a missing image fails the acquire with an error that names it. */
    NEVER
}
