package dev.sandboxkit.mcp.internal;

import reactor.core.publisher.Mono;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a session's cleanup once, however many close paths report it (stdin's end, a shutdown signal, a DELETE), and
 * makes every path wait until it has finished. Without the wait a shutdown could close the manager, or the JVM halt,
 * while another thread is still destroying the sandbox, and its workdir would be left behind.
 */
final class CloseOnce {
    private final Runnable cleanup;
    private final AtomicBoolean started = new AtomicBoolean();
    private final CompletableFuture<Void> finished = new CompletableFuture<>();

    CloseOnce(Runnable cleanup) {
        this.cleanup = Objects.requireNonNull(cleanup, "cleanup");
    }

    /** Runs the cleanup on this thread, or waits for the thread that is running it. */
    void run() {
        if (!started.compareAndSet(false, true)) {
            finished.join();
            return;
        }
        try {
            cleanup.run();
        } finally {
            finished.complete(null);
        }
    }

    /**
     * {@code closing}, then the cleanup, before the subscriber hears of the end. ({@code doFinally} would run it
     * only after the signal reached the subscriber, so a {@code block()} could return first.)
     */
    Mono<Void> after(Mono<Void> closing) {
        return closing
                .then(Mono.fromRunnable(this::run))
                .onErrorResume(e -> Mono.<Void>fromRunnable(this::run).then(Mono.error(e)))
                .doOnCancel(this::run)
                .then();
    }
}
