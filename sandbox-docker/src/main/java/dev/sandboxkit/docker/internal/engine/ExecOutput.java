package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.ExecStream;
import dev.sandboxkit.OutputListener;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Demultiplexes the engine's raw exec stream (8-byte headers: type 1 stdout / 2 stderr, 3 zero bytes,
 * big-endian uint32 size), keeps at most the caps in memory and hands every byte to the listener as it
 * arrives. Not thread-safe: one exec, one thread.
 */
public final class ExecOutput implements StreamDemux.Sink {
    /** How runc reports an exec that could not start; the engine sends it as stdout, exit code 126. */
    private static final byte[] START_FAILURE = "OCI runtime exec failed".getBytes(StandardCharsets.US_ASCII);
    /** Podman's prefix for its own errors; it sends a start failure as stderr, with exit code 126 or 127. */
    private static final String PODMAN_ERROR = "Error: ";
    /**
     * Podman's second line after a start failure, about its attach socket: not the command's output. Seen as
     * {@code Error: read unixpacket @->/proc/self/fd/14/attach: read: connection reset by peer}.
     */
    private static final java.util.regex.Pattern PODMAN_ATTACH_NOISE = java.util.regex.Pattern.compile(
            "Error: [^\n]*/attach: [^\n]*\n");
    private static final int MIN_HELD = 8;
    private static final int MAX_HELD = 4096;

    private final Capped stdout;
    private final Capped stderr;
    private final OutputListener listener;
    private final StreamDemux demux = new StreamDemux();
    private ExecStream current;
    private boolean firstFrame = true;
    /** Podman's start failures come as stderr, followed by more stderr ({@link #PODMAN_ATTACH_NOISE}). */
    private volatile boolean podman;
    /** The first frame while it may be a start failure; released as soon as anything follows (Docker). */
    private byte[] held;
    private int heldFill;
    private ExecStream heldStream = ExecStream.STDOUT;
    /** Podman: stderr after a held start failure, kept with it until the exit code decides (at most MAX_HELD). */
    private byte[] tail;
    private int tailFill;
    /** Whether the current frame's payload goes to {@link #tail}. */
    private boolean toTail;
    /** A terminal's stream: raw bytes, no frames, everything stdout (see {@link #raw}). */
    private boolean raw;

    ExecOutput(int stdoutLimit, int stderrLimit, OutputListener listener) {
        this.stdout = new Capped(stdoutLimit);
        this.stderr = new Capped(stderrLimit);
        this.listener = listener;
    }

    /** Reads the stream as Podman writes it; set before the first byte is consumed. */
    void podman(boolean podman) {
        this.podman = podman;
    }

    /**
     * Reads the stream of an exec with a terminal: not multiplexed, all of it stdout. Only the first bytes may
     * be held, while they read like the runtime's start failure. Set before the first byte is consumed.
     */
    void raw(boolean value) {
        this.raw = value;
    }

    /** Consumes everything readable in {@code in}. */
    void consume(ByteBuffer in) {
        if (raw) {
            consumeRaw(in);
            return;
        }
        demux.consume(in, this);
    }

    /** Holds the first bytes while they are a prefix of (or start with) runc's start failure, then passes all on. */
    private void consumeRaw(ByteBuffer in) {
        byte[] array = in.array();
        int offset = in.arrayOffset() + in.position();
        int length = in.remaining();
        in.position(in.limit());
        if (firstFrame) {
            if (held == null) {
                held = new byte[MAX_HELD];
                heldFill = 0;
                heldStream = ExecStream.STDOUT;
            }
            int k = Math.min(length, MAX_HELD - heldFill);
            System.arraycopy(array, offset, held, heldFill, k);
            heldFill += k;
            offset += k;
            length -= k;
            int n = Math.min(heldFill, START_FAILURE.length);
            if (length == 0 && heldFill < MAX_HELD && Arrays.equals(held, 0, n, START_FAILURE, 0, n)) {
                return; // may still be the runtime's complaint: wait for the exit code
            }
            firstFrame = false;
            releaseHeld();
        }
        deliver(ExecStream.STDOUT, array, offset, length);
    }

    @Override
    public void payload(byte[] array, int offset, int n) {
        if (toTail) {
            System.arraycopy(array, offset, tail, tailFill, n);
            tailFill += n;
        } else if (held != null) {
            System.arraycopy(array, offset, held, heldFill, n);
            heldFill += n;
            if (demux.payloadLeft() == 0 && !isStartFailure(held, heldFill)) {
                releaseHeld();
            }
        } else {
            deliver(current, array, offset, n);
        }
    }

    /**
     * Called once the exit code is known. If the process never started (dockerd: exit code 126 and pid 0;
     * Podman: 126 or 127 after its {@code Error: } line) and the only output was the runtime's complaint, returns
     * the exit code a shell would give (127 for a missing binary, 126 otherwise) and turns the message into one
     * stderr line; otherwise releases any held bytes as the output they were.
     */
    int finish(int exitCode, boolean neverStarted) {
        if (held == null) {
            return exitCode;
        }
        boolean code = exitCode == 126 || (podman && exitCode == 127);
        if (code && neverStarted && demux.payloadLeft() == 0 && isStartFailure(held, heldFill)) {
            String message = new String(held, 0, heldFill, StandardCharsets.UTF_8);
            byte[] line = held;
            int length = heldFill;
            held = null;
            if (heldStream == ExecStream.STDERR) {
                // One line as on Docker: Podman's "Error: " prefix and its attach-socket complaint dropped.
                byte[] one = (message.substring(PODMAN_ERROR.length()).stripTrailing() + "\n")
                        .getBytes(StandardCharsets.UTF_8);
                deliver(ExecStream.STDERR, one, 0, one.length);
                String rest = PODMAN_ATTACH_NOISE.matcher(tailText()).replaceAll("");
                byte[] restBytes = rest.getBytes(StandardCharsets.UTF_8);
                deliver(ExecStream.STDERR, restBytes, 0, restBytes.length);
                tail = null;
            } else {
                // On a terminal everything is on its one output, the runtime's complaint too.
                deliver(raw ? ExecStream.STDOUT : ExecStream.STDERR, line, 0, length);
            }
            return EngineErrors.startFailureExitCode(message);
        }
        releaseHeld();
        return exitCode;
    }

    private String tailText() {
        return tail == null ? "" : new String(tail, 0, tailFill, StandardCharsets.UTF_8);
    }

    /**
     * The engine's message while it may explain why the process never started (a complete first stdout frame
     * that reads like one), else {@code null}. Nothing is delivered until {@link #finish}.
     */
    String heldStartFailure() {
        if (raw) {
            return held != null && startsWith(held, heldFill, START_FAILURE)
                    ? new String(held, 0, heldFill, StandardCharsets.UTF_8) : null;
        }
        return held != null && demux.payloadLeft() == 0 && isStartFailure(held, heldFill)
                ? new String(held, 0, heldFill, StandardCharsets.UTF_8) : null;
    }

    /**
     * Whether a first stdout frame reads like the engine's own report of an exec that could not start:
     * runc's {@code OCI runtime exec failed: ...}, or one line ending in CRLF (the engine writes its errors so)
     * that carries containerd's {@code : unknown} suffix or reads like a container going away
     * ({@code cannot exec in a stopped state: unknown}, {@code container is not running}). Held back only
     * until the exit code shows whether the process started.
     */
    private boolean isStartFailure(byte[] bytes, int length) {
        if (heldStream == ExecStream.STDERR) {
            return isPodmanStartFailure(new String(bytes, 0, length, StandardCharsets.UTF_8));
        }
        if (startsWith(bytes, length, START_FAILURE)) {
            return true;
        }
        if (length < 2 || bytes[length - 2] != '\r' || bytes[length - 1] != '\n') {
            return false;
        }
        for (int i = 0; i < length - 2; i++) {
            if (bytes[i] == '\n') {
                return false;
            }
        }
        String line = new String(bytes, 0, length, StandardCharsets.UTF_8);
        return line.endsWith(": unknown\r\n") || EngineErrors.removal(line);
    }

    /**
     * Whether a first stderr frame is Podman's report of an exec that could not start: one line
     * {@code Error: <runtime>: exec failed: ...} about the command (see {@link EngineErrors#commandFailure}) or
     * about its container going away.
     */
    static boolean isPodmanStartFailure(String frame) {
        if (!frame.startsWith(PODMAN_ERROR) || !frame.endsWith("\n") || frame.indexOf('\n') != frame.length() - 1) {
            return false;
        }
        return EngineErrors.commandFailure(frame) || EngineErrors.removal(frame);
    }

    /** Delivers a held frame as it is, because the exec is being abandoned. */
    void releaseIfHeld() {
        if (held != null) {
            releaseHeld();
        }
    }

    /** Records an engine-side start failure (newer engines answer exec start with an error body). */
    void startFailure(String message) {
        byte[] bytes = (message + "\n").getBytes(StandardCharsets.UTF_8);
        deliver(ExecStream.STDERR, bytes, 0, bytes.length);
    }

    byte[] stdout() {
        return stdout.bytes();
    }

    byte[] stderr() {
        return stderr.bytes();
    }

    boolean stdoutTruncated() {
        return stdout.truncated();
    }

    boolean stderrTruncated() {
        return stderr.truncated();
    }

    @Override
    public void header(int type, long payloadLeft) {
        // 0 would be stdin (never sent back), 3 is the engine's own error stream.
        current = type == 2 || type == 3 ? ExecStream.STDERR : ExecStream.STDOUT;
        toTail = false;
        if (held != null) {
            // Podman: stderr after its start failure stays with it (bounded) until the exit code is known.
            if (podman && current == ExecStream.STDERR && tailFill + payloadLeft <= MAX_HELD) {
                if (tail == null) {
                    tail = new byte[MAX_HELD];
                }
                toTail = true;
                return;
            }
            releaseHeld();
        }
        ExecStream holdable = podman ? ExecStream.STDERR : ExecStream.STDOUT;
        if (firstFrame && current == holdable && payloadLeft >= MIN_HELD && payloadLeft <= MAX_HELD) {
            held = new byte[(int) payloadLeft];
            heldFill = 0;
            heldStream = current;
        }
        firstFrame = false;
        if (payloadLeft == 0 && held != null) {
            releaseHeld();
        }
    }

    private void releaseHeld() {
        byte[] bytes = held;
        int length = heldFill;
        held = null;
        deliver(heldStream, bytes, 0, length);
        if (tail != null) {
            byte[] t = tail;
            tail = null;
            toTail = false;
            deliver(ExecStream.STDERR, t, 0, tailFill);
        }
    }

    private void deliver(ExecStream stream, byte[] bytes, int offset, int length) {
        if (length == 0) {
            return;
        }
        (stream == ExecStream.STDOUT ? stdout : stderr).append(bytes, offset, length);
        if (listener != null) {
            try {
                listener.onOutput(stream, bytes, offset, length);
            } catch (RuntimeException e) {
                throw new ListenerFailure(e);
            }
        }
    }

    private static boolean startsWith(byte[] bytes, int length, byte[] prefix) {
        return length >= prefix.length && Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
    }

    /** The listener threw; carries its exception to the exec loop, which kills the process. Also the channel's. */
    public static final class ListenerFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /**
         * Wraps what the listener threw.
         *
         * @param cause the listener's exception
         */
        public ListenerFailure(RuntimeException cause) {
            super(cause);
        }
    }

    /** Keeps the first {@code limit} bytes; grows on demand so small outputs stay small. Also the channel's. */
    public static final class Capped {
        private final int limit;
        private byte[] data = new byte[0];
        private int size;
        private boolean truncated;

        /**
         * An empty buffer.
         *
         * @param limit the most bytes kept
         */
        public Capped(int limit) {
            this.limit = limit;
        }

        /**
         * Keeps what fits under the limit and notes whether anything was dropped.
         *
         * @param bytes  the source
         * @param offset where the bytes start
         * @param length how many
         */
        public void append(byte[] bytes, int offset, int length) {
            int keep = Math.min(length, limit - size);
            if (keep < length) {
                truncated = true;
            }
            if (keep <= 0) {
                return;
            }
            if (size + keep > data.length) {
                int grown = (int) Math.min(limit, Math.max((long) size + keep, Math.max(256L, data.length * 2L)));
                data = Arrays.copyOf(data, grown);
            }
            System.arraycopy(bytes, offset, data, size, keep);
            size += keep;
        }

        /**
         * The bytes kept.
         *
         * @return a copy, or the internal array when it is exactly full
         */
        public byte[] bytes() {
            return size == data.length ? data : Arrays.copyOf(data, size);
        }

        /**
         * Whether bytes beyond the limit were dropped.
         *
         * @return true once anything was dropped
         */
        public boolean truncated() {
            return truncated;
        }
    }
}
