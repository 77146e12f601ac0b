package dev.sandboxkit.docker.internal.channel;

import dev.sandboxkit.ExecStream;
import dev.sandboxkit.OutputListener;
import dev.sandboxkit.docker.internal.engine.ExecOutput;
import dev.sandboxkit.docker.internal.engine.StreamDemux;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * Reads one command's output from a command channel: demultiplexes the engine's raw stream (8-byte
 * headers: type 1 stdout, 2 stderr, then a big-endian uint32 size), finds the supervisor's frames in each
 * stream, keeps at most the caps and hands every user byte to the listener as it arrives. Not
 * thread-safe: one command, the calling thread.
 *
 * <p>A command's stdout reads {@code user bytes #nonce T}, its stderr {@code #nonce S user bytes #nonce T}
 * with {@code #nonce R<exit code>.} somewhere after the start frame, written when the command's process
 * exited (between the user's stderr bytes: the supervisor writes it in one write of under {@code PIPE_BUF}
 * bytes, so it is never split by them). The start frame, written just before the command is forked, tells
 * that the command may have run; stdout needs none, as nothing but the command's own FIFO reaches it. {@code #nonce} is {@code #} plus 32 hex digits (128 random bits) drawn for this command
 * only. Why a match can only be the supervisor's: see {@link CommandChannel}. Because {@code #} occurs in
 * the token only at its start, no proper suffix of a partial match is itself a prefix of the token, so a
 * mismatch never needs to back up more than the current byte, and a token cannot start inside user bytes
 * and end inside a frame.
 */
final class ChannelOutput implements StreamDemux.Sink {
    private static final int START = 0;
    private static final int DATA = 1;
    private static final int TYPE = 2;
    private static final int CODE = 3;
    private static final int ENDED = 4;
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);
    private static final long HASHES = 0x2323232323232323L;

    private final Scanner out;
    private final Scanner err;
    private final StreamDemux demux = new StreamDemux();
    private Scanner current;
    private int exitCode = -1;
    private boolean exited;

    ChannelOutput(String nonce, int stdoutLimit, int stderrLimit, OutputListener listener) {
        byte[] token = ("#" + nonce).getBytes(StandardCharsets.US_ASCII);
        this.out = new Scanner(ExecStream.STDOUT, token, stdoutLimit, listener);
        this.out.state = DATA;
        this.err = new Scanner(ExecStream.STDERR, token, stderrLimit, listener);
    }

    /** Consumes everything readable in {@code in}. */
    void consume(ByteBuffer in) {
        demux.consume(in, this);
    }

    @Override
    public void header(int type, long size) {
        if (type == 1) {
            current = out;
        } else if (type == 2) {
            current = err;
        } else {
            throw new ProtocolViolation("unexpected stream type " + type + " from the engine");
        }
    }

    @Override
    public void payload(byte[] array, int offset, int length) {
        current.feed(array, offset, length);
    }

    /** Whether the supervisor announced the command (or part of the frame arrived): from then on it may have run. */
    boolean started() {
        return err.state != START || err.matched > 0 || out.seen;
    }

    /** Whether the command's process exited (its exit code arrived). */
    boolean exited() {
        return exited;
    }

    int exitCode() {
        return exitCode;
    }

    /** Whether both streams ended: every byte the command and what it left running wrote has been read. */
    boolean finished() {
        return exited && out.state == ENDED && err.state == ENDED;
    }

    /** Whether the engine stream stands between two frames, as it must between commands. */
    boolean atFrameBoundary() {
        return demux.atFrameBoundary();
    }

    byte[] stdout() {
        return out.bytes();
    }

    byte[] stderr() {
        return err.bytes();
    }

    boolean stdoutTruncated() {
        return out.kept.truncated();
    }

    boolean stderrTruncated() {
        return err.kept.truncated();
    }

    /** One stream of one command: frames in, user bytes out. */
    private final class Scanner {
        private final ExecStream stream;
        private final byte[] token;
        private final ExecOutput.Capped kept;
        private final OutputListener listener;
        int state = START;
        /** Whether any byte arrived on this stream for this command. */
        boolean seen;
        /** Bytes of the token matched so far; in DATA they are held back until the match fails or completes. */
        int matched;
        private int code;
        private int digits;

        Scanner(ExecStream stream, byte[] token, int limit, OutputListener listener) {
            this.stream = stream;
            this.token = token;
            this.kept = new ExecOutput.Capped(limit);
            this.listener = listener;
        }

        void feed(byte[] a, int offset, int length) {
            seen |= length > 0;
            int i = offset;
            int end = offset + length;
            while (i < end) {
                switch (state) {
                    case START -> {
                        if (matched < token.length) {
                            if (a[i] != token[matched]) {
                                throw notStarted(a, i, end);
                            }
                            matched++;
                        } else {
                            if (a[i] != 'S') {
                                throw notStarted(a, i, end);
                            }
                            matched = 0;
                            state = DATA;
                        }
                        i++;
                    }
                    case DATA -> {
                        if (matched == 0) {
                            int j = indexOfHash(a, i, end);
                            deliver(a, i, j - i);
                            if (j < end) {
                                matched = 1;
                                j++;
                            }
                            i = j;
                        } else if (a[i] == token[matched]) {
                            matched++;
                            i++;
                            if (matched == token.length) {
                                matched = 0;
                                state = TYPE;
                            }
                        } else {
                            // Not the token after all: the held bytes were output. The current byte is looked at
                            // again: it may be a '#' starting the real token.
                            int held = matched;
                            matched = 0;
                            deliver(token, 0, held);
                        }
                    }
                    case TYPE -> {
                        byte type = a[i++];
                        if (type == 'T') {
                            state = ENDED;
                        } else if (type == 'R' && stream == ExecStream.STDERR && !exited) {
                            state = CODE;
                            code = 0;
                            digits = 0;
                        } else {
                            throw new ProtocolViolation("unexpected frame type '" + (char) type + "' on " + stream);
                        }
                    }
                    case CODE -> {
                        byte c = a[i++];
                        if (c >= '0' && c <= '9' && digits < 3) {
                            code = code * 10 + (c - '0');
                            digits++;
                        } else if (c == '.' && digits > 0) {
                            exitCode = code;
                            exited = true;
                            state = DATA;
                        } else {
                            throw new ProtocolViolation("malformed exit frame on " + stream);
                        }
                    }
                    default -> throw new ProtocolViolation(stream + " continued after the command's end frame");
                }
            }
        }

        /** Before the start frame only the supervisor writes: show what it wrote (escaped, short). */
        private ProtocolViolation notStarted(byte[] a, int i, int end) {
            StringBuilder seen = new StringBuilder();
            for (int k = Math.max(0, i - matched); k < Math.min(end, i + 48); k++) {
                int c = a[k] & 0xff;
                seen.append(c >= 0x20 && c < 0x7f ? String.valueOf((char) c) : String.format("\\x%02x", c));
            }
            return new ProtocolViolation(stream + " did not start with the command's frame: '" + seen + "'");
        }

        private void deliver(byte[] bytes, int offset, int length) {
            if (length == 0) {
                return;
            }
            kept.append(bytes, offset, length);
            if (listener != null) {
                try {
                    listener.onOutput(stream, bytes, offset, length);
                } catch (RuntimeException e) {
                    throw new ExecOutput.ListenerFailure(e);
                }
            }
        }

        byte[] bytes() {
            return kept.bytes();
        }
    }

    /**
     * The index of the first {@code '#'} in {@code a[from, to)}, or {@code to}. Eight bytes per step (the
     * zero-byte trick on {@code word ^ 0x23..23}): the byte-at-a-time loop was the channel's own cost on bulk
     * output (about 20 ms of CPU per 50 MiB in the profile, which the plain path does not pay).
     */
    static int indexOfHash(byte[] a, int from, int to) {
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long w = (long) LONGS.get(a, i) ^ HASHES;
            long found = (w - 0x0101010101010101L) & ~w & 0x8080808080808080L;
            if (found != 0) {
                // The lowest flagged byte is always a real match: a borrow only runs towards higher bytes.
                return i + (Long.numberOfTrailingZeros(found) >>> 3);
            }
        }
        for (; i < to; i++) {
            if (a[i] == '#') {
                return i;
            }
        }
        return to;
    }

    /** The stream broke the protocol: the channel cannot be trusted any more. */
    static final class ProtocolViolation extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ProtocolViolation(String message) {
            super(message, null, false, false);
        }
    }
}
