-- positions are dense (0..n-1) per Principal, per workspace and per group; the unique constraints are checked at
-- commit so that a reorder can permute them in one statement
CREATE TABLE shortcuts (
    id           text PRIMARY KEY,
    principal_id text NOT NULL,
    title        text NOT NULL,
    url          text NOT NULL,
    icon         text,
    position     integer NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT shortcuts_position UNIQUE (principal_id, position) DEFERRABLE INITIALLY DEFERRED
);
CREATE TABLE shortcut_groups (
    id         text PRIMARY KEY,
    space_id   text NOT NULL,
    name       text NOT NULL,
    position   integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT shortcut_groups_position UNIQUE (space_id, position) DEFERRABLE INITIALLY DEFERRED
);
CREATE TABLE shortcut_items (
    id         text PRIMARY KEY,
    group_id   text NOT NULL REFERENCES shortcut_groups (id) ON DELETE CASCADE,
    title      text NOT NULL,
    url        text NOT NULL,
    icon       text,
    position   integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT shortcut_items_position UNIQUE (group_id, position) DEFERRABLE INITIALLY DEFERRED
);
