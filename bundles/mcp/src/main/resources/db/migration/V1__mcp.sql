CREATE TABLE mcp_servers (
    id               text PRIMARY KEY,
    space_id         text NOT NULL,
    name             text NOT NULL,
    url              text NOT NULL,
    transport        text NOT NULL CHECK (transport IN ('streamable_http', 'sse')),
    enabled          boolean NOT NULL DEFAULT true,
    -- the tools as last listed from the server (what runs are offered without a network round trip), and when
    tools            jsonb,
    tools_listed_at  timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (space_id, name)
);
CREATE INDEX mcp_servers_space ON mcp_servers (space_id, created_at, id);
