-- Secret common variables are sealed (AES-256-GCM under <data>/keys/kernel/common-env.key) instead of kept in clear:
-- a secret row has value NULL and its sealed form; the kernel seals rows written before this on its next start.
ALTER TABLE workspace_common_env
    ALTER COLUMN value DROP NOT NULL,
    ADD COLUMN key_id text,
    ADD COLUMN nonce bytea,
    ADD COLUMN ciphertext bytea;
