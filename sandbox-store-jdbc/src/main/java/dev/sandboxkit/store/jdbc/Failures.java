package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SessionStoreException;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Set;

/**
 * Maps {@link SQLException}s to {@link SessionStoreException}s: retryable when the database is unreachable
 * or the failure is transient (the same call may succeed later), not retryable otherwise. Messages name the
 * operation and the database, and carry only the first line of the driver's message (never its detail,
 * which for some drivers quotes row values).
 */
final class Failures {
    /** PostgreSQL: admin/crash shutdown, cannot connect now, serialization failure, deadlock, too many connections. */
    private static final Set<String> RETRYABLE_STATES = Set.of("57P01", "57P02", "57P03", "40001", "40P01", "53300",
            // H2: lock timeout, connection broken, database closed, concurrent update, database in use/exclusive.
            "HYT00", "90067", "90098", "90131", "90020", "90135");
    /** SQLite primary result codes: SQLITE_BUSY, SQLITE_LOCKED. */
    private static final Set<Integer> SQLITE_RETRYABLE_CODES = Set.of(5, 6);

    private Failures() {
    }

    static SessionStoreException map(String operation, String database, SQLException e) {
        boolean retryable = isRetryable(e);
        String state = e.getSQLState();
        return new SessionStoreException("session store " + operation + " failed on " + database + ": "
                + firstLine(e.getMessage()) + " (SQLState " + (state == null ? "none" : state) + ", "
                + (retryable ? "retryable" : "not retryable") + ")", e, retryable);
    }

    static boolean isRetryable(Throwable failure) {
        Set<Throwable> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); ) {
            if (t instanceof SQLTransientException || t instanceof SQLRecoverableException
                    || t instanceof ConnectException || t instanceof NoRouteToHostException
                    || t instanceof SocketTimeoutException || t instanceof UnknownHostException
                    || t instanceof SocketException) {
                return true;
            }
            if (t instanceof SQLException sql) {
                String state = sql.getSQLState();
                if (state != null && (state.startsWith("08") || RETRYABLE_STATES.contains(state))) {
                    return true;
                }
                if (isSqliteBusy(sql)) {
                    return true;
                }
                SQLException next = sql.getNextException();
                if (next != null && next != t.getCause() && seen.add(next) && isRetryable(next)) {
                    return true;
                }
            }
            t = t.getCause();
        }
        return false;
    }

    /** Whether SQLite answered busy or locked: another process holds the lock the call needs. */
    static boolean isSqliteBusy(SQLException e) {
        return isSqlite(e) && SQLITE_RETRYABLE_CODES.contains(e.getErrorCode() & 0xff);
    }

    private static boolean isSqlite(SQLException e) {
        return e.getClass().getName().startsWith("org.sqlite.");
    }

    /** The first line of a driver message, without H2's echo of the statement, at most 200 characters. */
    static String firstLine(String message) {
        if (message == null || message.isBlank()) {
            return "no message";
        }
        String line = message.strip();
        int nl = line.indexOf('\n');
        if (nl >= 0) {
            line = line.substring(0, nl).strip();
        }
        int sql = line.toLowerCase(Locale.ROOT).indexOf("; sql statement:");
        if (sql >= 0) {
            line = line.substring(0, sql);
        }
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }
}
