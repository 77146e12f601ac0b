package dev.sandboxkit.kubernetes;

import dev.sandboxkit.ExecStream;
import dev.sandboxkit.OutputListener;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;

/**
 * One exec output stream: hands every byte to the listener, keeps at most {@code limit} bytes.
 *
 * <p>fabric8 writes both streams of one exec through one serial executor (a thread of the client's
 * executor), so the listener is never called concurrently for one exec, and every frame that preceded
 * the exit status has been written when {@code exitCode()} completes. A listener that throws stops
 * further listener calls and completes {@code failure}, on which the exec is killed and aborted.
 */
final class OutputCapture extends OutputStream {
    private final ExecStream stream;
    private final int limit;
    private final OutputListener listener;
    private final CompletableFuture<RuntimeException> failure;
    private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
    private boolean truncated;

    OutputCapture(ExecStream stream, int limit, OutputListener listener, CompletableFuture<RuntimeException> failure) {
        this.stream = stream;
        this.limit = limit;
        this.listener = listener;
        this.failure = failure;
    }

    @Override
    public void write(int b) {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
        if (len <= 0) {
            return;
        }
        if (listener != null && !failure.isDone()) {
            try {
                listener.onOutput(stream, b, off, len);
            } catch (RuntimeException e) {
                failure.complete(e);
            }
        }
        int room = limit - kept.size();
        if (room >= len) {
            kept.write(b, off, len);
        } else {
            if (room > 0) {
                kept.write(b, off, room);
            }
            truncated = true;
        }
    }

    synchronized byte[] bytes() {
        return kept.toByteArray();
    }

    synchronized boolean truncated() {
        return truncated;
    }
}
