package dev.atrium.actions.internal.workflow;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The graph of jobs by {@code needs}: an order to run them in, and its cycles. */
public final class Dag {

    private Dag() {}

    /** The needs of each job, in file order. */
    public static Map<String, List<String>> needs(Map<String, Job> jobs) {
        Map<String, List<String>> needs = new LinkedHashMap<>();
        jobs.forEach((id, job) -> needs.put(id, job.needs()));
        return needs;
    }

    /**
     * The jobs in an order where each comes after all it needs; among ready jobs, file order.
     *
     * @throws IllegalArgumentException when the needs form a cycle (its jobs named) or name an unknown job
     */
    public static List<String> order(Map<String, List<String>> needs) {
        for (Map.Entry<String, List<String>> e : needs.entrySet()) {
            for (String n : e.getValue()) {
                if (!needs.containsKey(n)) {
                    throw new IllegalArgumentException("job '" + e.getKey() + "' needs unknown job '" + n + "'");
                }
            }
        }
        Optional<List<String>> cycle = cycle(needs);
        if (cycle.isPresent()) {
            throw new IllegalArgumentException("needs form a cycle: " + String.join(" -> ", cycle.get()));
        }
        List<String> order = new ArrayList<>();
        Set<String> done = new LinkedHashSet<>();
        while (order.size() < needs.size()) {
            for (Map.Entry<String, List<String>> e : needs.entrySet()) {
                if (!done.contains(e.getKey()) && done.containsAll(e.getValue())) {
                    done.add(e.getKey());
                    order.add(e.getKey());
                    break;
                }
            }
        }
        return List.copyOf(order);
    }

    /** A cycle as the path around it, first job repeated at the end ({@code a -> b -> a}); empty when none. */
    public static Optional<List<String>> cycle(Map<String, List<String>> needs) {
        Map<String, Integer> state = new HashMap<>(); // absent: unvisited, 1: on the path, 2: done
        for (String start : needs.keySet()) {
            List<String> path = new ArrayList<>();
            Optional<List<String>> found = visit(start, needs, state, path);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    private static Optional<List<String>> visit(
            String job, Map<String, List<String>> needs, Map<String, Integer> state, List<String> path) {
        Integer s = state.get(job);
        if (s != null && s == 2) {
            return Optional.empty();
        }
        if (s != null) {
            List<String> cycle = new ArrayList<>(path.subList(path.indexOf(job), path.size()));
            cycle.add(job);
            return Optional.of(List.copyOf(cycle));
        }
        state.put(job, 1);
        path.add(job);
        for (String n : needs.getOrDefault(job, List.of())) {
            Optional<List<String>> found = visit(n, needs, state, path);
            if (found.isPresent()) {
                return found;
            }
        }
        path.remove(path.size() - 1);
        state.put(job, 2);
        return Optional.empty();
    }
}
