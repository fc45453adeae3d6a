-- Every change that can take access away notifies channel atrium_access; each instance's AccessCache forgets what it
-- kept when it hears it (NOTIFY is delivered at commit, so a rolled-back change notifies no one). Statement-level:
-- one notification per statement, whatever the number of rows.
CREATE FUNCTION atrium_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('atrium_access', TG_TABLE_NAME);
    RETURN NULL;
END
$$;

CREATE TRIGGER principals_access AFTER UPDATE OF status, username OR DELETE ON principals
    FOR EACH STATEMENT EXECUTE FUNCTION atrium_access_changed();
CREATE TRIGGER workspaces_access AFTER UPDATE OR DELETE ON workspaces
    FOR EACH STATEMENT EXECUTE FUNCTION atrium_access_changed();
CREATE TRIGGER owner_witnesses_access AFTER INSERT OR UPDATE OR DELETE ON owner_witnesses
    FOR EACH STATEMENT EXECUTE FUNCTION atrium_access_changed();
CREATE TRIGGER personal_access_tokens_access AFTER UPDATE OR DELETE ON personal_access_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION atrium_access_changed();
