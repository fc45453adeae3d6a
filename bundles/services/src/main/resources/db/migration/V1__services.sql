-- The next migration of this bundle is V4: V2 and V3 (the certificate tables) were applied by databases made before
-- they moved to the services.domains bundle, and the migrator skips a version it has recorded.
-- Services, their deployments, env, common-env links and custom domains. No foreign key to the kernel's tables:
-- capabilities never touch each other's tables; the owner scope is the kernel's. Bindings are the resources core's
-- (resource_bindings), reached through resource.api's ResourceDirectory.
CREATE TABLE services (
    id                    text PRIMARY KEY,
    space_id              text NOT NULL,
    principal_id          text NOT NULL,     -- who created it: lists without a workspace filter start here
    name                  text NOT NULL,
    slug                  text NOT NULL,
    settings              text NOT NULL DEFAULT '{}',   -- JSON object: compatibility_date, compatibility_flags, limits, mcp_server
    config_revision       integer NOT NULL DEFAULT 1,   -- bumped by every env, settings or bindings change
    current_deployment_id text,
    canary_deployment_id  text,
    canary_percent        integer,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT services_slug UNIQUE (slug)
);
CREATE INDEX services_space ON services (space_id, created_at, id);
CREATE INDEX services_principal ON services (principal_id, created_at, id);

-- a service's own variables; a secret's value is sealed (AES-256-GCM under <data>/keys/services), never read back by the API
CREATE TABLE service_env (
    service_id text NOT NULL REFERENCES services (id) ON DELETE CASCADE,
    name       text NOT NULL,
    secret     boolean NOT NULL,
    value      text,          -- plain variables only
    key_id     text,          -- secret variables: the key, nonce and ciphertext
    nonce      bytea,
    ciphertext bytea,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (service_id, name)
);

-- names of the workspace's common variables the service uses; a built-in carries its scopes (JSON array)
CREATE TABLE service_common_env_links (
    service_id text NOT NULL REFERENCES services (id) ON DELETE CASCADE,
    name       text NOT NULL,
    builtin    boolean NOT NULL DEFAULT false,
    scopes     text,
    PRIMARY KEY (service_id, name, builtin)
);

-- deployments are immutable but for their status; the artifact is in the BlobStore (namespace 'services')
CREATE TABLE service_deployments (
    id               text PRIMARY KEY,
    service_id       text NOT NULL REFERENCES services (id) ON DELETE CASCADE,
    seq              integer NOT NULL,
    status           text NOT NULL,     -- active, canary, superseded, aborted, failed
    strategy         text NOT NULL,     -- direct, canary
    provider         text NOT NULL,
    artifact_kind    text NOT NULL,
    artifact_key     text NOT NULL,
    artifact_sha256  text NOT NULL,
    artifact_size    bigint NOT NULL,
    deploy_message   text NOT NULL DEFAULT '',
    canary_percent   integer,
    idempotency_key  text,
    request_hash     text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT service_deployments_seq UNIQUE (service_id, seq),
    CONSTRAINT service_deployments_idempotency UNIQUE (service_id, idempotency_key)
);

CREATE TABLE service_domains (
    id                 text PRIMARY KEY,
    service_id         text NOT NULL REFERENCES services (id) ON DELETE CASCADE,
    domain             text NOT NULL,
    token              text NOT NULL,
    status             text NOT NULL DEFAULT 'pending',   -- pending, verified
    verified_by        text,                              -- http, dns
    verified_at        timestamptz,
    last_check         text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT service_domains_service_domain UNIQUE (service_id, domain)
);
CREATE INDEX service_domains_service ON service_domains (service_id, created_at, id);
-- a domain routes to one service: the one that verified it. Pending claims of others do not block the real owner.
CREATE UNIQUE INDEX service_domains_verified ON service_domains (domain) WHERE status = 'verified';
