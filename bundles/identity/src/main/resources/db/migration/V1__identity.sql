-- OpenID Connect identity providers an operator configured (the local provider needs no row).
CREATE TABLE identity_providers (
    name          text PRIMARY KEY,
    issuer        text NOT NULL,
    client_id     text NOT NULL,
    client_secret text,
    scopes        text NOT NULL DEFAULT 'openid profile email',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Every (provider, subject) that signs in, and the one Principal it maps to. A subject never maps to two.
CREATE TABLE identity_links (
    provider     text NOT NULL,
    subject      text NOT NULL,
    principal_id text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, subject)
);
CREATE INDEX identity_links_principal ON identity_links (principal_id);

-- Browser sessions: the cookie holds a random secret, the row its SHA-256.
CREATE TABLE identity_sessions (
    id_hash      bytea PRIMARY KEY,
    principal_id text NOT NULL,
    provider     text NOT NULL,
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    ended_at     timestamptz
);
CREATE INDEX identity_sessions_principal ON identity_sessions (principal_id);

-- A login, link or CLI flow in flight at an external provider: state, nonce and PKCE verifier, used once.
CREATE TABLE identity_login_states (
    state         text PRIMARY KEY,
    provider      text NOT NULL,
    mode          text NOT NULL CHECK (mode IN ('login', 'link')),
    nonce         text NOT NULL,
    code_verifier text NOT NULL,
    return_to     text NOT NULL,
    principal_id  text,
    expires_at    timestamptz NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- The local provider: usernames with a slow salted hash (PBKDF2-HMAC-SHA256).
CREATE TABLE identity_local_users (
    username      text PRIMARY KEY,
    principal_id  text NOT NULL,
    password_hash bytea NOT NULL,
    salt          bytea NOT NULL,
    iterations    int NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
