package dev.sandboxkit.docker.internal.files;

import java.io.IOException;
import java.io.InputStream;

/**
 * The tar and file streams of both backends produce bytes in chunks: the one-byte read and the empty read are
 * answered here once, so each stream writes only {@link #readChunk}.
 */
abstract class ChunkedInput extends InputStream {

    @Override
    public final int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public final int read(byte[] b, int off, int len) throws IOException {
        checkOpen();
        return len == 0 ? 0 : readChunk(b, off, len);
    }

    /** Fails if the stream was closed and says so; most streams leave that to their source. */
    void checkOpen() throws IOException {
    }

    /** Reads at least one byte into {@code b}, or returns -1 at the end; {@code len} is positive. */
    abstract int readChunk(byte[] b, int off, int len) throws IOException;
}
