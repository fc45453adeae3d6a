CREATE TABLE agent_tasks (
    id              text PRIMARY KEY,
    space_id        text NOT NULL,
    -- who created the task, then who started its run (the run's requester, whose status the reconcile reads)
    principal_id    text NOT NULL,
    title           text NOT NULL,
    description     text,
    status          text NOT NULL DEFAULT 'todo' CHECK (status IN ('todo', 'in_progress', 'done', 'cancelled')),
    priority        text NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    due_at          timestamptz,
    thread_id       text,
    plan            jsonb,
    run_id          text,
    last_run_status text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_tasks_space ON agent_tasks (space_id, created_at DESC, id);
CREATE INDEX agent_tasks_space_status ON agent_tasks (space_id, status, created_at DESC, id);
CREATE UNIQUE INDEX agent_tasks_run ON agent_tasks (run_id) WHERE run_id IS NOT NULL;
