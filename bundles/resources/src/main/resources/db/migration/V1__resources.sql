-- Resources and what the core keeps about them; a resource's data is its provider's (resource.api).
-- No foreign key to the kernel's tables: capabilities never touch each other's tables; the owner scope is the kernel's.
CREATE TABLE resources (
    id          text PRIMARY KEY,
    space_id    text NOT NULL,
    name        text NOT NULL,
    type        text NOT NULL,
    backend     text NOT NULL,
    config      text NOT NULL,      -- JSON object, validated against the provider's ConfigSchema
    state       text NOT NULL,      -- JSON object the provider returned from provision
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    CONSTRAINT resources_space_name UNIQUE (space_id, name)
);
CREATE INDEX resources_name ON resources (name);
CREATE INDEX resources_space_type ON resources (space_id, type);

-- another workspace of the owner's Principal may use a resource (single authority: never another Principal's)
CREATE TABLE resource_access (
    resource_id text NOT NULL REFERENCES resources (id) ON DELETE CASCADE,
    space_id    text NOT NULL,
    permission  text NOT NULL CHECK (permission IN ('read', 'write', 'admin')),
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (resource_id, space_id)
);
CREATE INDEX resource_access_space ON resource_access (space_id);

-- tokens of one resource; only the SHA-256 of the secret is kept
CREATE TABLE resource_tokens (
    id           text PRIMARY KEY,
    resource_id  text NOT NULL REFERENCES resources (id) ON DELETE CASCADE,
    name         text NOT NULL,
    permission   text NOT NULL CHECK (permission IN ('read', 'write', 'admin')),
    token_hash   text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz
);
CREATE INDEX resource_tokens_resource ON resource_tokens (resource_id);

-- a binding of a resource to a service (validated against services once that capability exists)
CREATE TABLE resource_bindings (
    resource_id  text NOT NULL REFERENCES resources (id) ON DELETE CASCADE,
    service_id   text NOT NULL,
    binding_name text NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (resource_id, service_id)
);
