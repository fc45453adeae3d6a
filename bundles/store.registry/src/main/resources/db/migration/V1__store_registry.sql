-- Remote stores a workspace registered (store-registry client), and the activities their outboxes showed.
CREATE TABLE store_registry_entries (
    id                   text PRIMARY KEY,
    space_id             text NOT NULL,
    actor_url            text NOT NULL,
    domain               text NOT NULL,
    store_slug           text NOT NULL,
    name                 text NOT NULL,
    summary              text NOT NULL DEFAULT '',
    icon_url             text,
    outbox_url           text,
    is_active            boolean NOT NULL DEFAULT false,
    subscription_enabled boolean NOT NULL DEFAULT false,
    last_fetched_at      timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (space_id, actor_url)
);
CREATE INDEX store_registry_entries_polled ON store_registry_entries (last_fetched_at) WHERE subscription_enabled;

CREATE TABLE store_registry_updates (
    id                text PRIMARY KEY,
    registry_entry_id text NOT NULL REFERENCES store_registry_entries (id) ON DELETE CASCADE,
    space_id          text NOT NULL,
    store_name        text NOT NULL,
    store_domain      text NOT NULL,
    activity_id       text NOT NULL,
    activity_type     text NOT NULL,
    object_id         text,
    object_type       text,
    object_name       text,
    object_summary    text,
    published         timestamptz,
    seen              boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (registry_entry_id, activity_id)
);
CREATE INDEX store_registry_updates_space ON store_registry_updates (space_id, created_at DESC, id DESC);
