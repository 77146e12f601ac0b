package dev.sandboxkit;

/** Where a session is in its lifecycle. */
public enum SessionState {
    /** A container is running for the session; execs go straight into it. */
    ACTIVE,
    /** No container runs (reaped after idle time, or the manager closed); the workdir is kept and the next call resumes. */
    SUSPENDED,
    /** The session was destroyed: container and workdir are gone. */
    DESTROYED
}
