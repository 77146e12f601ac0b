package dev.sandboxkit.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** Where the store gets connections: a caller's DataSource, or a small pool for an embedded database. */
interface ConnectionSource extends AutoCloseable {
    /** How long opening a connection retries SQLite busy answers. */
    long OPEN_BUSY_MILLIS = 10_000;

    /** Opens one connection. */
    @FunctionalInterface
    interface Opener {
        Connection open() throws SQLException;
    }

    /**
     * Opens a connection, retrying SQLite busy answers for up to {@value #OPEN_BUSY_MILLIS} ms. SQLite applies
     * its pragmas while opening, and switching a new file to WAL needs a lock that another connection opening
     * it at the same moment may hold; the busy timeout does not cover that step. Other failures are thrown.
     */
    static Connection retryingBusy(Opener opener) throws SQLException {
        long deadline = System.nanoTime() + OPEN_BUSY_MILLIS * 1_000_000L;
        for (long pause = 5; ; pause = Math.min(pause * 2, 200)) {
            try {
                return opener.open();
            } catch (SQLException e) {
                if (!Failures.isSqliteBusy(e) || System.nanoTime() - deadline >= 0) {
                    throw e;
                }
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** A connection for one store call. */
    Connection get() throws SQLException;

    /** Gives the connection back; {@code broken} when a statement on it failed. */
    void release(Connection c, boolean broken);

    /** Closes what this source opened itself. */
    @Override
    void close();
}
