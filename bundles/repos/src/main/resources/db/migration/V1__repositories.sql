-- Repositories of workspaces. The workspace is known by id only: who owns it is the kernel's business.
CREATE TABLE repositories (
    id             text PRIMARY KEY,
    space_id       text NOT NULL,
    name           text NOT NULL,
    description    text NOT NULL DEFAULT '',
    visibility     text NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private')),
    default_branch text NOT NULL DEFAULT 'main',
    is_default     boolean NOT NULL DEFAULT false,
    forked_from    text,
    allow_force_push boolean NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (space_id, name)
);
-- the workspace's default repository (POST /api/spaces/:spaceId/init-repo), which .../git/* acts on
CREATE UNIQUE INDEX repositories_one_default ON repositories (space_id) WHERE is_default;

CREATE TABLE repository_stars (
    repo_id      text NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    principal_id text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, principal_id)
);
CREATE INDEX repository_stars_principal ON repository_stars (principal_id, created_at);
