package dev.atrium.actions.internal.workflow;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code strategy.matrix}: the vectors (key → values, in file order), {@code include} and {@code exclude}.
 * Values are String, Number, Boolean, null, or nested Map/List.
 */
public final class Matrix {

    /** GitHub's limit of combinations per workflow run job. */
    public static final int MAX_COMBINATIONS = 256;

    private final Map<String, List<Object>> vectors;
    private final List<Map<String, Object>> include;
    private final List<Map<String, Object>> exclude;

    public Matrix(
            Map<String, List<Object>> vectors, List<Map<String, Object>> include, List<Map<String, Object>> exclude) {
        Map<String, List<Object>> v = new LinkedHashMap<>();
        vectors.forEach((k, values) -> v.put(k, Collections.unmodifiableList(new ArrayList<>(values))));
        this.vectors = Collections.unmodifiableMap(v);
        this.include = frozen(include);
        this.exclude = frozen(exclude);
    }

    private static List<Map<String, Object>> frozen(List<Map<String, Object>> entries) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> e : entries) {
            out.add(Collections.unmodifiableMap(new LinkedHashMap<>(e)));
        }
        return Collections.unmodifiableList(out);
    }

    public Map<String, List<Object>> vectors() {
        return vectors;
    }

    public List<Map<String, Object>> include() {
        return include;
    }

    public List<Map<String, Object>> exclude() {
        return exclude;
    }

    /**
     * The combinations in GitHub's order and by its rules: the product of the vectors (the first key varies
     * slowest), less those matching an {@code exclude} entry (all its pairs), then each {@code include} entry added
     * to every product combination whose original values it does not change (its other keys overwrite what earlier
     * includes added), or appended as a combination of its own when it fits none.
     */
    public List<Map<String, Object>> expand() {
        List<Map<String, Object>> product = new ArrayList<>();
        if (!vectors.isEmpty()) {
            product.add(new LinkedHashMap<>());
            for (Map.Entry<String, List<Object>> v : vectors.entrySet()) {
                List<Map<String, Object>> next = new ArrayList<>();
                for (Map<String, Object> combination : product) {
                    for (Object value : v.getValue()) {
                        Map<String, Object> c = new LinkedHashMap<>(combination);
                        c.put(v.getKey(), value);
                        next.add(c);
                    }
                }
                product = next;
            }
        }
        product.removeIf(c -> exclude.stream().anyMatch(x -> matches(c, x)));
        List<Map<String, Object>> extra = new ArrayList<>();
        for (Map<String, Object> in : include) {
            boolean added = false;
            for (Map<String, Object> c : product) {
                if (keepsOriginals(c, in)) {
                    in.forEach((k, value) -> {
                        if (!vectors.containsKey(k)) {
                            c.put(k, value);
                        }
                    });
                    added = true;
                }
            }
            if (!added) {
                extra.add(new LinkedHashMap<>(in));
            }
        }
        List<Map<String, Object>> all = new ArrayList<>();
        for (Map<String, Object> c : product) {
            all.add(Collections.unmodifiableMap(c));
        }
        for (Map<String, Object> c : extra) {
            all.add(Collections.unmodifiableMap(c));
        }
        return Collections.unmodifiableList(all);
    }

    /** Every pair of the exclude entry is in the combination. */
    private static boolean matches(Map<String, Object> combination, Map<String, Object> entry) {
        return entry.entrySet().stream()
                .allMatch(e -> combination.containsKey(e.getKey()) && same(combination.get(e.getKey()), e.getValue()));
    }

    /** The include entry's values for the matrix's own keys equal the combination's. */
    private boolean keepsOriginals(Map<String, Object> combination, Map<String, Object> entry) {
        return entry.entrySet().stream()
                .filter(e -> vectors.containsKey(e.getKey()))
                .allMatch(e -> same(combination.get(e.getKey()), e.getValue()));
    }

    static boolean same(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            return x.doubleValue() == y.doubleValue();
        }
        return Objects.equals(a, b);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Matrix m
                && m.vectors.equals(vectors)
                && m.include.equals(include)
                && m.exclude.equals(exclude);
    }

    @Override
    public int hashCode() {
        return Objects.hash(vectors, include, exclude);
    }

    @Override
    public String toString() {
        return "Matrix[vectors=" + vectors + ", include=" + include + ", exclude=" + exclude + "]";
    }
}
