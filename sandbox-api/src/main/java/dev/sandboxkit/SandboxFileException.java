package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.util.Objects;

/**
 * A files-API call ({@link SandboxFiles}) was refused or failed. {@link #reason()} says why. A path that
 * does not exist is reported as {@link SandboxNotFoundException} instead, like a missing session.
 */
public class SandboxFileException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** Why a files-API call failed. */
    public enum Reason {
        /** The path is malformed, absolute outside {@value SandboxSpec#WORKSPACE}, or contains {@code ..}. */
        INVALID_PATH,
        /** A path component, or the target of a directory operation, is not a directory. */
        NOT_A_DIRECTORY,
        /** The target is a directory where a file was expected. */
        IS_A_DIRECTORY,
        /** The target is a FIFO, socket or device node: never opened. */
        NOT_A_REGULAR_FILE,
        /** The path goes through, or ends at, a symbolic link: never followed. */
        SYMLINK,
        /** The directory to delete is not empty (use the recursive delete). */
        NOT_EMPTY,
        /** A file exceeds {@link FileLimits#maxFileBytes()}. */
        TOO_LARGE,
        /** A listing or archive exceeds {@link FileLimits#maxEntries()}. */
        TOO_MANY_ENTRIES,
        /** The directory tree is nested deeper than the files API walks. */
        TOO_DEEP,
        /** An uploaded tar stream is malformed or holds a forbidden entry (escaping path, link, device). */
        INVALID_ARCHIVE,
        /** The host refused the operation (permissions set inside the sandbox). */
        PERMISSION_DENIED,
        /** The driver has no files API. */
        UNSUPPORTED,
        /** Any other I/O failure (disk full, ...). */
        IO_ERROR
    }

    private final Reason reason;

    /**
     * Creates the exception.
     *
     * @param reason  why it failed
     * @param message what went wrong, naming the path
     */
    public SandboxFileException(Reason reason, String message) {
        this(reason, message, null);
    }

    /**
     * Creates the exception with a cause.
     *
     * @param reason  why it failed
     * @param message what went wrong, naming the path
     * @param cause   the underlying failure, or {@code null}
     */
    public SandboxFileException(Reason reason, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /**
     * Why the call failed.
     *
     * @return the reason
     */
    public Reason reason() {
        return reason;
    }
}
