-- People: what a Principal adds to its public face, and the relations between Principals. Principal ids are the
-- kernel's; no foreign keys to its tables (a capability owns only its own).
CREATE TABLE people_profiles (
    principal_id text PRIMARY KEY,
    bio          text NOT NULL DEFAULT '',
    website      text NOT NULL DEFAULT '',
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE people_follows (
    follower_id text NOT NULL,
    followee_id text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (follower_id, followee_id)
);
CREATE INDEX people_follows_followee ON people_follows (followee_id, created_at DESC);

CREATE TABLE people_follow_requests (
    id           text PRIMARY KEY,
    requester_id text NOT NULL,
    target_id    text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (requester_id, target_id)
);
CREATE INDEX people_follow_requests_target ON people_follow_requests (target_id, created_at DESC);

CREATE TABLE people_blocks (
    blocker_id text NOT NULL,
    blocked_id text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (blocker_id, blocked_id)
);
CREATE INDEX people_blocks_blocked ON people_blocks (blocked_id);

CREATE TABLE people_mutes (
    muter_id   text NOT NULL,
    muted_id   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (muter_id, muted_id)
);

-- One item per thing an actor did, with who may see it decided when it is written (audience: public, followers,
-- self for an actor whose activity was private then, private for an item of a private repository: never shown), and whether its
-- repository is public now (repo_public, kept by the repository events): an item shows only while both allow.
CREATE TABLE people_activity (
    id          text PRIMARY KEY,
    actor_id    text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('push', 'star', 'release')),
    repo_id     text NOT NULL,
    repo_name   text NOT NULL,
    audience    text NOT NULL CHECK (audience IN ('public', 'followers', 'self', 'private')),
    repo_public boolean NOT NULL,
    payload     jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX people_activity_actor ON people_activity (actor_id, created_at DESC, id DESC);
CREATE INDEX people_activity_repo ON people_activity (repo_id);

-- An uploaded avatar in the two sizes it is served in (PNG); a new upload gets a new id, so its URL never changes.
CREATE TABLE people_avatars (
    id           text PRIMARY KEY,
    principal_id text NOT NULL UNIQUE,
    sha256       text NOT NULL,
    large        bytea NOT NULL,
    small        bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
