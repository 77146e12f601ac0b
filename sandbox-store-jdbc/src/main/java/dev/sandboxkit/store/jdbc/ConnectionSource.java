package dev.sandboxkit.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** Where the store gets connections: a caller's DataSource, or a small pool for an embedded database. */
interface ConnectionSource extends AutoCloseable {

    /** A connection for one store call. */
    Connection get() throws SQLException;

    /** Gives the connection back; {@code broken} when a statement on it failed. */
    void release(Connection c, boolean broken);

    /** Closes what this source opened itself. */
    @Override
    void close();
}
