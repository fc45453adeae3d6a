package dev.atrium.resources.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.billing.api.BillingGate;
import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.blob.api.BlobStore;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.UsageMeter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the core hands providers: a {@link ResourceContext} per call, made only after the caller was authorised, and the
 * translation of a provider's {@link ResourceException} into the spec's error answer.
 */
@Component(service = Runtime.class, configurationPid = "dev.atrium.resources")
@Designate(ocd = Runtime.Config.class)
@SuppressWarnings("JavaLangClash") // the resources core's runtime: java.lang.Runtime is not used in this package
public class Runtime {

    private static final Logger LOG = LoggerFactory.getLogger(Runtime.class);

    @ObjectClassDefinition(name = "Atrium resources")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "The data directory (--data, ATRIUM_DATA); providers' private directories live in its resources/")
        String dataDirectory() default "data";
    }

    static final ObjectMapper JSON = JsonMappers.create();

    private final DataSource dataSource;
    private final Path root;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile BlobStore blobStore;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile UsageRecorder usageRecorder;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile BillingGate billingGate;

    @Activate
    public Runtime(@Reference DataSource dataSource, Config config) {
        this.dataSource = dataSource;
        this.root = Path.of(config.dataDirectory()).toAbsolutePath().resolve("resources");
    }

    static Map<String, Object> parse(String json) {
        try {
            return JSON.readValue(json, new TypeReference<Map<String, Object>>() {});
        } catch (IOException e) {
            throw new IllegalStateException("stored JSON is not an object", e);
        }
    }

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The context of {@code row} for a call holding {@code access}. */
    public ResourceContext context(ResourceRow row, Access access) {
        return new Context(row, parse(row.config), parse(row.state), access);
    }

    /** As {@link #context(ResourceRow, Access)} with a config that is not stored yet. */
    public ResourceContext context(ResourceRow row, Map<String, Object> config, Access access) {
        return new Context(row, config, parse(row.state), access);
    }

    /** The current month's metered use of a resource, by meter, as billing keeps it (empty without billing). */
    public Map<String, Long> usage(String spaceId, String resourceId) {
        UsageRecorder recorder = usageRecorder;
        return recorder == null ? Map.of() : recorder.monthTotals(spaceId, resourceId);
    }

    /** The billing meter a provider's metric counts on, or null when billing does not meter it. */
    static String meter(String type, String metric) {
        return switch (type + "/" + metric) {
            case "vectorize/queries" -> Meters.VECTOR_QUERIES;
            case "queue/writes" -> Meters.QUEUE_WRITES;
            case "analyticsEngine/writes" -> Meters.ANALYTICS_WRITES;
            default -> null;
        };
    }

    /** Removes the private directory of a deleted resource. */
    void deleteDirectory(String resourceId) {
        Path dir = root.resolve(resourceId);
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.warn("resources: could not remove {}: {}", dir, e.toString());
        }
    }

    /** A provider's failure as the answer the client gets. */
    public static ApiException answer(ResourceException e) {
        String message = e.getMessage() == null ? "the resource provider failed" : e.getMessage();
        return switch (e.kind()) {
            case BAD_INPUT -> ApiException.badRequest(message);
            case FORBIDDEN -> ApiException.forbidden(message);
            case NOT_FOUND -> ApiException.notFound(message);
            case CONFLICT -> ApiException.conflict(message);
            case TOO_LARGE -> new ApiException(413, "PAYLOAD_TOO_LARGE", message);
            case UNAVAILABLE -> ApiException.unavailable(message);
        };
    }

    private final class Context implements ResourceContext, UsageMeter {
        private final ResourceRow row;
        private final Map<String, Object> config;
        private final Map<String, Object> state;
        private final Access access;

        Context(ResourceRow row, Map<String, Object> config, Map<String, Object> state, Access access) {
            this.row = row;
            this.config = Map.copyOf(config);
            this.state = Map.copyOf(state);
            this.access = access;
        }

        @Override
        public String resourceId() {
            return row.id;
        }

        @Override
        public String workspaceId() {
            return row.spaceId;
        }

        @Override
        public String name() {
            return row.name;
        }

        @Override
        public String type() {
            return row.type;
        }

        @Override
        public Map<String, Object> config() {
            return config;
        }

        @Override
        public Map<String, Object> state() {
            return state;
        }

        @Override
        public Access access() {
            return access;
        }

        @Override
        public DataSource dataSource() {
            return dataSource;
        }

        @Override
        public BlobStore blobStore() throws ResourceException {
            BlobStore store = blobStore;
            if (store == null) {
                throw new ResourceException(ResourceException.Kind.UNAVAILABLE, "no blob store is running");
            }
            return store;
        }

        @Override
        public Path dataDirectory() throws ResourceException {
            Path dir = root.resolve(row.id);
            try {
                return Files.createDirectories(dir);
            } catch (IOException e) {
                throw ResourceException.unavailable("the resource's directory cannot be created", e);
            }
        }

        @Override
        public UsageMeter usage() {
            return this;
        }

        @Override
        public void record(String metric, long amount) {
            UsageRecorder recorder = usageRecorder;
            String meter = metric == null ? null : meter(row.type, metric);
            if (recorder == null || meter == null || amount <= 0) {
                return;
            }
            recorder.record(
                    new UsageEvent(row.spaceId, meter, row.id, amount, "resource:" + UUID.randomUUID(), Instant.now()));
        }

        @Override
        public void admit(String metric) {
            BillingGate gate = billingGate;
            String meter = metric == null ? null : meter(row.type, metric);
            if (gate == null || meter == null) {
                return;
            }
            BillingGate.Decision d = gate.check(row.spaceId, meter);
            if (!d.allowed()) {
                throw new ApiException(402, "PAYMENT_REQUIRED", d.reason());
            }
        }
    }

    static List<String> knownTypes() {
        return List.of(
                "d1", "r2", "kv", "queue", "vectorize", "analyticsEngine", "secretRef", "workflow", "durableObject");
    }

    static ApiException unexpected(String what) {
        return ApiException.badRequest(what);
    }
}
