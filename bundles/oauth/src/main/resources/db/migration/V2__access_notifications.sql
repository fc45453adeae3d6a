-- An access token revoked, shortened or removed takes its access away on every instance: the kernel's AccessCache
-- hears this channel.
CREATE TRIGGER oauth_tokens_access AFTER UPDATE OF revoked_at, expires_at, principal_id OR DELETE ON oauth_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION atrium_access_changed();
