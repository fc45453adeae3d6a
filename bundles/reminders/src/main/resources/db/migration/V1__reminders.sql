-- A reminder belongs to a workspace (its owner is the kernel's to say). One-off: fire_at. Recurring: rrule from
-- starts_at (wall-clock time in time_zone). next_fire_at is what the scheduler claims; null means nothing is due.
CREATE TABLE reminders (
    id             text PRIMARY KEY,
    space_id       text NOT NULL,
    title          text NOT NULL,
    body           text,
    time_zone      text NOT NULL,
    fire_at        timestamptz,
    rrule          text,
    starts_at      timestamp,
    enabled        boolean NOT NULL DEFAULT true,
    next_fire_at   timestamptz,
    last_fired_at  timestamptz,
    fire_count     integer NOT NULL DEFAULT 0,
    last_outcome   text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT reminders_one_schedule CHECK ((fire_at IS NULL) <> (rrule IS NULL)),
    CONSTRAINT reminders_rrule_start CHECK (rrule IS NULL OR starts_at IS NOT NULL)
);
CREATE INDEX reminders_space ON reminders (space_id, created_at, id);
CREATE INDEX reminders_due ON reminders (next_fire_at) WHERE next_fire_at IS NOT NULL;
