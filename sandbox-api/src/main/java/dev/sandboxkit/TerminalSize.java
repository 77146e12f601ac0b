package dev.sandboxkit;

/**
 * The size of a pseudo-terminal in character cells, as {@code stty size} reports it (rows first there).
 *
 * @param columns characters per line, 1 to 65535
 * @param rows    lines, 1 to 65535
 */
public record TerminalSize(int columns, int rows) {
    /** The classic 80 by 24 terminal. */
    public static final TerminalSize DEFAULT = new TerminalSize(80, 24);

    /** The kernel's window size fields are unsigned 16-bit. */
    private static final int MAX = 65535;

    /**
     * Validates the size.
     *
     * @throws IllegalArgumentException if either dimension is outside 1 to 65535
     */
    public TerminalSize {
        if (columns < 1 || columns > MAX || rows < 1 || rows > MAX) {
            throw new IllegalArgumentException("terminal size must be 1.." + MAX + " columns and rows, got "
                    + columns + "x" + rows);
        }
    }

    /**
     * A size.
     *
     * @param columns characters per line
     * @param rows    lines
     * @return the size
     */
    public static TerminalSize of(int columns, int rows) {
        return new TerminalSize(columns, rows);
    }

    @Override
    public String toString() {
        return columns + "x" + rows;
    }
}
