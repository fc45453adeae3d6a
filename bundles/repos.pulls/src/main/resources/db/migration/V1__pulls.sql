-- Pull requests of repositories, numbered per repository. Repositories are known by id only: the repos bundle owns them.
CREATE TABLE pull_requests (
    id            text PRIMARY KEY,
    repo_id       text NOT NULL,
    number        integer NOT NULL,
    title         text NOT NULL,
    body          text NOT NULL DEFAULT '',
    head_repo_id  text NOT NULL,
    head_branch   text NOT NULL,
    base_branch   text NOT NULL,
    state         text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closed', 'merged')),
    draft         boolean NOT NULL DEFAULT false,
    author_id     text NOT NULL,
    head_commit   text NOT NULL,
    base_commit   text NOT NULL,
    -- clean, conflicts, or null while it is being (re)computed
    mergeable     text CHECK (mergeable IN ('clean', 'conflicts')),
    merge_commit  text,
    merged_by     text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    closed_at     timestamptz,
    merged_at     timestamptz,
    UNIQUE (repo_id, number)
);
CREATE INDEX pull_requests_by_repo ON pull_requests (repo_id, state, number DESC);
CREATE INDEX pull_requests_by_head ON pull_requests (head_repo_id, head_branch) WHERE state = 'open';
CREATE INDEX pull_requests_by_base ON pull_requests (repo_id, base_branch) WHERE state = 'open';

CREATE TABLE pull_reviews (
    id          text PRIMARY KEY,
    pull_id     text NOT NULL REFERENCES pull_requests (id) ON DELETE CASCADE,
    author_id   text NOT NULL,
    state       text NOT NULL CHECK (state IN ('approved', 'changes_requested', 'commented')),
    body        text NOT NULL DEFAULT '',
    commit_id   text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pull_reviews_by_pull ON pull_reviews (pull_id, created_at);

-- A comment: top-level (no path), or inline on a line of a file at the head commit it was made on.
CREATE TABLE pull_comments (
    id          text PRIMARY KEY,
    pull_id     text NOT NULL REFERENCES pull_requests (id) ON DELETE CASCADE,
    review_id   text REFERENCES pull_reviews (id) ON DELETE CASCADE,
    author_id   text NOT NULL,
    body        text NOT NULL,
    path        text,
    line        integer,
    commit_id   text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pull_comments_by_pull ON pull_comments (pull_id, created_at);

-- The three-way merge check of a (base, head) commit pair: the same pair always merges the same way.
CREATE TABLE pull_merge_checks (
    repo_id      text NOT NULL,
    base_commit  text NOT NULL,
    head_commit  text NOT NULL,
    clean        boolean NOT NULL,
    conflicts    jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, base_commit, head_commit)
);
