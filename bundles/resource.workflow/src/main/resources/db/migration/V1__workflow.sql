-- instances of every workflow resource, rows kept apart by resource id. An instance is due to run when due_at has
-- passed, its status is queued, running or waiting, and no live lease holds it; a claim takes due rows FOR UPDATE
-- SKIP LOCKED and gives each a new lease (lease, lease_until); every step call of that run checks and renews it.
CREATE TABLE resource_workflow_instances (
    resource_id   text NOT NULL,
    id            text NOT NULL,
    runner        text NOT NULL,
    params        text,
    status        text NOT NULL,
    output        text,
    error_name    text,
    error_message text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    due_at        timestamptz,
    lease         uuid,
    lease_until   timestamptz,
    lease_ms      bigint NOT NULL DEFAULT 30000,
    PRIMARY KEY (resource_id, id)
);
CREATE INDEX resource_workflow_instances_due ON resource_workflow_instances (resource_id, runner, due_at) WHERE due_at IS NOT NULL;

-- the steps an instance reached, by key (do:<n>:<name>, sleep:<n>:<name>): a done step's result (value, JSON text),
-- a step that failed for good (error_*), the attempts made, when a failed attempt is retried (retry_at), and a
-- sleep's deadline (until_at).
CREATE TABLE resource_workflow_steps (
    resource_id   text NOT NULL,
    instance_id   text NOT NULL,
    key           text NOT NULL,
    done          boolean NOT NULL DEFAULT false,
    value         text,
    error_name    text,
    error_message text,
    attempts      integer NOT NULL DEFAULT 0,
    retry_at      timestamptz,
    until_at      timestamptz,
    PRIMARY KEY (resource_id, instance_id, key),
    FOREIGN KEY (resource_id, instance_id) REFERENCES resource_workflow_instances (resource_id, id) ON DELETE CASCADE
);
