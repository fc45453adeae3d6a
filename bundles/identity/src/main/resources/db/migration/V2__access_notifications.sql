-- A session ended or removed takes its access away on every instance: the kernel's AccessCache hears this channel.
CREATE TRIGGER identity_sessions_access AFTER UPDATE OF ended_at, expires_at, principal_id OR DELETE ON identity_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION atrium_access_changed();
