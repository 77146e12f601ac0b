package dev.sandboxkit.store.jdbc;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Properties;

/**
 * A tiny pool for the embedded stores: opens connections straight from the JDBC driver and keeps a few idle
 * ones, so that calls do not pay for opening the database file. A connection that failed is closed, never
 * reused; one idle for more than a second is checked before reuse (an H2 AUTO_SERVER peer may have died).
 */
final class EmbeddedConnections implements ConnectionSource {
    private static final int MAX_IDLE = 8;
    private static final long VALIDATE_AFTER_NANOS = 1_000_000_000L;

    private final Driver driver;
    private final String url;
    private final Properties properties;
    private final ArrayDeque<Idle> idle = new ArrayDeque<>();
    private boolean closed;

    private record Idle(Connection connection, long since) {
    }

    EmbeddedConnections(Driver driver, String url, Properties properties) {
        this.driver = driver;
        this.url = url;
        this.properties = properties;
    }

    @Override
    public Connection get() throws SQLException {
        while (true) {
            Idle reuse;
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("the session store is closed");
                }
                reuse = idle.pollLast();
            }
            if (reuse == null) {
                return open();
            }
            if (System.nanoTime() - reuse.since() < VALIDATE_AFTER_NANOS || isValid(reuse.connection())) {
                return reuse.connection();
            }
            closeQuietly(reuse.connection());
        }
    }

    private Connection open() throws SQLException {
        return ConnectionSource.retryingBusy(() -> {
            Connection c = driver.connect(url, properties);
            if (c == null) {
                throw new SQLException("driver " + driver.getClass().getName() + " does not accept " + url, "08001");
            }
            return c;
        });
    }

    private static boolean isValid(Connection c) {
        try {
            return c.isValid(2);
        } catch (SQLException e) {
            return false;
        }
    }

    @Override
    public void release(Connection c, boolean broken) {
        if (!broken) {
            synchronized (this) {
                if (!closed && idle.size() < MAX_IDLE) {
                    idle.addLast(new Idle(c, System.nanoTime()));
                    return;
                }
            }
        }
        closeQuietly(c);
    }

    @Override
    public void close() {
        ArrayDeque<Idle> toClose;
        synchronized (this) {
            closed = true;
            toClose = new ArrayDeque<>(idle);
            idle.clear();
        }
        toClose.forEach(i -> closeQuietly(i.connection()));
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // closing a broken connection may fail; it is gone either way
        }
    }
}
