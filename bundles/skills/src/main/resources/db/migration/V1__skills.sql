-- A workspace's own skills (the official catalog ships in the bundle). tools: comma-separated tool names.
CREATE TABLE skills (
    id           text PRIMARY KEY,
    space_id     text NOT NULL,
    name         text NOT NULL,
    description  text NOT NULL,
    instructions text NOT NULL,
    tools        text NOT NULL DEFAULT '',
    enabled      boolean NOT NULL DEFAULT true,
    source       text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT skills_name_unique UNIQUE (space_id, name)
);
