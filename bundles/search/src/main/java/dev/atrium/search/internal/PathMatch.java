package dev.atrium.search.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * File-path matching as editors' "go to file" does it: a path whose name or whole path starts with the query first,
 * then paths holding the query's characters in order (fuzzy), scored higher when they match at word starts, in the
 * file name, and close together.
 */
final class PathMatch {

    private PathMatch() {}

    record Candidate(String id, String path) {}

    record Found(Candidate candidate, String match, double score) {}

    static List<Found> best(String query, List<Candidate> candidates, int limit) {
        List<Found> found = new ArrayList<>();
        for (Candidate c : candidates) {
            String path = c.path().toLowerCase(Locale.ROOT);
            String name = path.substring(path.lastIndexOf('/') + 1);
            if (name.startsWith(query) || path.startsWith(query)) {
                found.add(new Found(c, "prefix", 2.0 + (double) query.length() / Math.max(1, name.length())));
                continue;
            }
            double fuzzy = fuzzy(query, path);
            if (fuzzy > 0) {
                found.add(new Found(c, "fuzzy", fuzzy));
            }
        }
        found.sort(Comparator.comparingDouble(Found::score)
                .reversed()
                .thenComparing(f -> f.candidate().path().length())
                .thenComparing(f -> f.candidate().path()));
        return found.subList(0, Math.min(limit, found.size()));
    }

    /** 0 when the query's characters are not all in the path in order; else up to 1 (tight, word starts, in name). */
    static double fuzzy(String query, String path) {
        int nameStart = path.lastIndexOf('/') + 1;
        int at = 0;
        int first = -1;
        int bonus = 0;
        int last = -1;
        for (int i = 0; i < query.length(); i++) {
            char ch = query.charAt(i);
            int j = path.indexOf(ch, at);
            if (j < 0) {
                return 0;
            }
            if (first < 0) {
                first = j;
            }
            if (j == 0 || "/_-. ".indexOf(path.charAt(j - 1)) >= 0) {
                bonus++;
            }
            if (j >= nameStart) {
                bonus++;
            }
            last = j;
            at = j + 1;
        }
        double span = last - first + 1;
        return Math.min(1.0, (query.length() / span) * 0.6 + (bonus / (2.0 * query.length())) * 0.4);
    }
}
