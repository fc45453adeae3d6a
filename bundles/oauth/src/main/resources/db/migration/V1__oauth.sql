-- Clients registered by users (/api/me/oauth/clients) or dynamically (/oauth/register, RFC 7591).
CREATE TABLE oauth_clients (
    client_id                  text PRIMARY KEY,
    secret_hash                bytea,
    owner_principal_id         text,
    client_name                text NOT NULL,
    redirect_uris              text NOT NULL,
    grant_types                text NOT NULL,
    scopes                     text NOT NULL,
    token_endpoint_auth_method text NOT NULL,
    client_uri                 text,
    logo_uri                   text,
    registration_token_hash    bytea,
    created_at                 timestamptz NOT NULL DEFAULT now(),
    updated_at                 timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_clients_owner ON oauth_clients (owner_principal_id, created_at);

-- Authorization codes: single use; a second use revokes every token issued from the code (its family).
CREATE TABLE oauth_codes (
    code_hash      bytea PRIMARY KEY,
    client_id      text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    principal_id   text NOT NULL,
    redirect_uri   text,
    scopes         text NOT NULL,
    code_challenge text,
    nonce          text,
    family_id      text NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- Access (ato_) and refresh (atr_) tokens, by SHA-256 only. A family is everything issued from one grant.
CREATE TABLE oauth_tokens (
    token_hash   bytea PRIMARY KEY,
    kind         text NOT NULL CHECK (kind IN ('access', 'refresh')),
    client_id    text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    principal_id text,
    scopes       text NOT NULL,
    family_id    text NOT NULL,
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    revoked_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_tokens_family ON oauth_tokens (family_id);
CREATE INDEX oauth_tokens_principal_client ON oauth_tokens (principal_id, client_id);

-- RFC 8628 device authorization.
CREATE TABLE oauth_device_codes (
    device_code_hash bytea PRIMARY KEY,
    user_code        text NOT NULL UNIQUE,
    client_id        text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    scopes           text NOT NULL,
    principal_id     text,
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'used')),
    interval_seconds int NOT NULL,
    last_poll_at     timestamptz,
    expires_at       timestamptz NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_consents (
    principal_id text NOT NULL,
    client_id    text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    scopes       text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (principal_id, client_id)
);

CREATE TABLE oauth_audit_logs (
    id           text PRIMARY KEY,
    principal_id text,
    client_id    text,
    event        text NOT NULL,
    detail       text,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_audit_logs_principal ON oauth_audit_logs (principal_id, created_at DESC);

-- ID token signing keys: the newest active key signs; retired keys stay published until retire_after.
CREATE TABLE oauth_signing_keys (
    kid          text PRIMARY KEY,
    algorithm    text NOT NULL,
    private_key  bytea NOT NULL,
    public_key   bytea NOT NULL,
    active       boolean NOT NULL DEFAULT true,
    retire_after timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now()
);
