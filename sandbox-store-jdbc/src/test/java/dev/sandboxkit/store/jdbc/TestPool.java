package dev.sandboxkit.store.jdbc;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayDeque;
import java.util.logging.Logger;

/**
 * A minimal pooling DataSource for tests, standing in for HikariCP: closing a connection returns it to the
 * pool; connections are validated when borrowed, so a pool survives a database restart like a real one.
 */
final class TestPool implements DataSource, AutoCloseable {
    private final DataSource target;
    private final int maxIdle;
    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private boolean closed;

    TestPool(DataSource target, int maxIdle) {
        this.target = target;
        this.maxIdle = maxIdle;
    }

    @Override
    public Connection getConnection() throws SQLException {
        while (true) {
            Connection raw;
            synchronized (this) {
                raw = idle.pollLast();
            }
            if (raw == null) {
                return wrap(target.getConnection());
            }
            boolean valid;
            try {
                valid = raw.isValid(2);
            } catch (SQLException e) {
                valid = false;
            }
            if (valid) {
                return wrap(raw);
            }
            closeQuietly(raw);
        }
    }

    private Connection wrap(Connection raw) {
        boolean[] returned = new boolean[1];
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[]{Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        if (!returned[0]) {
                            returned[0] = true;
                            giveBack(raw);
                        }
                        return null;
                    }
                    if (method.getName().equals("isClosed") && returned[0]) {
                        return true;
                    }
                    try {
                        return method.invoke(raw, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private void giveBack(Connection raw) {
        try {
            if (!raw.isClosed() && !raw.getAutoCommit()) {
                raw.rollback();
                raw.setAutoCommit(true);
            }
        } catch (SQLException e) {
            closeQuietly(raw);
            return;
        }
        synchronized (this) {
            if (!closed && idle.size() < maxIdle) {
                idle.addLast(raw);
                return;
            }
        }
        closeQuietly(raw);
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            idle.forEach(TestPool::closeQuietly);
            idle.clear();
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // gone anyway
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
    }

    @Override
    public void setLoginTimeout(int seconds) {
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }
}
