package dev.sandboxkit.internal;

import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Terminal;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.spi.TerminalConnection;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@link Terminal} {@code Sandbox.terminal} returns: the driver's connection plus the live operations' accounting.
 * It holds one exec slot of its session from open until it is seen ended (output at its end, exit reported, or
 * closed), so the reaper treats it as a running exec; ending releases the slot once.
 */
final class ManagedTerminal implements Terminal {
    private final LiveOperations live;
    private final SessionEntry entry;
    private final String sandboxId;
    private final TerminalConnection connection;
    private final InputStream output;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile TerminalSize size;

    ManagedTerminal(LiveOperations live, SessionEntry entry, String sandboxId, TerminalConnection connection,
                    TerminalSize size) {
        this.live = live;
        this.entry = entry;
        this.sandboxId = sandboxId;
        this.connection = connection;
        this.size = size;
        this.output = new FilterInputStream(connection.output()) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b < 0) {
                    ended();
                }
                return b;
            }

            @Override
            public int read(byte[] buffer, int offset, int length) throws IOException {
                int n = super.read(buffer, offset, length);
                if (n < 0) {
                    ended();
                }
                return n;
            }
        };
    }

    @Override
    public OutputStream input() {
        return connection.input();
    }

    @Override
    public InputStream output() {
        return output;
    }

    @Override
    public TerminalSize size() {
        return size;
    }

    @Override
    public void resize(TerminalSize newSize) {
        Objects.requireNonNull(newSize, "size");
        size = newSize;
        connection.resize(newSize);
    }

    @Override
    public Optional<ExecResult> waitFor(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
        Optional<ExecResult> status = connection.waitFor(timeout);
        if (status.isEmpty()) {
            return status;
        }
        ended();
        return Optional.of(LiveOperations.classify(entry, sandboxId, status.get()));
    }

    @Override
    public void close() {
        try {
            connection.close();
        } finally {
            ended();
        }
    }

    /**
     * The program is over (or no longer ours to watch): release the exec slot, once. Synchronized so that a
     * {@code close()} racing the reader's end of output returns only after the slot is released.
     */
    private synchronized void ended() {
        if (ended.compareAndSet(false, true)) {
            live.terminalEnded(entry, this);
        }
    }

    @Override
    public String toString() {
        return "Terminal[" + entry.sessionId + ", " + size + (ended.get() ? ", ended" : "") + "]";
    }
}
