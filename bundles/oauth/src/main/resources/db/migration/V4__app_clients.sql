-- A rotated secret keeps authenticating its client until previous_secret_expires_at, so that an app rolls the new one
-- out without a failed token request (AppClientRegistry.rotateSecret). The terms and privacy links an app manifest
-- declares (RFC 7591 tos_uri, policy_uri).
ALTER TABLE oauth_clients ADD COLUMN previous_secret_hash bytea, ADD COLUMN previous_secret_expires_at timestamptz,
    ADD COLUMN tos_uri text, ADD COLUMN policy_uri text;
