-- vectors of every vectorize resource with index 'exact' (index 'hnsw' keeps them in Lucene under the resource's
-- data directory); values are little-endian float32 (4 bytes per dimension), compared in Java
CREATE TABLE resource_vectorize_vectors (
    resource_id text NOT NULL,
    id          text COLLATE "C" NOT NULL,
    dims        integer NOT NULL,
    vec         bytea NOT NULL,
    metadata    jsonb NOT NULL DEFAULT '{}',
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (resource_id, id)
);
CREATE INDEX resource_vectorize_vectors_metadata ON resource_vectorize_vectors USING gin (metadata jsonb_path_ops);
