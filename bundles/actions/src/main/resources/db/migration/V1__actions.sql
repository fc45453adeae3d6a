-- Workflow files of repositories' default branches, as last read (by a push, a PUT or a sync).
CREATE TABLE action_workflows (
    repo_id         text        NOT NULL,
    path            text        NOT NULL,
    name            text        NOT NULL,
    content         text        NOT NULL,
    commit_id       text,
    error           text,
    error_line      integer,
    scheduled_until timestamptz,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, path)
);

CREATE TABLE action_runs (
    id                text        PRIMARY KEY,
    repo_id           text        NOT NULL,
    number            integer     NOT NULL,
    workflow_path     text        NOT NULL,
    name              text        NOT NULL,
    event             text        NOT NULL,
    ref               text,
    commit_id         text        NOT NULL,
    actor_id          text        NOT NULL,
    principal_id      text        NOT NULL,
    from_fork         boolean     NOT NULL DEFAULT false,
    inputs            jsonb       NOT NULL DEFAULT '{}',
    workflow          text        NOT NULL,
    concurrency_group text,
    cancel_in_progress boolean    NOT NULL DEFAULT false,
    status            text        NOT NULL,
    conclusion        text,
    reason            text,
    attempt           integer     NOT NULL DEFAULT 1,
    last_event        bigint      NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    completed_at      timestamptz,
    UNIQUE (repo_id, number)
);
CREATE INDEX action_runs_repo ON action_runs (repo_id, number DESC);
CREATE INDEX action_runs_group ON action_runs (repo_id, concurrency_group) WHERE status <> 'completed';

CREATE TABLE action_jobs (
    id            text        PRIMARY KEY,
    run_id        text        NOT NULL REFERENCES action_runs (id) ON DELETE CASCADE,
    seq           bigserial,
    job_key       text        NOT NULL,
    name          text        NOT NULL,
    matrix        jsonb,
    needs         jsonb       NOT NULL DEFAULT '[]',
    runs_on       text        NOT NULL,
    status        text        NOT NULL,
    conclusion    text,
    reason        text,
    attempt       integer     NOT NULL DEFAULT 1,
    outputs       jsonb       NOT NULL DEFAULT '{}',
    steps         jsonb       NOT NULL DEFAULT '[]',
    instance_id   text,
    heartbeat_at  timestamptz,
    log_key       text,
    log_bytes     bigint      NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    completed_at  timestamptz
);
CREATE INDEX action_jobs_run ON action_jobs (run_id, seq);
CREATE INDEX action_jobs_queued ON action_jobs (seq) WHERE status = 'queued';

-- What subscribers of a run's stream get: job and step changes, and log output in chunks.
CREATE TABLE action_events (
    run_id     text        NOT NULL REFERENCES action_runs (id) ON DELETE CASCADE,
    position   bigint      NOT NULL,
    type       text        NOT NULL,
    data       jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, position)
);

CREATE TABLE action_secrets (
    repo_id    text        NOT NULL,
    name       text        NOT NULL,
    key_id     text        NOT NULL,
    nonce      bytea       NOT NULL,
    ciphertext bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, name)
);

CREATE TABLE action_artifacts (
    id         text        PRIMARY KEY,
    repo_id    text        NOT NULL,
    run_id     text        NOT NULL REFERENCES action_runs (id) ON DELETE CASCADE,
    job_id     text,
    name       text        NOT NULL,
    size       bigint      NOT NULL,
    files      integer     NOT NULL,
    blob_key   text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    UNIQUE (run_id, name)
);

-- A cache belongs to the ref of the run that saved it (a fork's pull request saves under a scope of its own), and a
-- run restores its own ref's caches and its default branch's: a pull request from a fork cannot plant a cache that
-- a run of the repository's own branches, with its secrets, would restore.
CREATE TABLE action_caches (
    repo_id      text        NOT NULL,
    scope        text        NOT NULL,
    key          text        NOT NULL,
    blob_key     text        NOT NULL,
    size         bigint      NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, scope, key)
);
