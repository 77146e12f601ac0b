-- sandboxkit session store, schema version 1, H2 2.x.
-- The library runs exactly this file when auto-migration is on. H2 commits every DDL statement on its own,
-- so every statement here is idempotent: two processes may run it at once. To manage the schema yourself,
-- run it once per database.
-- Format: one statement per ';' at the end of a line; lines starting with '--' are comments.
--
-- Encodings: instants are UTC epoch milliseconds (BIGINT); attributes are the map as
-- application/x-www-form-urlencoded UTF-8 text with sorted keys (empty map = empty string);
-- state is the SessionState name (ACTIVE, SUSPENDED, DESTROYING, DESTROYED). CHARACTER VARYING holds up to 1,000,000
-- characters in H2.

CREATE TABLE IF NOT EXISTS sandboxkit_schema_version (
    version      INTEGER                  NOT NULL PRIMARY KEY,
    description  CHARACTER VARYING(200)   NOT NULL,
    installed_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS sandboxkit_sessions (
    session_id         CHARACTER VARYING NOT NULL PRIMARY KEY,
    driver             CHARACTER VARYING NOT NULL,
    state              CHARACTER VARYING(16) NOT NULL,
    sandbox_id         CHARACTER VARYING,
    workspace          CHARACTER VARYING NOT NULL,
    spec               CHARACTER VARYING NOT NULL,
    spec_fingerprint   CHARACTER VARYING NOT NULL,
    ephemeral          BOOLEAN NOT NULL,
    created_at         BIGINT  NOT NULL,
    last_activity      BIGINT  NOT NULL,
    sandbox_started_at BIGINT,
    owner              CHARACTER VARYING,
    lease_expiry       BIGINT,
    version            BIGINT  NOT NULL,
    attributes         CHARACTER VARYING NOT NULL
);

CREATE INDEX IF NOT EXISTS sandboxkit_sessions_owner ON sandboxkit_sessions (owner);

CREATE INDEX IF NOT EXISTS sandboxkit_sessions_state_activity ON sandboxkit_sessions (state, last_activity);

MERGE INTO sandboxkit_schema_version (version, description) KEY (version) VALUES (1, 'sessions');
