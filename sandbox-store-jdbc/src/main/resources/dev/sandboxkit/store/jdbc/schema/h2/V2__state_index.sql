-- sandboxkit session store, schema version 2, H2: the engine pages through the sessions of one state in id
-- order (SessionStore.findByState), so the (state, last_activity) index gives way to (state, session_id).
-- Same format as V1; idempotent (H2 commits each DDL statement by itself).

DROP INDEX IF EXISTS sandboxkit_sessions_state_activity;

CREATE INDEX IF NOT EXISTS sandboxkit_sessions_state_id ON sandboxkit_sessions (state, session_id);

MERGE INTO sandboxkit_schema_version (version, description) KEY (version) VALUES (2, 'state_index');
