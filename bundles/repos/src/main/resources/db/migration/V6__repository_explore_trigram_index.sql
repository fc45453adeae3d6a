-- One trigram index for names, the GIN one. With the GiST one beside it the planner took the GiST for the search's
-- `lower(name) % q`, 9-12 ms on 100,000 repositories where the GIN one takes 0.7 ms; and the suggestions' nearest
-- names (`% q ORDER BY lower(name) <-> q LIMIT 10`) are 2-4 times faster from the GIN index's few hundred candidates
-- sorted than walked in order through the GiST one (bench/explore.sh; docs/decisions/explore.md).
DROP INDEX IF EXISTS repositories_public_name_trgm_near;
