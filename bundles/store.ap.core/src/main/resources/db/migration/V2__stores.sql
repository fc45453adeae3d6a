-- the stores workspaces publish; the slug is the store's name on the instance (/ap/stores/<slug>, acct:<slug>@<domain>)
CREATE TABLE ap_stores (
    id         text PRIMARY KEY,
    space_id   text NOT NULL,
    slug       text NOT NULL UNIQUE,
    name       text NOT NULL,
    summary    text NOT NULL DEFAULT '',
    icon_url   text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ap_stores_space ON ap_stores (space_id, created_at);

-- a store's explicit inventory (empty: automatic mode); repository actor URIs, local or remote
CREATE TABLE ap_store_inventory (
    store_id       text NOT NULL REFERENCES ap_stores (id) ON DELETE CASCADE,
    repository_uri text NOT NULL,
    clone_uri      text,
    default_branch_ref  text,
    default_branch_hash text,
    added_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, repository_uri)
);
