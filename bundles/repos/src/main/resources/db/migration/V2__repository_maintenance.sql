-- When each repository was last maintained (JGit GC with bitmaps), and how it went.
CREATE TABLE repository_maintenance (
    repo_id      text PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    last_run_at  timestamptz NOT NULL,
    duration_ms  bigint NOT NULL,
    reason       text NOT NULL,
    error        text,
    packs        integer,
    bitmaps      integer,
    loose_objects bigint
);
