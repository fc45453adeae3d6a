package dev.atrium.apps.internal.manifest;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The problems found so far, bounded: a file of garbage gets a readable answer, not ten thousand lines. One problem per
 * path, the first found: the schema and a rule refusing the same value say one thing, not two.
 */
final class Problems {

    static final int MAX = 100;

    private final List<ManifestProblem> list = new ArrayList<>();
    private final Set<String> paths = new HashSet<>();
    private int dropped;

    void add(String path, int line, String message) {
        if (!path.isEmpty() && !paths.add(path)) {
            return;
        }
        if (list.size() >= MAX) {
            dropped++;
            return;
        }
        list.add(new ManifestProblem(path, line, message));
    }

    /** How many were found, those beyond the bound too. */
    int count() {
        return list.size() + dropped;
    }

    boolean isEmpty() {
        return list.isEmpty();
    }

    /** In file order (a stable sort by line: problems of one line keep the order they were found in). */
    List<ManifestProblem> sorted() {
        List<ManifestProblem> out = new ArrayList<>(list);
        out.sort(Comparator.comparingInt(ManifestProblem::line));
        if (dropped > 0) {
            out.add(new ManifestProblem("", 0, "and " + dropped + " more problems"));
        }
        return List.copyOf(out);
    }
}
