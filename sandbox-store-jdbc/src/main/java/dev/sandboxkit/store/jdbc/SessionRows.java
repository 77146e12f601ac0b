package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.SessionStoreException;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** How a {@link SessionRecord} maps onto a row of the sessions table: column order, millisecond instants. */
final class SessionRows {
    private SessionRows() {
    }

    static List<SessionRecord> readAll(PreparedStatement ps, String database) throws SQLException {
        List<SessionRecord> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(read(rs, database));
            }
        }
        return out;
    }

    static SessionRecord read(ResultSet rs, String database) throws SQLException {
        String id = rs.getString(1);
        String state = rs.getString(3);
        SessionState parsedState;
        Map<String, String> attributes;
        try {
            parsedState = SessionState.valueOf(state);
            attributes = AttributeCodec.decode(rs.getString(15));
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new SessionStoreException("session store row for session " + id + " in " + database
                    + " is unreadable (state " + state + "): " + e.getMessage(), e, false);
        }
        return SessionRecord.builder().sessionId(id).driver(rs.getString(2)).state(parsedState)
                .sandboxId(rs.getString(4)).workspace(rs.getString(5)).spec(rs.getString(6))
                .specFingerprint(rs.getString(7)).ephemeral(rs.getBoolean(8))
                .createdAt(Instant.ofEpochMilli(rs.getLong(9))).lastActivity(Instant.ofEpochMilli(rs.getLong(10)))
                .sandboxStartedAt(instant(rs, 11)).owner(rs.getString(12)).leaseExpiry(instant(rs, 13))
                .version(rs.getLong(14)).attributes(attributes).build();
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        long value = rs.getLong(column);
        return rs.wasNull() ? null : Instant.ofEpochMilli(value);
    }

    private static long millis(Instant instant) {
        return instant.toEpochMilli();
    }

    static void setMillis(PreparedStatement ps, int index, Instant instant) throws SQLException {
        if (instant == null) {
            ps.setNull(index, Types.BIGINT);
        } else {
            ps.setLong(index, instant.toEpochMilli());
        }
    }

    private static Instant truncate(Instant instant) {
        return instant == null ? null : Instant.ofEpochMilli(instant.toEpochMilli());
    }

    /** The record as the database holds it: every instant at millisecond precision. */
    static SessionRecord truncated(SessionRecord r) {
        return SessionRecord.builder().sessionId(r.sessionId()).driver(r.driver()).state(r.state())
                .sandboxId(r.sandboxId()).workspace(r.workspace()).spec(r.spec())
                .specFingerprint(r.specFingerprint()).ephemeral(r.ephemeral()).createdAt(truncate(r.createdAt()))
                .lastActivity(truncate(r.lastActivity())).sandboxStartedAt(truncate(r.sandboxStartedAt()))
                .owner(r.owner()).leaseExpiry(truncate(r.leaseExpiry())).version(r.version())
                .attributes(r.attributes()).build();
    }

    /** Binds the columns from driver to lease expiry, in table order; returns the next parameter index. */
    static int bindFields(PreparedStatement ps, int first, SessionRecord record) throws SQLException {
        int i = first;
        ps.setString(i++, record.driver());
        ps.setString(i++, record.state().name());
        ps.setString(i++, record.sandboxId());
        ps.setString(i++, record.workspace());
        ps.setString(i++, record.spec());
        ps.setString(i++, record.specFingerprint());
        ps.setBoolean(i++, record.ephemeral());
        ps.setLong(i++, millis(record.createdAt()));
        ps.setLong(i++, millis(record.lastActivity()));
        setMillis(ps, i++, record.sandboxStartedAt());
        ps.setString(i++, record.owner());
        setMillis(ps, i++, record.leaseExpiry());
        return i;
    }
}
