-- Where a repository's history comes from when it is not its own: the URL it was imported from (or that fetch-remote
-- named last); a fork's upstream is its forked_from, and its row holds only how its last fetch went.
CREATE TABLE repository_upstreams (
    repo_id       text PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    url           text,
    partial       boolean NOT NULL DEFAULT false,
    last_fetch_at timestamptz,
    last_result   text CHECK (last_result IN ('ok', 'failed')),
    last_error    text
);
