-- kv entries of every kv resource on PostgreSQL; keys compared by their bytes (COLLATE "C") so listing order and
-- cursors are the same on every server
CREATE TABLE resource_kv_entries (
    resource_id text NOT NULL,
    key         text COLLATE "C" NOT NULL,
    value       bytea NOT NULL,
    expires_at  timestamptz,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (resource_id, key)
);
CREATE INDEX resource_kv_entries_expiry ON resource_kv_entries (expires_at) WHERE expires_at IS NOT NULL;
