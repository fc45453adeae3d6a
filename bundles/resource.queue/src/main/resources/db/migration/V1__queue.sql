-- messages of every queue resource on PostgreSQL, rows kept apart by resource id. A message is ready when
-- visible_at has passed and it is not dead; a receive takes ready rows FOR UPDATE SKIP LOCKED, hides them until
-- now() + the visibility timeout and gives them a new receipt; an ack deletes the row if its receipt is still the
-- current one and not expired; a row whose last attempt expired is marked dead (dead_at) instead of delivered again.
CREATE TABLE resource_queue_messages (
    id          bigserial PRIMARY KEY,
    resource_id text NOT NULL,
    body        bytea NOT NULL,
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    visible_at  timestamptz NOT NULL,
    attempts    integer NOT NULL DEFAULT 0,
    receipt     uuid,
    dead_at     timestamptz
);
-- a receive walks a resource's live rows in send order; the burial of spent rows looks only at rows with many attempts
CREATE INDEX resource_queue_messages_ready ON resource_queue_messages (resource_id, id) WHERE dead_at IS NULL;
CREATE INDEX resource_queue_messages_spent ON resource_queue_messages (resource_id, attempts, visible_at) WHERE dead_at IS NULL;
CREATE INDEX resource_queue_messages_dead ON resource_queue_messages (resource_id, dead_at, id) WHERE dead_at IS NOT NULL;
CREATE UNIQUE INDEX resource_queue_messages_receipt ON resource_queue_messages (receipt) WHERE receipt IS NOT NULL;
