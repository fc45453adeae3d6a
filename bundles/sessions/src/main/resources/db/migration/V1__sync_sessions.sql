-- File-sync sessions: a branch of a repository checked out into a work tree under <data>/sessions/<id>/, edited over
-- HTTP and committed as one commit when the session stops. The repository is known by id only: the repos bundle owns
-- it. The work tree lives on the disk of the server that started the session; this row is its lifecycle.
CREATE TABLE sync_sessions (
    id                text PRIMARY KEY,
    space_id          text NOT NULL,
    repo_id           text NOT NULL,
    principal_id      text NOT NULL,
    branch            text NOT NULL,
    -- the commit the work tree was checked out from; null for a branch that has no commit yet
    base_commit       text,
    -- active | stopped | discarded | expired
    state             text NOT NULL,
    idle_timeout_s    integer NOT NULL,
    last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
    expires_at        timestamptz NOT NULL,
    -- the commit the last stop made, null when it had nothing to commit
    commit_id         text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    ended_at          timestamptz,
    CHECK (state IN ('active', 'stopped', 'discarded', 'expired'))
);
CREATE INDEX sync_sessions_expiring ON sync_sessions (expires_at) WHERE state = 'active';
CREATE INDEX sync_sessions_by_space ON sync_sessions (space_id, created_at DESC);
