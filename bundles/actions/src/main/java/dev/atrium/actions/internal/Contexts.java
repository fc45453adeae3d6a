package dev.atrium.actions.internal;

import dev.atrium.actions.internal.ActionStore.Job;
import dev.atrium.actions.internal.ActionStore.Run;
import dev.atrium.repos.api.Repository;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The expression contexts of a run and its jobs, named and shaped as GitHub's. */
final class Contexts {

    private Contexts() {}

    /** {@code github}: what triggered the run. */
    static Map<String, Object> github(Repository repo, Run run, String jobKey) {
        Map<String, Object> g = new LinkedHashMap<>();
        String ref = run.ref() == null ? "" : run.ref();
        g.put("event_name", run.event());
        g.put("sha", run.commitId());
        g.put("ref", ref);
        g.put("ref_name", ref.replaceFirst("^refs/(heads|tags)/", ""));
        g.put("ref_type", ref.startsWith("refs/tags/") ? "tag" : "branch");
        g.put("repository", repo.spaceId() + "/" + repo.name());
        g.put("repository_id", repo.id());
        g.put("repository_owner", repo.spaceId());
        g.put("actor", run.actorId());
        g.put("triggering_actor", run.actorId());
        g.put("run_id", run.id());
        g.put("run_number", run.number());
        g.put("run_attempt", run.attempt());
        g.put("workflow", run.name());
        g.put("workflow_ref", run.workflowPath() + "@" + ref);
        g.put("workspace", dev.atrium.runner.api.ContainerSpec.WORKSPACE);
        g.put("server_url", "");
        g.put("api_url", "");
        g.put("default_branch", repo.defaultBranch());
        g.put("event", Map.of("inputs", run.inputs()));
        if (jobKey != null) {
            g.put("job", jobKey);
        }
        return g;
    }

    /** {@code needs}: the result and outputs of each job this one needs (a matrix job's: all must have succeeded). */
    static Map<String, Object> needs(List<Job> jobs, List<String> needs) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String key : needs) {
            String result = "success";
            Map<String, String> outputs = new LinkedHashMap<>();
            for (Job j : jobs) {
                if (!j.key().equals(key)) {
                    continue;
                }
                outputs.putAll(j.outputs());
                String c = j.conclusion() == null ? "skipped" : j.conclusion();
                result = worse(result, c);
            }
            out.put(key, Map.of("result", result, "outputs", outputs));
        }
        return out;
    }

    /** GitHub's order: a failure outweighs a cancellation, which outweighs a skip, which outweighs a success. */
    static String worse(String a, String b) {
        return rank(b) > rank(a) ? b : a;
    }

    private static int rank(String conclusion) {
        return switch (conclusion) {
            case "failure", "timed_out" -> 3;
            case "cancelled" -> 2;
            case "skipped" -> 1;
            default -> 0;
        };
    }

    static String result(String conclusion) {
        return "timed_out".equals(conclusion) ? "failure" : conclusion;
    }

    static Map<String, Object> runner() {
        return Map.of(
                "os", "Linux", "arch", "X64", "name", "atrium", "temp", "/tmp", "tool_cache", "/opt/hostedtoolcache");
    }
}
