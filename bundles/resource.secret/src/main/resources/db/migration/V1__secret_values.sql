-- the encrypted value of each secretRef resource: AES-256-GCM under the operator key named by key_id (a file in
-- <data>/keys/secret-ref), the resource id as associated data so a value cannot be moved to another resource
CREATE TABLE resource_secret_values (
    resource_id text PRIMARY KEY,
    key_id      text NOT NULL,
    nonce       bytea NOT NULL,
    ciphertext  bytea NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
