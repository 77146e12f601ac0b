-- sandboxkit session store, schema version 1, SQLite 3.35+.
-- The library runs exactly this file (in one BEGIN IMMEDIATE transaction) when auto-migration is on. To
-- manage the schema yourself, run it once per database file; it is idempotent.
-- Format: one statement per ';' at the end of a line; lines starting with '--' are comments.
--
-- Encodings: instants are UTC epoch milliseconds (INTEGER); attributes are the map as
-- application/x-www-form-urlencoded UTF-8 text with sorted keys (empty map = empty string);
-- state is the SessionState name (ACTIVE, SUSPENDED, DESTROYING, DESTROYED); ephemeral is 0 or 1.

CREATE TABLE IF NOT EXISTS sandboxkit_schema_version (
    version      INTEGER NOT NULL PRIMARY KEY,
    description  TEXT    NOT NULL,
    installed_at TEXT    NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE IF NOT EXISTS sandboxkit_sessions (
    session_id         TEXT    NOT NULL PRIMARY KEY,
    driver             TEXT    NOT NULL,
    state              TEXT    NOT NULL,
    sandbox_id         TEXT,
    workspace          TEXT    NOT NULL,
    spec               TEXT    NOT NULL,
    spec_fingerprint   TEXT    NOT NULL,
    ephemeral          INTEGER NOT NULL,
    created_at         INTEGER NOT NULL,
    last_activity      INTEGER NOT NULL,
    sandbox_started_at INTEGER,
    owner              TEXT,
    lease_expiry       INTEGER,
    version            INTEGER NOT NULL,
    attributes         TEXT    NOT NULL
);

CREATE INDEX IF NOT EXISTS sandboxkit_sessions_owner ON sandboxkit_sessions (owner);

CREATE INDEX IF NOT EXISTS sandboxkit_sessions_state_activity ON sandboxkit_sessions (state, last_activity);

INSERT OR IGNORE INTO sandboxkit_schema_version (version, description) VALUES (1, 'sessions');
