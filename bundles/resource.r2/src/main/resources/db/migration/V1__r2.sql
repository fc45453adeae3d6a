-- r2 objects: the bytes are a blob in the BlobStore (namespace r2.<resource id>); the key and metadata are here
CREATE TABLE resource_r2_objects (
    resource_id  text NOT NULL,
    key          text COLLATE "C" NOT NULL,
    blob_key     text NOT NULL,
    size         bigint NOT NULL,
    sha256       text NOT NULL,
    content_type text,
    uploaded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (resource_id, key)
);
CREATE INDEX resource_r2_objects_blob ON resource_r2_objects (resource_id, blob_key);
