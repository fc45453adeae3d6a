CREATE TABLE principals (
    id                  text PRIMARY KEY,
    provider            text NOT NULL,
    subject             text NOT NULL,
    username            text UNIQUE,
    name                text,
    email               text,
    picture             text,
    status              text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    setup_completed     boolean NOT NULL DEFAULT false,
    auto_update_enabled boolean NOT NULL DEFAULT true,
    private_account     boolean NOT NULL DEFAULT false,
    activity_visibility text NOT NULL DEFAULT 'public' CHECK (activity_visibility IN ('public', 'followers', 'private')),
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (provider, subject)
);

CREATE TABLE workspaces (
    id                 text PRIMARY KEY,
    owner_principal_id text NOT NULL REFERENCES principals (id),
    name               text NOT NULL,
    slug               text NOT NULL UNIQUE,
    description        text NOT NULL DEFAULT '',
    is_default         boolean NOT NULL DEFAULT false,
    security_posture   text NOT NULL DEFAULT 'standard' CHECK (security_posture IN ('standard', 'restricted_egress')),
    status             text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    ai_model           text,
    ai_provider        text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX workspaces_one_default ON workspaces (owner_principal_id) WHERE is_default;
CREATE INDEX workspaces_owner ON workspaces (owner_principal_id, created_at);

-- Written by the kernel when a workspace is created; access needs it to agree with the owner column.
CREATE TABLE owner_witnesses (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    principal_id text NOT NULL REFERENCES principals (id),
    status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, principal_id)
);

CREATE TABLE personal_access_tokens (
    id           text PRIMARY KEY,
    principal_id text NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
    name         text NOT NULL,
    token_hash   bytea NOT NULL UNIQUE,
    token_prefix text NOT NULL,
    scopes       text NOT NULL,
    expires_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX personal_access_tokens_principal ON personal_access_tokens (principal_id, created_at);

CREATE TABLE workspace_common_env (
    workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text NOT NULL,
    value        text NOT NULL,
    secret       boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, name)
);
