package dev.sandboxkit;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One read of a background process's output stream ({@link SandboxProcess#output}). Offsets count the bytes
 * the process wrote to the stream since it started. The sandbox keeps only the newest
 * {@link ProcessOptions#retainedBytes()} of each stream: a read from an offset that fell out of that window
 * starts at {@link #firstAvailableOffset()} instead and says how much it skipped ({@link #droppedBytes()}).
 * Immutable.
 */
public final class ProcessOutput {
    private final ExecStream stream;
    private final byte[] bytes;
    private final long offset;
    private final long droppedBytes;
    private final long firstAvailableOffset;
    private final long endOffset;
    private final boolean complete;
    private final ProcessStatus status;

    private ProcessOutput(ExecStream stream, byte[] bytes, long offset, long droppedBytes, long firstAvailableOffset,
                          long endOffset, boolean complete, ProcessStatus status) {
        this.stream = Objects.requireNonNull(stream, "stream");
        this.bytes = bytes.clone();
        this.status = Objects.requireNonNull(status, "status");
        if (offset < 0 || droppedBytes < 0 || firstAvailableOffset < 0 || firstAvailableOffset > endOffset
                || offset + bytes.length > endOffset) {
            throw new IllegalArgumentException("inconsistent offsets: offset " + offset + ", " + bytes.length
                    + " bytes, dropped " + droppedBytes + ", available " + firstAvailableOffset + ".." + endOffset);
        }
        this.offset = offset;
        this.droppedBytes = droppedBytes;
        this.firstAvailableOffset = firstAvailableOffset;
        this.endOffset = endOffset;
        this.complete = complete;
    }

    /**
     * Creates a read result (for drivers and tests; the engine builds them from the sandbox's answer).
     *
     * @param stream               the stream read
     * @param bytes                the bytes read (copied)
     * @param offset               the stream offset of the first byte in {@code bytes}
     * @param droppedBytes         how many bytes between the requested offset and {@code offset} were no longer
     *                             retained
     * @param firstAvailableOffset the oldest offset the sandbox still holds
     * @param endOffset            how many bytes the process has written to the stream so far
     * @param complete             whether the stream is closed and this read reached its end
     * @param status               the process's status when it was read
     * @return the result
     */
    public static ProcessOutput of(ExecStream stream, byte[] bytes, long offset, long droppedBytes,
                                   long firstAvailableOffset, long endOffset, boolean complete, ProcessStatus status) {
        return new ProcessOutput(stream, Objects.requireNonNull(bytes, "bytes"), offset, droppedBytes,
                firstAvailableOffset, endOffset, complete, status);
    }

    /**
     * The stream read.
     *
     * @return the stream
     */
    public ExecStream stream() {
        return stream;
    }

    /**
     * The bytes read, at most the {@code maxBytes} asked for.
     *
     * @return a copy
     */
    public byte[] bytes() {
        return bytes.clone();
    }

    /**
     * The bytes read as UTF-8 text (invalid sequences replaced; a character split at the end of a read is too).
     *
     * @return the text
     */
    public String text() {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * How many bytes were read.
     *
     * @return the length of {@link #bytes()}
     */
    public int length() {
        return bytes.length;
    }

    /**
     * The stream offset of the first byte read: the requested offset, or {@link #firstAvailableOffset()} if that
     * was no longer retained.
     *
     * @return the offset
     */
    public long offset() {
        return offset;
    }

    /**
     * Where the next read continues: {@link #offset()} plus {@link #length()}.
     *
     * @return the next offset
     */
    public long nextOffset() {
        return offset + bytes.length;
    }

    /**
     * How many bytes from the requested offset on were dropped from the retained window before this read.
     *
     * @return 0 unless the read had to skip ahead
     */
    public long droppedBytes() {
        return droppedBytes;
    }

    /**
     * The oldest offset the sandbox still holds for this stream.
     *
     * @return the offset; greater than 0 once the process wrote more than the retained window
     */
    public long firstAvailableOffset() {
        return firstAvailableOffset;
    }

    /**
     * How many bytes the process has written to this stream so far, dropped ones included.
     *
     * @return the end offset
     */
    public long endOffset() {
        return endOffset;
    }

    /**
     * Whether no more output will come: the stream is closed (the process and what it started closed it) and this
     * read reached its end.
     *
     * @return {@code true} at the end of the stream
     */
    public boolean isComplete() {
        return complete;
    }

    /**
     * The process's status, read together with the bytes.
     *
     * @return the status
     */
    public ProcessStatus status() {
        return status;
    }

    @Override
    public String toString() {
        return "ProcessOutput[" + stream + " " + offset + ".." + nextOffset() + " of " + firstAvailableOffset + ".."
                + endOffset + (droppedBytes > 0 ? ", dropped " + droppedBytes : "") + (complete ? ", complete" : "")
                + ", " + status + "]";
    }
}
