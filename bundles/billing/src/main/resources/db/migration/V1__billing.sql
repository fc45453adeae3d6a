-- one row per metered action; the key makes recording idempotent (a replayed outbox, a retried action)
CREATE TABLE billing_usage_events (
    idempotency_key text PRIMARY KEY,
    principal_id    text NOT NULL,
    space_id        text NOT NULL,
    meter           text NOT NULL,
    dimension       text NOT NULL DEFAULT '',
    quantity        bigint NOT NULL CHECK (quantity >= 0),
    occurred_at     timestamptz NOT NULL,
    aggregated      boolean NOT NULL DEFAULT false
);
CREATE INDEX billing_usage_events_pending ON billing_usage_events (principal_id, meter) WHERE NOT aggregated;

-- the aggregate: per workspace, meter, dimension and hour
CREATE TABLE billing_usage_hours (
    principal_id text NOT NULL,
    space_id     text NOT NULL,
    meter        text NOT NULL,
    dimension    text NOT NULL DEFAULT '',
    hour         timestamptz NOT NULL,
    quantity     bigint NOT NULL,
    PRIMARY KEY (principal_id, hour, meter, space_id, dimension)
);

-- what is owed to the provider: made in the aggregation's transaction, sent with its key until the provider took it
CREATE TABLE billing_usage_reports (
    id              bigserial PRIMARY KEY,
    idempotency_key text NOT NULL UNIQUE DEFAULT gen_random_uuid()::text,
    principal_id    text NOT NULL,
    meter           text NOT NULL,
    hour            timestamptz NOT NULL,
    quantity        bigint NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    attempts        integer NOT NULL DEFAULT 0,
    last_error      text,
    sent_at         timestamptz,
    outcome         text
);
CREATE INDEX billing_usage_reports_pending ON billing_usage_reports (id) WHERE sent_at IS NULL;

-- the explicit binding of a Principal to the provider's customer, and the account state last read from the provider
CREATE TABLE billing_accounts (
    principal_id        text PRIMARY KEY,
    provider            text NOT NULL,
    customer_id         text,
    creation_key        text NOT NULL DEFAULT gen_random_uuid()::text,
    subscription_status text NOT NULL DEFAULT '',
    price_id            text NOT NULL DEFAULT '',
    period_end          timestamptz,
    credit_minor        bigint NOT NULL DEFAULT 0,
    currency            text NOT NULL DEFAULT '',
    refreshed_at        timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX billing_accounts_customer ON billing_accounts (provider, customer_id);

-- webhook events applied, by the provider's id: a replay finds its row
CREATE TABLE billing_webhook_events (
    provider    text NOT NULL,
    id          text NOT NULL,
    type        text NOT NULL,
    created     timestamptz NOT NULL,
    customer_id text NOT NULL DEFAULT '',
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (provider, id)
);
