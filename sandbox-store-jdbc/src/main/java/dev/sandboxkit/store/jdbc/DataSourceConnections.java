package dev.sandboxkit.store.jdbc;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;

/** Connections from the caller's DataSource (their pool): closing one returns it. The DataSource stays open. */
final class DataSourceConnections implements ConnectionSource {
    private final DataSource dataSource;

    DataSourceConnections(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public Connection get() throws SQLException {
        return ConnectionSource.retryingBusy(dataSource::getConnection);
    }

    @Override
    public void release(Connection c, boolean broken) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // nothing to do: the pool or driver has given up on it
        }
    }

    @Override
    public void close() {
        // the DataSource belongs to the caller
    }
}
