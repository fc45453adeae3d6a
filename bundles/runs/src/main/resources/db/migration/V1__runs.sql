CREATE TABLE runs (
    id                     text PRIMARY KEY,
    thread_id              text NOT NULL,
    space_id               text NOT NULL,
    requester_principal_id text,
    status                 text NOT NULL DEFAULT 'queued',
    provider               text,
    model                  text,
    error                  text,
    instance_id            text,
    cancel_requested       boolean NOT NULL DEFAULT false,
    last_event_id          bigint NOT NULL DEFAULT 0,
    created_at             timestamptz NOT NULL DEFAULT now(),
    started_at             timestamptz,
    finished_at            timestamptz
);
CREATE INDEX runs_thread ON runs (thread_id, created_at DESC, id);
CREATE INDEX runs_queued ON runs (created_at, id) WHERE status = 'queued';
CREATE INDEX runs_running ON runs (instance_id) WHERE status = 'running';

CREATE TABLE run_events (
    run_id     text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    id         bigint NOT NULL,
    type       text NOT NULL,
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, id)
);

CREATE TABLE run_artifacts (
    id           text PRIMARY KEY,
    run_id       text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name         text NOT NULL,
    content_type text NOT NULL,
    content      text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX run_artifacts_run ON run_artifacts (run_id, created_at, id);
