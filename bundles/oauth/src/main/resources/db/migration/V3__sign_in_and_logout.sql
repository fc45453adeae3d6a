-- When and how the user signed in (OpenID Connect auth_time and amr), kept from the approval to every token of the
-- grant: a refreshed ID token carries the original sign-in's time (OIDC Core 12.2).
ALTER TABLE oauth_codes ADD COLUMN auth_time timestamptz, ADD COLUMN amr text;
ALTER TABLE oauth_tokens ADD COLUMN auth_time timestamptz, ADD COLUMN amr text;
ALTER TABLE oauth_device_codes ADD COLUMN auth_time timestamptz, ADD COLUMN amr text;

-- Where a relying party may send the browser after signing it out (OpenID Connect RP-Initiated Logout 1.0).
ALTER TABLE oauth_clients ADD COLUMN post_logout_redirect_uris text;

-- A key signs from this time on (null: since it was made). A rotation publishes the next key one JWKS cache lifetime
-- before it signs anything, so relying parties that cached the key set know it by then.
ALTER TABLE oauth_signing_keys ADD COLUMN signs_from timestamptz;
