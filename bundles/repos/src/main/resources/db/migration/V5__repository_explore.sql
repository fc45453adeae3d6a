-- What explore searches and sorts public repositories by (issue 40). Topics are set through PATCH; the language is
-- detected from the default branch at push; star and fork counts are kept by triggers in the transaction that
-- changes a star or a fork, so a listing sorted by stars never counts.
ALTER TABLE repositories
    ADD COLUMN topics     text[] NOT NULL DEFAULT '{}',
    ADD COLUMN language   text,
    ADD COLUMN star_count integer NOT NULL DEFAULT 0,
    ADD COLUMN fork_count integer NOT NULL DEFAULT 0,
    ADD COLUMN pushed_at  timestamptz,
    -- listed in the server's catalog (GET /api/explore/catalog) when public
    ADD COLUMN in_catalog boolean NOT NULL DEFAULT false,
    -- names weigh most, topics next, then the description; 'simple' for names and topics (no stemming of
    -- identifiers), 'english' for prose
    ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', regexp_replace(name, '[._-]+', ' ', 'g')), 'A')
        || setweight(array_to_tsvector(topics), 'B')
        || setweight(to_tsvector('english', description), 'C')) STORED;

UPDATE repositories r SET star_count = (SELECT count(*) FROM repository_stars s WHERE s.repo_id = r.id),
    fork_count = (SELECT count(*) FROM repositories f WHERE f.forked_from = r.id);

CREATE FUNCTION repository_stars_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE repositories SET star_count = star_count + 1 WHERE id = NEW.repo_id;
    ELSE
        UPDATE repositories SET star_count = star_count - 1 WHERE id = OLD.repo_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER repository_stars_count AFTER INSERT OR DELETE ON repository_stars
    FOR EACH ROW EXECUTE FUNCTION repository_stars_count();

CREATE FUNCTION repository_forks_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND NEW.forked_from IS NOT NULL THEN
        UPDATE repositories SET fork_count = fork_count + 1 WHERE id = NEW.forked_from;
    ELSIF TG_OP = 'DELETE' AND OLD.forked_from IS NOT NULL THEN
        UPDATE repositories SET fork_count = fork_count - 1 WHERE id = OLD.forked_from;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER repository_forks_count AFTER INSERT OR DELETE ON repositories
    FOR EACH ROW EXECUTE FUNCTION repository_forks_count();

-- every explore listing reads public repositories only: partial indexes keep private ones out of them entirely
CREATE INDEX repositories_public_search ON repositories USING gin (search) WHERE visibility = 'public';
CREATE INDEX repositories_public_stars ON repositories (star_count DESC, id DESC) WHERE visibility = 'public';
CREATE INDEX repositories_public_created ON repositories (created_at DESC, id DESC) WHERE visibility = 'public';
CREATE INDEX repositories_public_updated ON repositories (updated_at DESC, id DESC) WHERE visibility = 'public';
CREATE INDEX repositories_public_pushed ON repositories (pushed_at DESC, id DESC)
    WHERE visibility = 'public' AND pushed_at IS NOT NULL;
CREATE INDEX repositories_public_name ON repositories (lower(name), id) WHERE visibility = 'public';
-- name prefixes for type-ahead (LIKE 'abc%'), whatever the database's collation
CREATE INDEX repositories_public_name_prefix ON repositories (lower(name) text_pattern_ops) WHERE visibility = 'public';
CREATE INDEX repositories_public_space ON repositories (space_id, star_count DESC, id DESC) WHERE visibility = 'public';
CREATE INDEX repositories_forks_recent ON repositories (created_at) WHERE forked_from IS NOT NULL;
-- trending reads the stars of the last days from this index alone
CREATE INDEX repository_stars_recent ON repository_stars (created_at, repo_id);

-- fuzzy names need pg_trgm; a server without it (it is a contrib module) searches names by prefix and full text
-- only, and the code checks which one it has (docs/decisions/explore.md)
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available: explore searches names without trigrams';
    END;
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        EXECUTE 'CREATE INDEX repositories_public_name_trgm ON repositories USING gin (lower(name) gin_trgm_ops)'
            || ' WHERE visibility = ''public''';
        -- suggestions walk names nearest first (ORDER BY name <-> q), which only a GiST index can give in order
        EXECUTE 'CREATE INDEX repositories_public_name_trgm_near ON repositories USING gist (lower(name) gist_trgm_ops)'
            || ' WHERE visibility = ''public''';
    END IF;
END $$;

-- The operator's curated seed repositories (GET /api/seed-repositories), edited through /admin/seed-repositories.
CREATE TABLE seed_repositories (
    id          text PRIMARY KEY,
    url         text NOT NULL UNIQUE,
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    category    text NOT NULL DEFAULT '',
    checked     boolean NOT NULL DEFAULT false,
    position    integer NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now()
);
