-- The runs of a workflow at a commit: what a deployment looks up for the artifact a successful one made.
CREATE INDEX action_runs_commit ON action_runs (repo_id, commit_id, workflow_path);
