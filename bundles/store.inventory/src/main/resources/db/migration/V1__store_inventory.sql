-- Model A. Local URLs in stored activities are paths (/ap/repos/o/r): the public base is added when they are served or
-- delivered, so one row serves every base a peer knows this server by.

-- what Model A last published of each local repository: tells a repository made public (Create) from one made private
-- (Delete), and names a deleted repository's actor
CREATE TABLE ap_inv_repositories (
    repo_id    text PRIMARY KEY,
    space_id   text NOT NULL,
    actor_path text NOT NULL,
    published  boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- the outboxes of local actors (repositories and stores), newest last. An activity is queued to its audience (the
-- actor's followers, or the one inbox in deliver_to: an Accept to its follower) by the fan-out after it is committed;
-- fanned_out_at says it was, so a restart or a second instance never loses nor repeats one
CREATE TABLE ap_inv_activities (
    seq           bigserial PRIMARY KEY,
    id            text NOT NULL UNIQUE,
    actor_path    text NOT NULL,
    type          text NOT NULL,
    body          text NOT NULL,
    published     timestamptz NOT NULL DEFAULT now(),
    deliver_to    text,
    deliver_base  text,
    fanned_out_at timestamptz
);
CREATE INDEX ap_inv_activities_actor ON ap_inv_activities (actor_path, seq DESC);
CREATE INDEX ap_inv_activities_pending ON ap_inv_activities (seq) WHERE fanned_out_at IS NULL;

-- who follows a local actor; base is the public base URL the follower knows the actor by (what it followed)
CREATE TABLE ap_inv_followers (
    actor_path text NOT NULL,
    follower   text NOT NULL,
    inbox      text NOT NULL,
    base       text NOT NULL,
    follow_id  text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (actor_path, follower)
);

-- activity ids the inboxes have taken: a replay answers 200 and changes nothing
CREATE TABLE ap_inv_inbox_seen (
    activity_id text PRIMARY KEY,
    received_at timestamptz NOT NULL DEFAULT now()
);
