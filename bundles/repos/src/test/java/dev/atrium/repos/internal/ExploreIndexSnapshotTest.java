package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.atrium.repos.internal.ExploreIndexSnapshot.Document;
import dev.atrium.repos.internal.ExploreIndexSnapshot.Hit;
import dev.atrium.repos.internal.ExploreIndexSnapshot.Query;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The snapshot's shortcuts against the plain definition: a name is alike when pg_trgm's similarity is at least 0.3,
 * whichever trigram lists the snapshot counts, looks up in bitmaps or skips.
 */
class ExploreIndexSnapshotTest {

    private static final String[] SYLLABLES = {
        "par", "ser", "lex", "gra", "ph", "vec", "tor", "js", "on", "ca", "che", "fa", "st", "ti", "ny", "qu", "ick",
        "a", "e", "o", "1", "2", "42"
    };

    private static String name(Random r) {
        StringBuilder b = new StringBuilder();
        int words = 1 + r.nextInt(3);
        for (int w = 0; w < words; w++) {
            if (w > 0) {
                b.append(r.nextBoolean() ? '-' : '_');
            }
            int parts = 1 + r.nextInt(3);
            for (int p = 0; p < parts; p++) {
                b.append(SYLLABLES[r.nextInt(SYLLABLES.length)]);
            }
        }
        return b.toString();
    }

    private static Document document(int i, String name) {
        return new Document(
                String.format("id%05d", i),
                "s" + (i % 7),
                name,
                null,
                i % 3 == 0,
                i % 13,
                Map.of(),
                ExploreText.trigrams(name),
                name,
                "");
    }

    @Test
    void everyNameAsLikeAsPgTrgmSaysIsFoundAndNoOther() {
        Random r = new Random(11);
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 6000; i++) {
            docs.add(document(i, name(r)));
        }
        ExploreIndexSnapshot snapshot = new ExploreIndexSnapshot(docs);
        for (int k = 0; k < 300; k++) {
            String q = k % 2 == 0
                    ? name(r)
                    : docs.get(r.nextInt(docs.size())).name().replace('a', 'e');
            long[] grams = ExploreText.trigrams(q);
            Set<String> expected = docs.stream()
                    .filter(d -> ExploreText.similarity(grams, d.trigrams()) >= ExploreText.LIKENESS)
                    .map(Document::id)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> alike = snapshot.alike(grams, false, 10_000, Map.of()).stream()
                    .map(Hit::id)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(expected, alike, q);
            Query fuzzyOnly = new Query(List.of(), List.of(), List.of(), grams, null, null, false);
            Set<String> searched = snapshot.search(fuzzyOnly, null, 10_000, Map.of()).stream()
                    .map(Hit::id)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertEquals(expected, searched, q);
        }
    }

    @Test
    void theLikestComeFirstThenByNameAndTheCatalogAndTheMaskedAreHonoured() {
        List<Document> docs = new ArrayList<>();
        String[] names = {"parser", "parsers", "parse", "parser-js", "sparser", "parsec"};
        for (int i = 0; i < names.length; i++) {
            docs.add(document(i, names[i]));
        }
        ExploreIndexSnapshot snapshot = new ExploreIndexSnapshot(docs);
        long[] grams = ExploreText.trigrams("parser");
        List<Hit> alike = snapshot.alike(grams, false, 10, Map.of());
        assertEquals("parser", alike.get(0).name());
        for (int i = 1; i < alike.size(); i++) {
            Hit a = alike.get(i - 1);
            Hit b = alike.get(i);
            assertEquals(
                    true,
                    a.rank() > b.rank() || (a.rank() == b.rank() && a.name().compareTo(b.name()) < 0));
        }
        // id00000 and id00003 are in the catalog; id00000 is masked (changed since the snapshot)
        assertEquals(
                List.of("id00003"),
                snapshot.alike(grams, true, 10, Map.of("id00000", "changed")).stream()
                        .map(Hit::id)
                        .toList());
    }
}
