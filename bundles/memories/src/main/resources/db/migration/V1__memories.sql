CREATE TABLE memories (
    id         text PRIMARY KEY,
    space_id   text NOT NULL,
    content    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    search     tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
);
CREATE INDEX memories_space ON memories (space_id, created_at DESC, id);
CREATE INDEX memories_search ON memories USING gin (search);
