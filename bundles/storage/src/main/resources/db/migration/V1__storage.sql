-- Files and folders of workspaces. Bytes live in the BlobStore (namespace "storage"); a row keeps only the key.
-- path is the entry's full path inside its workspace ("docs/a.txt", no leading slash), compared byte-wise
-- (COLLATE "C") so that a folder's subtree is the range [path || '/', path || '0') of one index.
CREATE TABLE storage_files (
    id              text PRIMARY KEY,
    space_id        text NOT NULL,
    parent_id       text REFERENCES storage_files (id) ON DELETE CASCADE,
    name            text NOT NULL,
    path            text COLLATE "C" NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('file', 'folder')),
    -- ready: listed; pending: a direct upload not yet confirmed, seen only by the upload routes and the cleanup
    status          text NOT NULL DEFAULT 'ready' CHECK (status IN ('ready', 'pending')),
    size            bigint NOT NULL DEFAULT 0,
    content_type    text,
    sha256          text,
    blob_key        text,
    etag            text,
    -- what upload-url announced (a pending upload reserves it against the quota)
    declared_size   bigint,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX storage_files_path ON storage_files (space_id, path) WHERE status = 'ready';
CREATE INDEX storage_files_parent ON storage_files (space_id, parent_id, kind, name);
CREATE INDEX storage_files_blob ON storage_files (blob_key) WHERE blob_key IS NOT NULL;
CREATE INDEX storage_files_pending ON storage_files (created_at) WHERE status = 'pending';

-- The key that signs download URLs when the operator configured none: made once, shared by every instance.
CREATE TABLE storage_secrets (
    name       text PRIMARY KEY,
    value      text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
