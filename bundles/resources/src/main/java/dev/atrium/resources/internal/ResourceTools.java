package dev.atrium.resources.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.AnalyticsFacet;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.VectorFacet;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.ToolArguments;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The run-time capabilities of vector indexes and analytics datasets as agent tools ({@code vectorize_upsert},
 * {@code vectorize_query}, {@code analytics_write}), offered only to runs holding the DESIGN §2 grant each names
 * ({@code vectorize.write}, {@code storage.read}, {@code analytics.write}). A tool reaches only resources owned by the
 * run's workspace ({@link AgentTool.Context#spaceId()}, proven by the tool executor just before the call), by name,
 * and calls the provider the way the HTTP routes do: through the core's context, so the provider never sees the
 * Principal. They live in the core, not in a provider bundle, because the core is what authorises.
 */
final class ResourceTools {

    static final ObjectMapper JSON = JsonMappers.create();

    private ResourceTools() {}

    /** The resource named {@code name} of {@code type} in the run's workspace, with its running provider. */
    record Target(ResourceRow row, ResourceProvider provider) {}

    static Target target(ResourceStore store, Providers providers, String spaceId, String name, String type)
            throws IOException {
        ResourceRow row = store.byName(name).stream()
                .filter(r -> r.spaceId.equals(spaceId) && r.type.equals(type))
                .findFirst()
                .orElseThrow(() -> new IOException("this workspace has no " + type + " resource named '" + name + "'"));
        ResourceProvider provider = providers
                .find(row.type, row.backend)
                .orElseThrow(() -> new IOException(
                        "the resource provider " + row.type + "/" + row.backend + " is not running; try later"));
        return new Target(row, provider);
    }

    static IOException failed(ResourceException e) {
        return new IOException(e.getMessage() == null ? "the resource provider failed" : e.getMessage());
    }

    static float[] floats(JsonNode values, String what) throws IOException {
        if (values == null || !values.isArray() || values.isEmpty()) {
            throw new IOException(what + " must be a non-empty array of numbers");
        }
        float[] out = new float[values.size()];
        for (int i = 0; i < out.length; i++) {
            if (!values.get(i).isNumber()) {
                throw new IOException(what + " must be a non-empty array of numbers");
            }
            out[i] = (float) values.get(i).asDouble();
        }
        return out;
    }

    static Map<String, Object> object(JsonNode node, String what) throws IOException {
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw new IOException(what + " must be an object");
        }
        return JSON.convertValue(node, new TypeReference<Map<String, Object>>() {});
    }

    @Component(service = AgentTool.class)
    public static class VectorizeUpsert implements AgentTool {
        private final ResourceStore store;
        private final Providers providers;
        private final Runtime runtime;

        @Activate
        public VectorizeUpsert(
                @Reference ResourceStore store, @Reference Providers providers, @Reference Runtime runtime) {
            this.store = store;
            this.providers = providers;
            this.runtime = runtime;
        }

        @Override
        public String name() {
            return "vectorize_upsert";
        }

        @Override
        public String description() {
            return "Insert or replace vectors (id, values, optional metadata object) in one of the workspace's vectorize indexes, by index name.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"index\":{\"type\":\"string\"},\"vectors\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
                    + "\"properties\":{\"id\":{\"type\":\"string\"},\"values\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}},\"metadata\":{\"type\":\"object\"}},"
                    + "\"required\":[\"id\",\"values\"]}}},\"required\":[\"index\",\"vectors\"]}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of("vectorize.write"); // DESIGN §2
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            JsonNode args = ToolArguments.parse(arguments);
            Target t = target(store, providers, context.spaceId(), ToolArguments.text(args, "index"), "vectorize");
            if (!(t.provider() instanceof VectorFacet facet)) {
                throw new IOException("this index's provider has no vector operations");
            }
            JsonNode items = args.get("vectors");
            if (items == null || !items.isArray() || items.isEmpty()) {
                throw new IOException("vectors must be a non-empty array");
            }
            List<VectorFacet.Vector> vectors = new ArrayList<>();
            for (JsonNode v : items) {
                vectors.add(new VectorFacet.Vector(
                        ToolArguments.text(v, "id"),
                        floats(v.get("values"), "values"),
                        object(v.get("metadata"), "metadata")));
            }
            try {
                facet.upsert(runtime.context(t.row(), Access.WRITE), vectors);
            } catch (ResourceException e) {
                throw failed(e);
            }
            return JSON.writeValueAsString(Map.of("upserted", vectors.size()));
        }
    }

    @Component(service = AgentTool.class)
    public static class VectorizeQuery implements AgentTool {
        private final ResourceStore store;
        private final Providers providers;
        private final Runtime runtime;

        @Activate
        public VectorizeQuery(
                @Reference ResourceStore store, @Reference Providers providers, @Reference Runtime runtime) {
            this.store = store;
            this.providers = providers;
            this.runtime = runtime;
        }

        @Override
        public String name() {
            return "vectorize_query";
        }

        @Override
        public String description() {
            return "Find the top_k vectors nearest to a query vector in one of the workspace's vectorize indexes, optionally only those whose metadata equals every field of filter.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"index\":{\"type\":\"string\"},\"vector\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}},"
                    + "\"top_k\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100},\"filter\":{\"type\":\"object\"}},\"required\":[\"index\",\"vector\"]}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of("storage.read"); // DESIGN §2: reading the workspace's stored data (as memory_search)
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            JsonNode args = ToolArguments.parse(arguments);
            Target t = target(store, providers, context.spaceId(), ToolArguments.text(args, "index"), "vectorize");
            if (!(t.provider() instanceof VectorFacet facet)) {
                throw new IOException("this index's provider has no vector operations");
            }
            int topK = args.has("top_k") ? args.get("top_k").asInt(0) : 10;
            try {
                List<VectorFacet.Match> matches = facet.query(
                        runtime.context(t.row(), Access.READ),
                        floats(args.get("vector"), "vector"),
                        topK,
                        object(args.get("filter"), "filter"));
                List<Map<String, Object>> out = new ArrayList<>();
                for (VectorFacet.Match m : matches) {
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("id", m.id());
                    one.put("score", m.score());
                    one.put("metadata", m.metadata());
                    out.add(one);
                }
                return JSON.writeValueAsString(Map.of("matches", out));
            } catch (ResourceException e) {
                throw failed(e);
            }
        }
    }

    @Component(service = AgentTool.class)
    public static class AnalyticsWrite implements AgentTool {
        private final ResourceStore store;
        private final Providers providers;
        private final Runtime runtime;

        @Activate
        public AnalyticsWrite(
                @Reference ResourceStore store, @Reference Providers providers, @Reference Runtime runtime) {
            this.store = store;
            this.providers = providers;
            this.runtime = runtime;
        }

        @Override
        public String name() {
            return "analytics_write";
        }

        @Override
        public String description() {
            return "Append data points (optional timestamp, at most one index, up to 20 blobs and 20 doubles) to one of the workspace's analyticsEngine datasets, by name.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"dataset\":{\"type\":\"string\"},\"points\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
                    + "\"properties\":{\"timestamp\":{\"type\":\"string\"},\"indexes\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
                    + "\"blobs\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"doubles\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}}}}}},"
                    + "\"required\":[\"dataset\",\"points\"]}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of("analytics.write"); // DESIGN §2
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            JsonNode args = ToolArguments.parse(arguments);
            Target t =
                    target(store, providers, context.spaceId(), ToolArguments.text(args, "dataset"), "analyticsEngine");
            if (!(t.provider() instanceof AnalyticsFacet facet)) {
                throw new IOException("this dataset's provider has no analytics operations");
            }
            JsonNode items = args.get("points");
            if (items == null || !items.isArray() || items.isEmpty()) {
                throw new IOException("points must be a non-empty array");
            }
            List<AnalyticsFacet.DataPoint> points = new ArrayList<>();
            for (JsonNode p : items) {
                Instant at = null;
                if (p.hasNonNull("timestamp")) {
                    try {
                        at = Instant.parse(p.get("timestamp").asText());
                    } catch (DateTimeParseException e) {
                        throw new IOException("timestamp is an ISO-8601 instant such as 2026-11-01T00:00:00Z");
                    }
                }
                points.add(new AnalyticsFacet.DataPoint(
                        at,
                        strings(p.get("indexes"), "indexes"),
                        strings(p.get("blobs"), "blobs"),
                        doubles(p.get("doubles"))));
            }
            try {
                facet.write(runtime.context(t.row(), Access.WRITE), points);
            } catch (ResourceException e) {
                throw failed(e);
            }
            return JSON.writeValueAsString(Map.of("written", points.size()));
        }

        private static List<String> strings(JsonNode node, String what) throws IOException {
            if (node == null || node.isNull()) {
                return List.of();
            }
            if (!node.isArray()) {
                throw new IOException(what + " must be an array of strings");
            }
            List<String> out = new ArrayList<>();
            for (JsonNode n : node) {
                if (!n.isTextual()) {
                    throw new IOException(what + " must be an array of strings");
                }
                out.add(n.asText());
            }
            return out;
        }

        private static List<Double> doubles(JsonNode node) throws IOException {
            if (node == null || node.isNull()) {
                return List.of();
            }
            if (!node.isArray()) {
                throw new IOException("doubles must be an array of numbers");
            }
            List<Double> out = new ArrayList<>();
            for (JsonNode n : node) {
                if (!n.isNumber()) {
                    throw new IOException("doubles must be an array of numbers");
                }
                out.add(n.asDouble());
            }
            return out;
        }
    }
}
