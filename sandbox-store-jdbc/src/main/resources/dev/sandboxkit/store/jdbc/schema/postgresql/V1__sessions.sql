-- sandboxkit session store, schema version 1, PostgreSQL.
-- The library runs exactly this file (under pg_advisory_xact_lock, in one transaction) when auto-migration
-- is on. To manage the schema yourself, run it once per database/schema; it is idempotent.
-- Format: one statement per ';' at the end of a line; lines starting with '--' are comments.
--
-- Encodings: instants are UTC epoch milliseconds (BIGINT); attributes are the map as
-- application/x-www-form-urlencoded UTF-8 text with sorted keys (empty map = empty string);
-- state is the SessionState name (ACTIVE, SUSPENDED, DESTROYING, DESTROYED).

CREATE TABLE IF NOT EXISTS sandboxkit_schema_version (
    version      INTEGER     NOT NULL PRIMARY KEY,
    description  TEXT        NOT NULL,
    installed_at TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE IF NOT EXISTS sandboxkit_sessions (
    session_id         TEXT    NOT NULL PRIMARY KEY,
    driver             TEXT    NOT NULL,
    state              TEXT    NOT NULL,
    sandbox_id         TEXT,
    workspace          TEXT    NOT NULL,
    spec               TEXT    NOT NULL,
    spec_fingerprint   TEXT    NOT NULL,
    ephemeral          BOOLEAN NOT NULL,
    created_at         BIGINT  NOT NULL,
    last_activity      BIGINT  NOT NULL,
    sandbox_started_at BIGINT,
    owner              TEXT,
    lease_expiry       BIGINT,
    version            BIGINT  NOT NULL,
    attributes         TEXT    NOT NULL
);

CREATE INDEX IF NOT EXISTS sandboxkit_sessions_owner ON sandboxkit_sessions (owner);

CREATE INDEX IF NOT EXISTS sandboxkit_sessions_state_activity ON sandboxkit_sessions (state, last_activity);

INSERT INTO sandboxkit_schema_version (version, description) VALUES (1, 'sessions') ON CONFLICT (version) DO NOTHING;
