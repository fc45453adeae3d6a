package dev.atrium.repos.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Every public repository as explore's index holds it at one moment: postings of lexemes (with the weights of their
 * positions) and of name trigrams, and the names in order. Never changed once built; what changed since is an overlay
 * ({@link ExploreIndex}). Documents are numbered in id order, so a document's number orders ties as its id does.
 */
final class ExploreIndexSnapshot {

    /**
     * One public repository as the index reads it; {@code name} and {@code language} are lower-cased, {@code
     * displayName} and {@code description} are as written (what a suggestion shows).
     */
    record Document(
            String id,
            String spaceId,
            String name,
            String language,
            boolean catalog,
            int stars,
            Map<String, byte[]> lexemes,
            long[] trigrams,
            String displayName,
            String description) {}

    /** The documents holding a lexeme, ascending, with the weights of its positions in each. */
    private record Postings(int[] docs, int[] start, byte[] weights) {}

    private static final class PostingsBuilder {
        private int[] docs = new int[4];
        private int[] start = new int[5];
        private byte[] weights = new byte[8];
        private int size;

        void add(int doc, byte[] w) {
            if (size == docs.length) {
                docs = Arrays.copyOf(docs, docs.length * 2);
            }
            if (size + 1 == start.length) {
                start = Arrays.copyOf(start, start.length * 2);
            }
            int at = start[size];
            if (at + w.length > weights.length) {
                weights = Arrays.copyOf(weights, Math.max(weights.length * 2, at + w.length));
            }
            System.arraycopy(w, 0, weights, at, w.length);
            docs[size++] = doc;
            start[size] = at + w.length;
        }

        Postings build() {
            return new Postings(
                    Arrays.copyOf(docs, size), Arrays.copyOf(start, size + 1), Arrays.copyOf(weights, start[size]));
        }
    }

    /** What a search asks: the lexemes of its two groups, its name for likeness (one-word queries), its filters. */
    record Query(
            List<String> simple,
            List<String> english,
            List<String> distinct,
            long[] nameTrigrams,
            String language,
            java.util.Set<String> spaceIds,
            boolean catalog) {

        boolean keeps(Document d) {
            return keeps(d.language(), d.spaceId(), d.catalog());
        }

        boolean keeps(String docLanguage, String docSpace, boolean docCatalog) {
            return (language == null || language.equals(docLanguage))
                    && (spaceIds == null || spaceIds.contains(docSpace))
                    && (!catalog || docCatalog);
        }

        /** The rank of a document that matches, or NaN: ts_rank plus, for one word, the name's likeness. */
        float rank(Document d) {
            boolean matched = holdsAll(d, simple) || holdsAll(d, english);
            float likeness = nameTrigrams == null ? 0f : ExploreText.similarity(nameTrigrams, d.trigrams());
            if (!matched && !(nameTrigrams != null && likeness >= ExploreText.LIKENESS)) {
                return Float.NaN;
            }
            byte[][] weights = new byte[distinct.size()][];
            for (int i = 0; i < weights.length; i++) {
                weights[i] = d.lexemes().get(distinct.get(i));
            }
            return ExploreText.rankOr(weights, distinct.size()) + likeness;
        }

        private static boolean holdsAll(Document d, List<String> group) {
            return !group.isEmpty() && d.lexemes().keySet().containsAll(group);
        }
    }

    /**
     * A ranked document: best first is rank descending, then id descending (as the SQL orders its ties); with what a
     * suggestion shows of it.
     */
    record Hit(String id, float rank, int stars, String name, String spaceId, String displayName, String description) {

        /** A cursor's place in the best order. */
        static Hit after(float rank, String id) {
            return new Hit(id, rank, 0, "", null, null, null);
        }

        static final Comparator<Hit> BEST = Comparator.comparingDouble((Hit h) -> h.rank())
                .reversed()
                .thenComparing(Hit::id, Comparator.reverseOrder());
    }

    /** The first names with a prefix that are read to pick the most starred from, as the SQL reads 50. */
    static final int PREFIX_CANDIDATES = 50;

    private static final int MATCHED = 1 << 30;

    final String[] ids;
    private final String[] names;
    private final String[] spaceIds;
    private final String[] displayNames;
    private final String[] descriptions;
    private final String[] languages;
    private final boolean[] catalog;
    private final int[] stars;
    private final int[] trigramCounts;
    private final int[] byName;
    /** Each document's place in {@link #byName}: ties of likeness go in name order by it. */
    private final int[] nameRank;

    private final Map<String, Postings> lexemes;
    private final Map<Long, int[]> trigrams;
    /** The commonest trigrams' documents as bitmaps too, for a lookup in constant time. */
    private final Map<Long, long[]> commonTrigrams;
    /** Counters of shared trigrams, one per document, lent to one query at a time and left zeroed. */
    private final ConcurrentLinkedQueue<int[]> counters = new ConcurrentLinkedQueue<>();

    ExploreIndexSnapshot(List<Document> documents) {
        List<Document> docs = new ArrayList<>(documents);
        docs.sort(Comparator.comparing(Document::id));
        int n = docs.size();
        ids = new String[n];
        names = new String[n];
        spaceIds = new String[n];
        displayNames = new String[n];
        descriptions = new String[n];
        languages = new String[n];
        catalog = new boolean[n];
        stars = new int[n];
        trigramCounts = new int[n];
        Map<String, String> interned = new HashMap<>();
        Map<String, PostingsBuilder> lexemeLists = new HashMap<>();
        Map<Long, int[]> trigramLists = new HashMap<>();
        Map<Long, Integer> trigramSizes = new HashMap<>();
        for (int d = 0; d < n; d++) {
            Document doc = docs.get(d);
            ids[d] = doc.id();
            names[d] = doc.name();
            displayNames[d] = doc.displayName().equals(doc.name()) ? names[d] : doc.displayName();
            descriptions[d] = doc.description();
            spaceIds[d] = interned.computeIfAbsent(doc.spaceId(), s -> s);
            languages[d] = doc.language() == null ? null : interned.computeIfAbsent(doc.language(), s -> s);
            catalog[d] = doc.catalog();
            stars[d] = doc.stars();
            trigramCounts[d] = doc.trigrams().length;
            for (Map.Entry<String, byte[]> e : doc.lexemes().entrySet()) {
                lexemeLists
                        .computeIfAbsent(e.getKey(), k -> new PostingsBuilder())
                        .add(d, e.getValue());
            }
            for (long t : doc.trigrams()) {
                int size = trigramSizes.merge(t, 1, Integer::sum);
                int[] list = trigramLists.get(t);
                if (list == null || list.length < size) {
                    list = list == null ? new int[4] : Arrays.copyOf(list, list.length * 2);
                    trigramLists.put(t, list);
                }
                list[size - 1] = d;
            }
        }
        lexemes = new HashMap<>(lexemeLists.size() * 2);
        lexemeLists.forEach((lexeme, b) -> lexemes.put(lexeme, b.build()));
        trigrams = new HashMap<>(trigramLists.size() * 2);
        commonTrigrams = new HashMap<>();
        for (Map.Entry<Long, int[]> e : trigramLists.entrySet()) {
            int[] list = Arrays.copyOf(e.getValue(), trigramSizes.get(e.getKey()));
            trigrams.put(e.getKey(), list);
            if (list.length >= Math.max(64, n / 64)) {
                long[] bits = new long[(n + 63) / 64];
                for (int d : list) {
                    bits[d >>> 6] |= 1L << d;
                }
                commonTrigrams.put(e.getKey(), bits);
            }
        }
        Integer[] order = new Integer[n];
        for (int d = 0; d < n; d++) {
            order[d] = d;
        }
        Arrays.sort(order, Comparator.comparing((Integer d) -> names[d]).thenComparing(d -> ids[d]));
        byName = Arrays.stream(order).mapToInt(Integer::intValue).toArray();
        nameRank = new int[n];
        for (int k = 0; k < n; k++) {
            nameRank[byName[k]] = k;
        }
    }

    int size() {
        return ids.length;
    }

    /**
     * The documents a search matches, ranked, best first, after {@code after} (a cursor's hit) when given, at most
     * {@code max}; documents whose ids {@code masked} holds (changed since this snapshot) are left out.
     */
    List<Hit> search(Query q, Hit after, int max, Map<String, ?> masked) {
        Candidates c = new Candidates(q.nameTrigrams() == null ? new long[0] : q.nameTrigrams());
        // each lexeme's slots: a document's place in the lexeme's postings, plus one (0 where it does not hold it)
        List<String> distinct = q.distinct();
        Postings[] postings = new Postings[distinct.size()];
        int[][] slots = new int[postings.length][];
        try {
            c.countRarest();
            for (int i = 0; i < postings.length; i++) {
                postings[i] = lexemes.get(distinct.get(i));
                if (postings[i] != null) {
                    slots[i] = borrow();
                    int[] docs = postings[i].docs();
                    for (int k = 0; k < docs.length; k++) {
                        slots[i][docs[k]] = k + 1;
                    }
                }
            }
            for (List<String> group : List.of(q.simple(), q.english())) {
                int[] held = holdingAll(group, distinct, postings, slots);
                for (int d : held) {
                    c.touch(d);
                    c.counts[d] |= MATCHED;
                }
            }
            byte[][] weights = new byte[postings.length][];
            int[] from = new int[postings.length];
            int[] to = new int[postings.length];
            TopHits best = new TopHits(max);
            for (int k = 0; k < c.touchedCount; k++) {
                int d = c.touched[k];
                boolean matched = (c.counts[d] & MATCHED) != 0;
                int counted = c.counts[d] & ~MATCHED;
                if (!matched && !c.mayBeAlike(d, counted)) {
                    continue;
                }
                float likeness = c.nq == 0 ? 0f : ExploreText.similarity(c.shared(d, counted), c.nq, trigramCounts[d]);
                if (!matched && likeness < ExploreText.LIKENESS) {
                    continue;
                }
                if (!q.keeps(languages[d], spaceIds[d], catalog[d])
                        || (!masked.isEmpty() && masked.containsKey(ids[d]))) {
                    continue;
                }
                for (int i = 0; i < postings.length; i++) {
                    int at = slots[i] == null ? -1 : slots[i][d] - 1;
                    weights[i] = at < 0 ? null : postings[i].weights();
                    from[i] = at < 0 ? 0 : postings[i].start()[at];
                    to[i] = at < 0 ? 0 : postings[i].start()[at + 1];
                }
                float rank = ExploreText.rankOr(weights, from, to, postings.length) + likeness;
                if (after != null
                        && (rank > after.rank() || (rank == after.rank() && ids[d].compareTo(after.id()) >= 0))) {
                    continue;
                }
                best.offer(rank, d);
            }
            List<Hit> out = new ArrayList<>(best.size);
            for (int i = 0; i < best.size; i++) {
                int d = best.docs[i];
                out.add(hit(d, best.ranks[i]));
            }
            return out;
        } finally {
            c.release();
            for (int i = 0; i < slots.length; i++) {
                if (slots[i] != null) {
                    for (int d : postings[i].docs()) {
                        slots[i][d] = 0;
                    }
                    counters.add(slots[i]);
                }
            }
        }
    }

    /** The best few documents by rank, then by a number that orders ties (larger first); kept sorted, best first. */
    private static final class TopHits {
        final float[] ranks;
        final int[] docs;
        int size;

        TopHits(int max) {
            ranks = new float[Math.max(0, max)];
            docs = new int[Math.max(0, max)];
        }

        void offer(float rank, int doc) {
            int max = ranks.length;
            if (max == 0 || (size == max && !better(rank, doc, ranks[size - 1], docs[size - 1]))) {
                return;
            }
            int at = size == max ? max - 1 : size++;
            while (at > 0 && better(rank, doc, ranks[at - 1], docs[at - 1])) {
                ranks[at] = ranks[at - 1];
                docs[at] = docs[at - 1];
                at--;
            }
            ranks[at] = rank;
            docs[at] = doc;
        }

        private static boolean better(float rank, int doc, float otherRank, int otherDoc) {
            return rank > otherRank || (rank == otherRank && doc > otherDoc);
        }
    }

    /** Keeps {@code hit} among the best {@code max} after {@code after}. */
    static void offer(PriorityQueue<Hit> best, Hit hit, Hit after, int max) {
        if (after != null && Hit.BEST.compare(hit, after) <= 0) {
            return;
        }
        if (best.size() < max) {
            best.add(hit);
        } else if (Hit.BEST.compare(hit, best.peek()) < 0) {
            best.poll();
            best.add(hit);
        }
    }

    static List<Hit> drain(PriorityQueue<Hit> best) {
        List<Hit> out = new ArrayList<>(best);
        out.sort(Hit.BEST);
        return out;
    }

    /** The documents that hold every lexeme of a group (none for an empty group), by the lexemes' slots. */
    private static int[] holdingAll(List<String> group, List<String> distinct, Postings[] postings, int[][] slots) {
        if (group.isEmpty()) {
            return new int[0];
        }
        int smallest = -1;
        int[] members = new int[group.size()];
        for (int g = 0; g < group.size(); g++) {
            int i = distinct.indexOf(group.get(g));
            if (postings[i] == null) {
                return new int[0];
            }
            members[g] = i;
            if (smallest < 0 || postings[i].docs().length < postings[smallest].docs().length) {
                smallest = i;
            }
        }
        int[] docs = postings[smallest].docs();
        int[] out = new int[docs.length];
        int count = 0;
        for (int d : docs) {
            boolean all = true;
            for (int i : members) {
                if (slots[i][d] == 0) {
                    all = false;
                    break;
                }
            }
            if (all) {
                out[count++] = d;
            }
        }
        return Arrays.copyOf(out, count);
    }

    /**
     * The first {@value #PREFIX_CANDIDATES} names starting with {@code prefix}, in name order, as hits (rank 1), left
     * out what {@code masked} holds and, with {@code catalogOnly}, what is not in the catalog.
     */
    List<Hit> prefixed(String prefix, boolean catalogOnly, Map<String, ?> masked) {
        int lo = 0;
        int hi = byName.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (names[byName[mid]].compareTo(prefix) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        List<Hit> out = new ArrayList<>();
        for (int k = lo; k < byName.length && out.size() < PREFIX_CANDIDATES; k++) {
            int d = byName[k];
            if (!names[d].startsWith(prefix)) {
                break;
            }
            if ((catalogOnly && !catalog[d]) || (!masked.isEmpty() && masked.containsKey(ids[d]))) {
                continue;
            }
            out.add(hit(d, 1f));
        }
        return out;
    }

    /** Names like {@code nameTrigrams} by pg_trgm's likeness (at least 0.3), the likest first, at most {@code max}. */
    List<Hit> alike(long[] nameTrigrams, boolean catalogOnly, int max, Map<String, ?> masked) {
        Candidates c = new Candidates(nameTrigrams);
        try {
            c.countRarest();
            // the best by likeness, then name order (nameRank ascending, negated so that larger is better)
            TopHits best = new TopHits(max);
            for (int k = 0; k < c.touchedCount; k++) {
                int d = c.touched[k];
                int counted = c.counts[d];
                if (!c.mayBeAlike(d, counted)
                        || (catalogOnly && !catalog[d])
                        || (!masked.isEmpty() && masked.containsKey(ids[d]))) {
                    continue;
                }
                float likeness = ExploreText.similarity(c.shared(d, counted), c.nq, trigramCounts[d]);
                if (likeness >= ExploreText.LIKENESS) {
                    best.offer(likeness, -nameRank[d]);
                }
            }
            List<Hit> out = new ArrayList<>(best.size);
            for (int i = 0; i < best.size; i++) {
                int d = byName[-best.docs[i]];
                out.add(hit(d, best.ranks[i]));
            }
            return out;
        } finally {
            c.release();
        }
    }

    /**
     * The documents whose names may be alike a query's trigrams, counted without reading every list: a name alike
     * enough shares at least 30 % of the query's trigrams (c >= 0.3 (nq + nd - c) and nd >= c), so it is in one of
     * the rarest {@code lists - least + 1} lists. Only those are counted; the commonest are looked up (in bitmaps
     * where they have one) for the documents that may still reach 0.3.
     */
    private final class Candidates {
        final int nq;
        final int[] counts = borrow();
        int[] touched = new int[64];
        int touchedCount;
        private final int least;
        private final int[][] rarest;
        private final long[][] commonBits;
        private final int[][] common;

        Candidates(long[] grams) {
            nq = grams.length;
            least = (3 * nq + 9) / 10;
            long[][] order = new long[nq][];
            int lists = 0;
            for (long t : grams) {
                int[] list = trigrams.get(t);
                if (list != null) {
                    order[lists++] = new long[] {list.length, t};
                }
            }
            Arrays.sort(order, 0, lists, Comparator.comparingLong((long[] o) -> o[0]));
            int counted = nq == 0 ? 0 : Math.min(lists, Math.max(0, lists - least + 1));
            rarest = new int[counted][];
            commonBits = new long[lists - counted][];
            common = new int[lists - counted][];
            for (int i = 0; i < lists; i++) {
                if (i < counted) {
                    rarest[i] = trigrams.get(order[i][1]);
                } else {
                    commonBits[i - counted] = commonTrigrams.get(order[i][1]);
                    common[i - counted] = trigrams.get(order[i][1]);
                }
            }
        }

        void touch(int d) {
            if (counts[d] == 0) {
                if (touchedCount == touched.length) {
                    touched = Arrays.copyOf(touched, touchedCount * 2);
                }
                touched[touchedCount++] = d;
            }
        }

        void countRarest() {
            for (int[] list : rarest) {
                for (int d : list) {
                    touch(d);
                    counts[d]++;
                }
            }
        }

        /** Whether {@code d}, sharing {@code counted} of the rarest, can still share 3 (nq + nd) / 13 in all. */
        boolean mayBeAlike(int d, int counted) {
            return counted + common.length >= Math.max(least, 3 * (nq + trigramCounts[d]) / 13);
        }

        /** The trigrams {@code d} shares with the query: {@code counted} of the rarest, and the commonest it holds. */
        int shared(int d, int counted) {
            int shared = counted;
            for (int i = 0; i < common.length; i++) {
                long[] bits = commonBits[i];
                if (bits != null ? (bits[d >>> 6] & (1L << d)) != 0 : Arrays.binarySearch(common[i], d) >= 0) {
                    shared++;
                }
            }
            return shared;
        }

        /** Zeroes what was counted and lends the counters out again. */
        void release() {
            for (int k = 0; k < touchedCount; k++) {
                counts[touched[k]] = 0;
            }
            counters.add(counts);
        }
    }

    /** Likest first, then by name and id, so equal likeness comes in a stable order. */
    static final Comparator<Hit> ALIKE = Comparator.comparingDouble((Hit h) -> h.rank())
            .reversed()
            .thenComparing(Hit::name)
            .thenComparing(Hit::id);

    private Hit hit(int d, float rank) {
        return new Hit(ids[d], rank, stars[d], names[d], spaceIds[d], displayNames[d], descriptions[d]);
    }

    private int[] borrow() {
        int[] c = counters.poll();
        return c != null ? c : new int[ids.length];
    }
}
