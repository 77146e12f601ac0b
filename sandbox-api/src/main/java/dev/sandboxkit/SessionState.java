package dev.sandboxkit;

/** Where a session is in its lifecycle. */
public enum SessionState {
    /** A container is running for the session; execs go straight into it. */
    ACTIVE,
    /** No container runs (reaped after idle time, or the manager closed); the workdir is kept and the next call resumes. */
    SUSPENDED,
    /**
     * A destroy has begun but is not confirmed yet: the container or the workdir could not be removed so far
     * (an engine outage, a workdir that resisted deletion). The session is already unusable (execs and files
     * answer {@link SandboxNotFoundException}); the manager's janitor retries the removal until it succeeds,
     * and only then records {@link #DESTROYED}. Acquiring the id meanwhile finishes the destroy first, or fails
     * with a retryable {@link SandboxAcquireException}.
     */
    DESTROYING,
    /** The session was destroyed: its container and its workdir are gone (confirmed). */
    DESTROYED
}
