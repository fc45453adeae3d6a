-- data points of every analyticsEngine resource: append-only (never updated; deleted only with their resource).
-- index1 is the point's index ('' when it gave none), blobs and doubles its string dimensions and numeric measures in
-- order (blob1 is blobs[1]); queries always name a resource and a time range, which the index serves
CREATE TABLE resource_analytics_points (
    resource_id text NOT NULL,
    ts          timestamptz NOT NULL,
    index1      text NOT NULL DEFAULT '',
    blobs       text[] NOT NULL DEFAULT '{}',
    doubles     double precision[] NOT NULL DEFAULT '{}'
);
CREATE INDEX resource_analytics_points_time ON resource_analytics_points (resource_id, ts);
