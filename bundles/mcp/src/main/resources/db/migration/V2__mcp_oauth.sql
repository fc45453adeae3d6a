-- a server's OAuth client (RFC 8414 discovery and RFC 7591 registration results) and its tokens; secrets sealed with AES-GCM
CREATE TABLE mcp_oauth (
    server_id               text PRIMARY KEY REFERENCES mcp_servers (id) ON DELETE CASCADE,
    resource                text NOT NULL,
    issuer                  text NOT NULL,
    authorization_endpoint  text NOT NULL,
    token_endpoint          text NOT NULL,
    client_id               text NOT NULL,
    client_secret           text,
    scope                   text,
    access_token            text,
    refresh_token           text,
    expires_at              timestamptz,
    updated_at              timestamptz NOT NULL DEFAULT now()
);
-- an authorization in flight: single use, expiring, bound to the server, its workspace and the Principal who began it
CREATE TABLE mcp_oauth_states (
    state_hash     text PRIMARY KEY,
    server_id      text NOT NULL REFERENCES mcp_servers (id) ON DELETE CASCADE,
    space_id       text NOT NULL,
    principal_id   text NOT NULL,
    code_verifier  text NOT NULL,
    redirect_uri   text NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz
);
CREATE INDEX mcp_oauth_states_expiry ON mcp_oauth_states (expires_at);
