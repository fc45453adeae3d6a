-- What workspace search knows of every item of every IndexSource: its text (searched with PostgreSQL's full text), a
-- hash of it (an unchanged item is not embedded again) and its embedding (float32, little-endian), from which each
-- workspace's Lucene index is rebuilt when it is lost.
CREATE TABLE search_items (
    kind        text NOT NULL,
    item_id     text NOT NULL,
    space_id    text NOT NULL,
    parent_id   text,
    title       text,
    body        text NOT NULL,
    hash        text NOT NULL,
    embedding   bytea,
    changed_at  timestamptz NOT NULL,
    indexed_at  timestamptz NOT NULL DEFAULT now(),
    search      tsvector GENERATED ALWAYS AS (to_tsvector('english', coalesce(title, '') || ' ' || body)) STORED,
    PRIMARY KEY (kind, item_id)
);
CREATE INDEX search_items_space ON search_items (space_id, kind);
CREATE INDEX search_items_pending ON search_items (space_id) WHERE embedding IS NULL;
CREATE INDEX search_items_fts ON search_items USING gin (search);
CREATE INDEX search_items_parent ON search_items (parent_id) WHERE parent_id IS NOT NULL;

-- Where the indexer is in each source's changes: the (changed_at, id) of the last item it stored.
CREATE TABLE search_cursors (
    kind      text PRIMARY KEY,
    since     timestamptz NOT NULL,
    after_id  text NOT NULL
);
