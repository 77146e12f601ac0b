package dev.sandboxkit;

/** The output stream a chunk of exec output came from. */
public enum ExecStream {
    /** The process's standard output. */
    STDOUT,
    /** The process's standard error. */
    STDERR
}
