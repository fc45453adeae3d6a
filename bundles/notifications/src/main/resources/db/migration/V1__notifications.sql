-- the last stream position of each Principal: a post takes the next one under this row's lock, so a Principal's
-- notifications commit in position order and a stream resumes after a Last-Event-ID without gaps or duplicates
CREATE TABLE notification_streams (
    principal_id text PRIMARY KEY,
    last_seq     bigint NOT NULL
);
CREATE TABLE notifications (
    id           text PRIMARY KEY,
    principal_id text NOT NULL,
    seq          bigint NOT NULL,
    space_id     text,
    type         text NOT NULL,
    title        text NOT NULL,
    body         text,
    link         text,
    data         jsonb NOT NULL DEFAULT '{}',
    silent       boolean NOT NULL DEFAULT false,
    read_at      timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (principal_id, seq)
);
CREATE INDEX notifications_unread ON notifications (principal_id, type) WHERE read_at IS NULL;
CREATE TABLE notification_settings (
    principal_id text PRIMARY KEY,
    enabled      boolean NOT NULL DEFAULT true,
    types        jsonb NOT NULL DEFAULT '{}',
    muted_until  timestamptz,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
