-- What explore's in-memory index (ExploreIndex) has to read again: a row per repository inserted or deleted, and per
-- change of what explore searches, filters or suggests by (name, description, topics, visibility, language, workspace,
-- catalog mark, star count) of a public repository or one that turns public or private. Written in the transaction of the change, so
-- every instance sees it with the change; rows older than an hour are pruned by the index.
CREATE TABLE repository_search_changes (
    seq     bigserial PRIMARY KEY,
    repo_id text NOT NULL,
    op      char(1) NOT NULL,
    at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX repository_search_changes_at ON repository_search_changes (at);

CREATE FUNCTION repository_search_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO repository_search_changes (repo_id, op) VALUES (OLD.id, 'D');
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        IF OLD.visibility <> 'public' AND NEW.visibility <> 'public' THEN
            RETURN NEW;
        END IF;
        IF OLD.name IS NOT DISTINCT FROM NEW.name AND OLD.description IS NOT DISTINCT FROM NEW.description
           AND OLD.topics IS NOT DISTINCT FROM NEW.topics AND OLD.visibility IS NOT DISTINCT FROM NEW.visibility
           AND OLD.language IS NOT DISTINCT FROM NEW.language AND OLD.space_id IS NOT DISTINCT FROM NEW.space_id
           AND OLD.in_catalog IS NOT DISTINCT FROM NEW.in_catalog AND OLD.star_count IS NOT DISTINCT FROM NEW.star_count THEN
            RETURN NEW;
        END IF;
    END IF;
    INSERT INTO repository_search_changes (repo_id, op) VALUES (NEW.id, left(TG_OP, 1));
    RETURN NEW;
END
$$;

CREATE TRIGGER repository_search_changed
    AFTER INSERT OR DELETE OR UPDATE OF name, description, topics, visibility, language, space_id, in_catalog, star_count
    ON repositories FOR EACH ROW EXECUTE FUNCTION repository_search_changed();
