-- Releases of repositories. The repository is known by id only: the repos bundle owns it, and this bundle removes its
-- releases (rows and assets) when it hears the repository was deleted.
CREATE TABLE releases (
    id             text PRIMARY KEY,
    repo_id        text NOT NULL,
    tag            text NOT NULL,
    name           text NOT NULL DEFAULT '',
    body           text NOT NULL DEFAULT '',
    draft          boolean NOT NULL DEFAULT false,
    prerelease     boolean NOT NULL DEFAULT false,
    -- what the tag is made at when it does not exist yet: a branch, or a commit id
    target         text NOT NULL,
    -- the commit the tag names, once there is a tag
    commit_id      text,
    author_id      text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    published_at   timestamptz,
    UNIQUE (repo_id, tag)
);
CREATE INDEX releases_by_repo ON releases (repo_id, created_at DESC, id DESC);
CREATE INDEX releases_latest ON releases (repo_id, published_at DESC, id DESC) WHERE NOT draft AND NOT prerelease;

CREATE TABLE release_assets (
    id             text PRIMARY KEY,
    release_id     text NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    repo_id        text NOT NULL,
    name           text NOT NULL,
    content_type   text NOT NULL,
    size           bigint NOT NULL,
    sha256         text NOT NULL,
    blob_key       text NOT NULL,
    uploader_id    text NOT NULL,
    download_count bigint NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (release_id, name)
);
CREATE INDEX release_assets_by_blob ON release_assets (blob_key);
CREATE INDEX release_assets_by_repo ON release_assets (repo_id);
