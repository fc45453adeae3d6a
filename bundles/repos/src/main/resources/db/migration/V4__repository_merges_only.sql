-- A repository whose default branch takes merges of pull requests only: direct pushes and commits to it are refused.
ALTER TABLE repositories ADD COLUMN merges_only boolean NOT NULL DEFAULT false;
