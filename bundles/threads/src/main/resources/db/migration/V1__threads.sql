CREATE TABLE threads (
    id             text PRIMARY KEY,
    space_id       text NOT NULL,
    title          text NOT NULL,
    locale         text,
    status         text NOT NULL DEFAULT 'active',
    context_window integer,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    search         tsvector GENERATED ALWAYS AS (to_tsvector('english', title)) STORED
);
CREATE INDEX threads_space ON threads (space_id, updated_at DESC, id);
CREATE INDEX threads_search ON threads USING gin (search);

CREATE TABLE thread_messages (
    seq        bigserial PRIMARY KEY,
    id         text NOT NULL UNIQUE,
    thread_id  text NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    role       text NOT NULL,
    content    text NOT NULL,
    run_id     text,
    created_at timestamptz NOT NULL DEFAULT now(),
    search     tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
);
CREATE INDEX thread_messages_thread ON thread_messages (thread_id, seq);
CREATE INDEX thread_messages_search ON thread_messages USING gin (search);

CREATE TABLE thread_shares (
    id            text PRIMARY KEY,
    thread_id     text NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    token_hash    text NOT NULL UNIQUE,
    token_prefix  text NOT NULL,
    mode          text NOT NULL,
    password_hash text,
    expires_at    timestamptz,
    revoked_at    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX thread_shares_thread ON thread_shares (thread_id, created_at);
