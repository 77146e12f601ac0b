-- sandboxkit session store, schema version 2, PostgreSQL: the engine pages through the sessions of one state
-- in id order (SessionStore.findByState), so the (state, last_activity) index gives way to (state, session_id).
-- Same format and locking as V1; idempotent.

DROP INDEX IF EXISTS sandboxkit_sessions_state_activity;

CREATE INDEX IF NOT EXISTS sandboxkit_sessions_state_id ON sandboxkit_sessions (state, session_id);

INSERT INTO sandboxkit_schema_version (version, description) VALUES (2, 'state_index') ON CONFLICT (version) DO NOTHING;
