package dev.atrium.search.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpaceIndexesTest {

    @TempDir
    Path dir;

    static float[] random(Random r, int dims) {
        float[] v = new float[dims];
        for (int i = 0; i < dims; i++) {
            v[i] = (float) r.nextGaussian();
        }
        return v;
    }

    static double cosine(float[] a, float[] b) {
        double dot = 0, na = 0, nb = 0;
        for (int i = 0; i < a.length; i++) {
            dot += a[i] * b[i];
            na += a[i] * a[i];
            nb += b[i] * b[i];
        }
        return dot / Math.sqrt(na * nb);
    }

    private static List<String> truth(List<float[]> vectors, float[] q, int k) {
        return IntStream.range(0, vectors.size())
                .boxed()
                .sorted(Comparator.comparingDouble((Integer i) -> cosine(vectors.get(i), q))
                        .reversed())
                .limit(k)
                .map(i -> "memory:" + i)
                .toList();
    }

    @Test
    void aSmallIndexAnswersExactlyEvenAmongManyEqualVectors() throws Exception {
        Random r = new Random(1);
        float[] same = random(r, 32);
        List<SpaceIndexes.Doc> docs = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            docs.add(new SpaceIndexes.Doc("file:" + i, "file", same.clone()));
        }
        float[] target = random(r, 32);
        docs.add(new SpaceIndexes.Doc("file:target", "file", target));
        try (SpaceIndexes indexes = new SpaceIndexes(dir)) {
            indexes.write("spc_a", docs, List.of());
            List<SpaceIndexes.Hit> hits = indexes.nearest("spc_a", target, Set.of(), 5);
            assertEquals("file:target", hits.get(0).key());
            assertEquals(1.0, hits.get(0).similarity(), 1e-4);
            assertTrue(indexes.nearest("spc_a", target, Set.of("memory"), 5).isEmpty(), "the kind filter holds");
            indexes.write("spc_a", List.of(), List.of("file:target"));
            assertTrue(indexes.nearest("spc_a", target, Set.of(), 5).stream()
                    .noneMatch(h -> h.key().equals("file:target")));
        }
    }

    @Test
    void aLargeIndexIsWalkedWithHighRecall() throws Exception {
        Random r = new Random(2);
        int n = 3000;
        List<float[]> vectors = new ArrayList<>();
        List<SpaceIndexes.Doc> docs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            float[] v = random(r, 32);
            vectors.add(v);
            docs.add(new SpaceIndexes.Doc("memory:" + i, "memory", v));
        }
        try (SpaceIndexes indexes = new SpaceIndexes(dir, 1000, 0)) {
            indexes.write("spc_b", docs, List.of());
            assertEquals(n, indexes.count("spc_b"));
            double recall = 0;
            int queries = 30;
            for (int q = 0; q < queries; q++) {
                float[] query = random(r, 32);
                Set<String> want = new HashSet<>(truth(vectors, query, 10));
                Set<String> got = new HashSet<>();
                indexes.nearest("spc_b", query, Set.of(), 10).forEach(h -> got.add(h.key()));
                got.retainAll(want);
                recall += got.size() / 10.0 / queries;
            }
            assertTrue(recall >= 0.9, "recall@10 " + recall);
        }
    }
}
