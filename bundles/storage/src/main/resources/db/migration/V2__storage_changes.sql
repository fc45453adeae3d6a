-- workspace search follows files by (updated_at, id)
CREATE INDEX storage_files_changes ON storage_files (updated_at, id) WHERE kind = 'file' AND status = 'ready';
