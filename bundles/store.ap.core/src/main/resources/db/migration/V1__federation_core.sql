-- key pairs of local actors (stores, repositories): the newest of an actor signs
CREATE TABLE ap_actor_keys (
    id          bigserial PRIMARY KEY,
    actor_uri   text NOT NULL,
    public_pem  text NOT NULL,
    private_der bytea NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX ap_actor_keys_actor ON ap_actor_keys (actor_uri, id DESC);

-- the outgoing queue: pending rows are claimed (next_attempt_at pushed past a lease) with SKIP LOCKED, so instances
-- never send one twice at once and a crashed sender's claim lapses
CREATE TABLE ap_deliveries (
    id              text PRIMARY KEY,
    actor_uri       text NOT NULL,
    inbox           text NOT NULL,
    body            bytea NOT NULL,
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    last_status     integer,
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz
);
CREATE INDEX ap_deliveries_due ON ap_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX ap_deliveries_state ON ap_deliveries (state, created_at DESC);
