package dev.atrium.search.internal;

import dev.atrium.billing.api.BillingGate;
import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.search.api.IndexSource;
import dev.atrium.search.api.IndexSource.Item;
import dev.atrium.search.api.SemanticSearch;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Answers of a workspace's search: PostgreSQL full text over {@code search_items} and the nearest vectors of the
 * workspace's Lucene index, merged by reciprocal rank fusion ({@code 1 / (60 + rank)} summed over both lists), then
 * read from their sources as they are now (a deleted item is dropped, and forgotten by the index). The vector part is
 * asked of the billing gate ({@code vector_queries}); refused, the answer is keyword-only and says why. Answers are
 * kept for {@link SearchSettings#cache()} unless the workspace's index changed since.
 */
@Component(service = {HybridSearch.class, SemanticSearch.class})
public class HybridSearch implements SemanticSearch {

    static final int RRF_K = 60;
    /** Candidates each list brings to the fusion: twice the results asked for, 20 to 50. */
    static int candidates(int limit) {
        return Math.min(50, Math.max(20, 2 * limit));
    }

    private static final int CACHE_ENTRIES = 10_000;

    private final SearchIndex index;
    private final SearchSettings settings;
    private final Map<String, Cached> cache = new ConcurrentHashMap<>();
    private final Map<String, float[]> queryVectors = new ConcurrentHashMap<>();

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile BillingGate gate;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile UsageRecorder usage;

    @Activate
    public HybridSearch(@Reference SearchIndex index, @Reference SearchSettings settings) {
        this.index = index;
        this.settings = settings;
    }

    private record Cached(Answer answer, long version, long expiresAtNanos) {}

    /** One result: the item as its source has it now, its fused score, and which lists found it. */
    record Result(
            String kind,
            String id,
            String parentId,
            String title,
            String snippet,
            double score,
            Integer keywordRank,
            Double similarity) {}

    /**
     * @param mode        {@code hybrid}, or {@code keyword} when the vector part was not asked
     * @param vectorSkipped why the vector part was left out, or null
     */
    record Answer(String query, String mode, String vectorSkipped, List<Result> results, boolean cached) {}

    Answer search(String spaceId, String query, int limit) {
        String key = spaceId + "\u0000" + limit + "\u0000" + query;
        long version = index.version(spaceId);
        Cached hit = cache.get(key);
        if (hit != null && hit.version == version && System.nanoTime() < hit.expiresAtNanos) {
            Answer a = hit.answer;
            return new Answer(a.query(), a.mode(), a.vectorSkipped(), a.results(), true);
        }
        List<String> keyword = keyword(spaceId, query, candidates(limit));
        List<SpaceIndexes.Hit> vector = List.of();
        String skipped = null;
        if (!index.vectorsConfigured()) {
            skipped = "no embeddings API is configured";
        } else {
            BillingGate.Decision d = vectorQuery(spaceId);
            if (!d.allowed()) {
                skipped = "billing: " + d.reason();
            } else {
                try {
                    vector = index.lucene(spaceId).nearest(spaceId, queryVector(query), Set.of(), candidates(limit));
                    meter(spaceId);
                } catch (IOException e) {
                    skipped = "the vector search failed: " + e.getMessage();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    skipped = "interrupted";
                }
            }
        }
        Map<String, double[]> fused = new LinkedHashMap<>();
        Map<String, Integer> keywordRanks = new LinkedHashMap<>();
        Map<String, Double> similarities = new LinkedHashMap<>();
        for (int i = 0; i < keyword.size(); i++) {
            fused.computeIfAbsent(keyword.get(i), k -> new double[1])[0] += 1.0 / (RRF_K + i + 1);
            keywordRanks.put(keyword.get(i), i + 1);
        }
        for (int i = 0; i < vector.size(); i++) {
            fused.computeIfAbsent(vector.get(i).key(), k -> new double[1])[0] += 1.0 / (RRF_K + i + 1);
            similarities.put(vector.get(i).key(), vector.get(i).similarity());
        }
        List<Map.Entry<String, double[]>> order = new ArrayList<>(fused.entrySet());
        order.sort((a, b) -> Double.compare(b.getValue()[0], a.getValue()[0]));
        List<String> keys = order.stream().map(Map.Entry::getKey).toList();
        Map<String, Item> items = resolve(spaceId, keys);
        List<Result> results = new ArrayList<>();
        for (Map.Entry<String, double[]> e : order) {
            Item item = items.get(e.getKey());
            if (item == null) {
                continue;
            }
            if (results.size() == limit) {
                break;
            }
            results.add(new Result(
                    kind(e.getKey()),
                    item.id(),
                    item.parentId(),
                    item.title(),
                    snippet(item.text()),
                    Math.round(e.getValue()[0] * 1e6) / 1e6,
                    keywordRanks.get(e.getKey()),
                    similarities.get(e.getKey())));
        }
        Answer answer = new Answer(query, skipped == null ? "hybrid" : "keyword", skipped, List.copyOf(results), false);
        if (!settings.cache().isZero()) {
            if (cache.size() >= CACHE_ENTRIES) {
                cache.clear();
            }
            cache.put(
                    key,
                    new Cached(
                            answer,
                            version,
                            System.nanoTime() + settings.cache().toNanos()));
        }
        return answer;
    }

    @Override
    public List<Hit> nearest(String spaceId, String query, Set<String> kinds, int limit) {
        if (!index.vectorsConfigured()) {
            throw new IllegalStateException("no embeddings API is configured (ATRIUM_EMBEDDINGS_BASE_URL)");
        }
        requireVectorQuery(spaceId);
        try {
            List<SpaceIndexes.Hit> hits = index.lucene(spaceId).nearest(spaceId, queryVector(query), kinds, limit);
            meter(spaceId);
            Map<String, Item> items =
                    resolve(spaceId, hits.stream().map(SpaceIndexes.Hit::key).toList());
            List<Hit> out = new ArrayList<>();
            for (SpaceIndexes.Hit h : hits) {
                Item item = items.get(h.key());
                if (item != null) {
                    out.add(new Hit(kind(h.key()), item.id(), item.parentId(), h.similarity()));
                }
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("the vector search failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Items nearest to a stored item's own embedding (graph neighbours), without it. */
    List<SpaceIndexes.Hit> similarTo(String spaceId, String kind, String id, int limit) throws IOException {
        Optional<byte[]> embedding = index.sql()
                .one(
                        "SELECT embedding FROM search_items WHERE space_id = ? AND kind = ? AND item_id = ?"
                                + " AND embedding IS NOT NULL",
                        rs -> rs.getBytes(1),
                        spaceId,
                        kind,
                        id);
        if (embedding.isEmpty()) {
            return List.of();
        }
        String self = kind + ":" + id;
        return index
                .lucene(spaceId)
                .nearest(spaceId, SpaceIndexes.decode(embedding.get()), Set.of(), limit + 1)
                .stream()
                .filter(h -> !h.key().equals(self))
                .limit(limit)
                .toList();
    }

    /** Billing's answer to a vector query of the workspace; allowed when billing does not run. */
    private BillingGate.Decision vectorQuery(String spaceId) {
        BillingGate g = gate;
        return g == null ? BillingGate.Decision.allow(Meters.VECTOR_QUERIES) : g.check(spaceId, Meters.VECTOR_QUERIES);
    }

    /** 402 {@code PAYMENT_REQUIRED} when billing refuses the workspace a vector query. */
    void requireVectorQuery(String spaceId) {
        BillingGate.Decision d = vectorQuery(spaceId);
        if (!d.allowed()) {
            throw new ApiException(402, "PAYMENT_REQUIRED", d.reason());
        }
    }

    /** Counts one vector query of the workspace. */
    void meter(String spaceId) {
        UsageRecorder u = usage;
        if (u != null) {
            u.record(new UsageEvent(
                    spaceId, Meters.VECTOR_QUERIES, "search", 1, Ids.random("search-", 24), Instant.now()));
        }
    }

    private float[] queryVector(String query) throws IOException, InterruptedException {
        float[] v = queryVectors.get(query);
        if (v == null) {
            v = index.embed(List.of(query)).get(0);
            if (queryVectors.size() >= 1000) {
                queryVectors.clear();
            }
            queryVectors.put(query, v);
        }
        return v;
    }

    /**
     * Keys ({@code kind:id}) of the workspace's items matching any word of {@code query} in full text (English
     * stemming), those matching more and closer words first: a search box's words are alternatives to rank by, not
     * conditions that all must hold.
     */
    List<String> keyword(String spaceId, String query, int limit) {
        return index.sql()
                .list(
                        "SELECT kind || ':' || item_id FROM search_items,"
                                + " CAST(replace(CAST(plainto_tsquery('english', ?) AS text), ' & ', ' | ') AS tsquery) q"
                                + " WHERE space_id = ? AND search @@ q ORDER BY ts_rank_cd(search, q) DESC,"
                                + " changed_at DESC LIMIT ?",
                        rs -> rs.getString(1),
                        query,
                        spaceId,
                        limit);
    }

    /** The items behind {@code keys} as their sources have them now; missing ones are forgotten by the index. */
    Map<String, Item> resolve(String spaceId, Collection<String> keys) {
        Map<String, List<String>> byKind = new LinkedHashMap<>();
        for (String key : keys) {
            byKind.computeIfAbsent(kind(key), k -> new ArrayList<>()).add(key.substring(key.indexOf(':') + 1));
        }
        Map<String, Item> out = new LinkedHashMap<>();
        for (var e : byKind.entrySet()) {
            Optional<IndexSource> source = index.source(e.getKey());
            if (source.isEmpty()) {
                continue; // its capability is not running: its items are not shown, and kept
            }
            Map<String, Item> now = source.get().current(spaceId, e.getValue());
            Set<String> gone = new HashSet<>(e.getValue());
            for (Item item : now.values()) {
                if (spaceId.equals(item.spaceId())) {
                    out.put(e.getKey() + ":" + item.id(), item);
                    gone.remove(item.id());
                }
            }
            index.forget(spaceId, e.getKey(), gone);
        }
        return out;
    }

    static String kind(String key) {
        return key.substring(0, key.indexOf(':'));
    }

    static String snippet(String text) {
        if (text == null) {
            return "";
        }
        String flat = text.replaceAll("\\s+", " ").strip();
        return flat.length() <= 200 ? flat : flat.substring(0, 199) + "…";
    }
}
