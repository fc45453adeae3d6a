-- ACME: one account key per directory URL, and the certificate of a custom domain. Private keys are sealed (AES-GCM,
-- the services env key) and never returned. A database made before these tables moved here from the services bundle
-- has them already (its migrations V2 and V3 made them): hence IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS service_acme_accounts (
    directory_url      text PRIMARY KEY,
    key_id             text NOT NULL,
    key_nonce          bytea NOT NULL,
    key_sealed         bytea NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now()
);

-- One instance orders a domain's certificate at a time: it claims the row (claimed_until, a lease longer than an order
-- may take) and clears the claim when the order ends. After a failed renewal the next try waits (retry_at), longer
-- after each consecutive failure (failures).
CREATE TABLE IF NOT EXISTS service_domain_certificates (
    domain_id          text PRIMARY KEY REFERENCES service_domains (id) ON DELETE CASCADE,
    status             text NOT NULL,                     -- pending, active, failed
    chain_pem          text,                              -- the certificate first, then its issuers
    key_id             text,
    key_nonce          bytea,
    key_sealed         bytea,                             -- the certificate's key pair, PEM, sealed
    expires_at         timestamptz,
    issuer             text,
    error              text,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    claimed_until      timestamptz,
    failures           integer NOT NULL DEFAULT 0,
    retry_at           timestamptz
);

CREATE INDEX IF NOT EXISTS service_domain_certificates_expiry
    ON service_domain_certificates (expires_at) WHERE chain_pem IS NOT NULL;

-- the HTTP-01 tokens of orders under way, answered by any instance
CREATE TABLE IF NOT EXISTS service_acme_challenges (
    token              text PRIMARY KEY,
    domain             text NOT NULL,
    key_authorization  text NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now()
);

-- a database whose services bundle applied its V2 but not its V3 has the table without the renewal columns
ALTER TABLE service_domain_certificates
    ADD COLUMN IF NOT EXISTS claimed_until      timestamptz,
    ADD COLUMN IF NOT EXISTS failures           integer NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS retry_at           timestamptz;
