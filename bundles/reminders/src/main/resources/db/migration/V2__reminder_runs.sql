-- A reminder may start a run on a thread of its workspace when it fires: run_input is the user message.
ALTER TABLE reminders ADD COLUMN thread_id text, ADD COLUMN run_input text, ADD COLUMN last_run_id text,
    ADD CONSTRAINT reminders_run_input CHECK ((thread_id IS NULL) = (run_input IS NULL));
