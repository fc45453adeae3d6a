-- The operator's audit log (GET /admin/audit): admin actions and sign-ins, newest first by (at, id). Names and short
-- facts only, never a secret. principal_id is the Principal an entry is about, when it is one (kept when the row goes).
CREATE TABLE audit_log (
    id           text PRIMARY KEY,
    at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor        text NOT NULL,
    action       text NOT NULL,
    target       text,
    principal_id text,
    detail       text
);
CREATE INDEX audit_log_at ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_actor ON audit_log (actor, at DESC, id DESC);
CREATE INDEX audit_log_action ON audit_log (action, at DESC, id DESC);

-- The last sign-in the identity bundle reported; null when none is known (a token-only user, or before this).
ALTER TABLE principals ADD COLUMN last_sign_in_at timestamptz;
CREATE INDEX principals_created ON principals (created_at DESC, id DESC);
