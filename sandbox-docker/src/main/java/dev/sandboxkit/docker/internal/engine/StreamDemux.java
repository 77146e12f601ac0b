package dev.sandboxkit.docker.internal.engine;

import java.nio.ByteBuffer;

/**
 * Splits the engine's multiplexed exec stream (no TTY): every payload follows an 8-byte header, the stream
 * type (0 stdin, 1 stdout, 2 stderr, 3 the engine's own errors), three zero bytes and a big-endian uint32
 * size. Headers and payloads may be cut anywhere by the socket reads; this keeps the state between them.
 * Not thread-safe: one stream, one thread.
 */
public final class StreamDemux {
    /** Receives the stream's pieces, on the thread that calls {@link #consume}. */
    public interface Sink {
        /**
         * A header: the payload of {@code size} bytes that follows belongs to stream {@code type}.
         *
         * @param type the stream: 0 stdin, 1 stdout, 2 stderr, 3 the engine's own errors (any byte, unchecked)
         * @param size the payload size, 0 to 2^32 - 1
         */
        void header(int type, long size);

        /**
         * Payload bytes of the current frame; {@link #payloadLeft()} is already reduced by {@code length}.
         *
         * @param array  holds the bytes; valid only during the call
         * @param offset where they start
         * @param length how many
         */
        void payload(byte[] array, int offset, int length);
    }

    /** A demultiplexer at the start of a stream. */
    public StreamDemux() {
    }

    private final byte[] header = new byte[8];
    private int headerFill;
    private long payloadLeft;

    /**
     * Hands everything readable in {@code in} (a heap buffer) to the sink, leaving {@code in} empty.
     *
     * @param in   received bytes, in read mode
     * @param sink receives headers and payload
     */
    public void consume(ByteBuffer in, Sink sink) {
        byte[] array = in.array();
        while (in.hasRemaining()) {
            if (payloadLeft == 0) {
                int n = Math.min(8 - headerFill, in.remaining());
                in.get(header, headerFill, n);
                headerFill += n;
                if (headerFill == 8) {
                    headerFill = 0;
                    payloadLeft = ((header[4] & 0xffL) << 24) | ((header[5] & 0xff) << 16)
                            | ((header[6] & 0xff) << 8) | (header[7] & 0xff);
                    sink.header(header[0], payloadLeft);
                }
                continue;
            }
            int n = (int) Math.min(payloadLeft, in.remaining());
            int offset = in.arrayOffset() + in.position();
            in.position(in.position() + n);
            payloadLeft -= n;
            sink.payload(array, offset, n);
        }
    }

    /** Bytes of the current frame's payload not read yet. */
    long payloadLeft() {
        return payloadLeft;
    }

    /**
     * Whether the stream stands between two frames.
     *
     * @return true between frames
     */
    public boolean atFrameBoundary() {
        return headerFill == 0 && payloadLeft == 0;
    }
}
