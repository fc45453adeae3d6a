-- ACME: one account key per directory URL, and the certificate of a custom domain. Private keys are sealed (AES-GCM,
-- the services env key) and never returned.
CREATE TABLE service_acme_accounts (
    directory_url      text PRIMARY KEY,
    key_id             text NOT NULL,
    key_nonce          bytea NOT NULL,
    key_sealed         bytea NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE service_domain_certificates (
    domain_id          text PRIMARY KEY REFERENCES service_domains (id) ON DELETE CASCADE,
    status             text NOT NULL,                     -- pending, active, failed
    chain_pem          text,                              -- the certificate first, then its issuers
    key_id             text,
    key_nonce          bytea,
    key_sealed         bytea,                             -- the certificate's key pair, PEM, sealed
    expires_at         timestamptz,
    issuer             text,
    error              text,
    updated_at         timestamptz NOT NULL DEFAULT now()
);

-- the HTTP-01 tokens of orders under way, answered by any instance
CREATE TABLE service_acme_challenges (
    token              text PRIMARY KEY,
    domain             text NOT NULL,
    key_authorization  text NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now()
);
