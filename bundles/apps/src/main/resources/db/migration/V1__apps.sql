-- A group is a desired state (an app manifest) and the inventory of what applying it made. Deleting a group is
-- terminal: its app deployments stay as history, and rollback refuses to bring it back.
CREATE TABLE app_groups (
    id                        text        PRIMARY KEY,
    space_id                  text        NOT NULL,
    name                      text        NOT NULL,
    desired                   text,
    metadata                  jsonb       NOT NULL DEFAULT '{}',
    source                    jsonb,
    provider                  text        NOT NULL DEFAULT 'workerd',
    env                       jsonb       NOT NULL DEFAULT '{}',
    current_app_deployment_id text,
    applied_at                timestamptz,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now(),
    UNIQUE (space_id, name)
);

-- What a group's applies made, one row per manifest object: written right after the object was made, so an apply
-- that died half way finds it (or adopts it by its deterministic name) and converges without duplicates.
CREATE TABLE app_group_objects (
    group_id    text        NOT NULL REFERENCES app_groups (id) ON DELETE CASCADE,
    kind        text        NOT NULL,
    key         text        NOT NULL,
    object_id   text        NOT NULL,
    fingerprint text        NOT NULL,
    detail      jsonb       NOT NULL DEFAULT '{}',
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, kind, key)
);

CREATE TABLE app_deployments (
    id            text        PRIMARY KEY,
    space_id      text        NOT NULL,
    group_id      text        NOT NULL,
    group_name    text        NOT NULL,
    status        text        NOT NULL,
    manifest_version text,
    hostnames     jsonb       NOT NULL DEFAULT '[]',
    rollback_of   text,
    source        jsonb       NOT NULL,
    snapshot      jsonb       NOT NULL,
    rollout       jsonb       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX app_deployments_space ON app_deployments (space_id, created_at DESC);
CREATE INDEX app_deployments_rolling ON app_deployments ((rollout ->> 'state')) WHERE rollout ->> 'state' = 'progressing';

-- The app launcher's record of a group that deployed an app: what the owner may rename, and the app's OAuth client
-- secret, sealed (the OAuth capability keeps only its hash).
CREATE TABLE apps (
    id            text        PRIMARY KEY,
    space_id      text        NOT NULL,
    owner_principal_id text   NOT NULL,
    group_id      text        NOT NULL UNIQUE,
    name          text        NOT NULL,
    display_name  text,
    description   text,
    icon          text,
    version       text,
    client_id     text,
    client_secret text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX apps_owner ON apps (owner_principal_id);
