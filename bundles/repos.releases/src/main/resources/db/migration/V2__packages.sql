-- Packages (issue 40): a public repository with published releases whose tag names a semantic version. Versions are
-- read from releases; this bundle keeps the reviews of packages and their rating aggregate, current in the same
-- transaction as every review change (a trigger), so a listing never averages on the fly.
CREATE INDEX releases_published_semver ON releases (repo_id, published_at DESC)
    WHERE NOT draft AND tag ~ '^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)';

CREATE TABLE package_reviews (
    id           text PRIMARY KEY,
    repo_id      text NOT NULL,
    principal_id text NOT NULL,
    rating       smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
    body         text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (repo_id, principal_id)
);
CREATE INDEX package_reviews_by_repo ON package_reviews (repo_id, updated_at DESC, id DESC);

CREATE TABLE package_ratings (
    repo_id      text PRIMARY KEY,
    review_count integer NOT NULL DEFAULT 0,
    rating_sum   integer NOT NULL DEFAULT 0
);

CREATE FUNCTION package_ratings_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE package_ratings SET review_count = review_count - 1, rating_sum = rating_sum - OLD.rating
            WHERE repo_id = OLD.repo_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO package_ratings (repo_id, review_count, rating_sum) VALUES (NEW.repo_id, 1, NEW.rating)
            ON CONFLICT (repo_id) DO UPDATE SET review_count = package_ratings.review_count + 1,
                rating_sum = package_ratings.rating_sum + NEW.rating;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER package_ratings_keep AFTER INSERT OR UPDATE OF rating OR DELETE ON package_reviews
    FOR EACH ROW EXECUTE FUNCTION package_ratings_keep();
