-- Repositories whose default branch is indexed for semantic search (POST /api/repos/:id/semantic-index), and the
-- pieces of their files with their embeddings (the blob id: a file whose blob is unchanged is not embedded again).
CREATE TABLE search_repo_state (
    repo_id     text PRIMARY KEY,
    space_id    text NOT NULL,
    branch      text NOT NULL,
    commit      text,
    files       integer NOT NULL DEFAULT 0,
    chunks      integer NOT NULL DEFAULT 0,
    indexed_at  timestamptz,
    error       text
);

CREATE TABLE search_repo_chunks (
    repo_id     text NOT NULL,
    path        text COLLATE "C" NOT NULL,
    blob        text NOT NULL,
    chunk       integer NOT NULL,
    start_line  integer NOT NULL,
    end_line    integer NOT NULL,
    symbol      text,
    body        text NOT NULL,
    embedding   bytea NOT NULL,
    PRIMARY KEY (repo_id, path, chunk)
);
