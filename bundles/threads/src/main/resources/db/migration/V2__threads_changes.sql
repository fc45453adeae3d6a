-- workspace search follows threads by (updated_at, id) and messages by (created_at, id)
CREATE INDEX threads_changes ON threads (updated_at, id);
CREATE INDEX thread_messages_changes ON thread_messages (created_at, id);
