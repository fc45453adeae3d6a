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

-- What each workspace holds, kept by a trigger in the same transaction as the rows, so a quota check is one row
-- read instead of a sum over the workspace. An unconfirmed upload counts at least the size it announced.
CREATE TABLE storage_usage (
    space_id text PRIMARY KEY,
    entries  bigint NOT NULL DEFAULT 0,
    bytes    bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION storage_usage_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE storage_usage SET entries = entries - 1,
            bytes = bytes - CASE WHEN OLD.status = 'ready' THEN OLD.size ELSE greatest(OLD.size, coalesce(OLD.declared_size, 0)) END
            WHERE space_id = OLD.space_id;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO storage_usage AS u (space_id, entries, bytes)
            VALUES (NEW.space_id, 1, CASE WHEN NEW.status = 'ready' THEN NEW.size ELSE greatest(NEW.size, coalesce(NEW.declared_size, 0)) END)
            ON CONFLICT (space_id) DO UPDATE SET entries = u.entries + 1, bytes = u.bytes + EXCLUDED.bytes;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER storage_usage_track AFTER INSERT OR DELETE OR UPDATE OF space_id, status, size, declared_size ON storage_files
    FOR EACH ROW EXECUTE FUNCTION storage_usage_track();
