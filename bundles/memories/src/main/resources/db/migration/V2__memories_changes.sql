-- workspace search follows memories by (updated_at, id)
CREATE INDEX memories_changes ON memories (updated_at, id);
