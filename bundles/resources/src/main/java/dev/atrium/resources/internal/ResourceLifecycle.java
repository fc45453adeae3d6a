package dev.atrium.resources.internal;

import dev.atrium.kernel.api.Ids;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creating and deleting a resource: the one code path of {@code POST/DELETE /api/resources} and of
 * {@link dev.atrium.resource.api.ResourceDirectory#create}/{@code delete}, which other capabilities (apps) call. It
 * speaks the directory's exceptions ({@link BadInput}, {@link NameTaken}, {@link ResourceException}); the routes turn
 * them into answers. Who may act on which workspace is decided before, by the caller of this class.
 */
final class ResourceLifecycle {

    private static final Logger LOG = LoggerFactory.getLogger(ResourceLifecycle.class);

    static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    static final Pattern TYPE = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,39}");

    /** A bad type, backend, name or config; the message is for the client (400 on a route). */
    static final class BadInput extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        BadInput(String message) {
            super(message);
        }
    }

    /** The workspace has a resource of that name already (409 on a route). */
    static final class NameTaken extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        NameTaken(String name) {
            super("a resource named '" + name + "' already exists in this workspace");
        }
    }

    private final ResourceStore store;
    private final Providers providers;
    private final Runtime runtime;
    /** The directory's notice to binding listeners: a deleted resource takes its bindings with it. */
    private final Consumer<Collection<String>> bindingsChanged;

    ResourceLifecycle(
            ResourceStore store, Providers providers, Runtime runtime, Consumer<Collection<String>> bindingsChanged) {
        this.store = store;
        this.providers = providers;
        this.runtime = runtime;
        this.bindingsChanged = bindingsChanged;
    }

    /**
     * Creates and provisions a resource of {@code spaceId}: {@code backend} null for the type's default, {@code rawConfig}
     * checked against the provider's schema. A provision that fails takes the row away again.
     */
    ResourceRow create(String spaceId, String type, String backend, String name, Map<String, Object> rawConfig)
            throws ResourceException {
        requireName(name);
        requireType(type);
        String chosen =
                backend != null ? backend : providers.defaultBackend(type).orElse(null);
        if (chosen == null) {
            throw noProvider(type);
        }
        ResourceProvider provider = providers.find(type, chosen).orElse(null);
        if (provider == null) {
            if (providers.defaultBackend(type).isEmpty()) {
                throw noProvider(type);
            }
            throw new BadInput("no '" + type + "' provider has the backend '" + chosen + "'; running: "
                    + String.join(
                            ", ",
                            providers.all().stream()
                                    .filter(p -> p.type().equals(type))
                                    .map(Providers.Registered::backend)
                                    .toList()));
        }
        Map<String, Object> config = validate(provider, rawConfig == null ? Map.of() : rawConfig);

        ResourceRow row = new ResourceRow();
        row.id = Ids.id("res");
        row.spaceId = spaceId;
        row.name = name;
        row.type = type;
        row.backend = chosen;
        // write-only fields go to the provider, never into the row
        row.config = Runtime.json(provider.configSchema().withoutSecrets(config));
        row.state = "{}";
        row.createdAt = ResourceStore.now();
        row.updatedAt = row.createdAt;
        store.create(row);
        // the row first (its name is checked there), then the backend; a provision that fails takes the row away again
        Map<String, Object> state;
        try {
            state = provider.provision(runtime.context(row, config, Access.ADMIN));
        } catch (ResourceException | RuntimeException e) {
            store.delete(row.id);
            throw e;
        }
        if (state != null && !state.isEmpty()) {
            row = store.setState(row.id, Runtime.json(state));
        }
        return row;
    }

    /**
     * Deletes {@code row} with its grants, tokens and bindings, then its data; false when it was gone already. Without
     * its provider the data cannot be removed, so the rows stay (UNAVAILABLE) and nothing is orphaned.
     */
    boolean delete(ResourceRow row) throws ResourceException {
        ResourceProvider provider = providers
                .find(row.type, row.backend)
                .orElseThrow(() -> new ResourceException(
                        ResourceException.Kind.UNAVAILABLE, Providers.missingMessage(row.type, row.backend)));
        ResourceContext ctx = runtime.context(row, Access.ADMIN);
        List<String> bound =
                store.bindings(row.id).stream().map(b -> b.serviceId).toList();
        if (!store.delete(row.id)) {
            return false;
        }
        bindingsChanged.accept(bound);
        try {
            provider.deprovision(ctx);
        } catch (ResourceException | RuntimeException e) {
            LOG.warn(
                    "resources: {} ({}/{}) was deleted but its provider could not remove its data: {}",
                    row.id,
                    row.type,
                    row.backend,
                    e.toString());
        }
        runtime.deleteDirectory(row.id);
        return true;
    }

    static void requireType(String type) {
        if (type == null || !TYPE.matcher(type).matches()) {
            throw new BadInput("type must be a letter followed by up to 39 letters, digits, '_' or '-'");
        }
    }

    static String requireName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new BadInput(
                    "name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit");
        }
        return name;
    }

    /** The provider's schema applied to {@code raw}; a config it refuses is {@link BadInput}. */
    static Map<String, Object> validate(ResourceProvider provider, Map<String, Object> raw) throws ResourceException {
        try {
            return provider.configSchema().validate(raw);
        } catch (ResourceException e) {
            if (e.kind() == ResourceException.Kind.BAD_INPUT) {
                throw new BadInput(e.getMessage() == null ? "the config is not valid" : e.getMessage());
            }
            throw e;
        }
    }

    /**
     * The failure for a type with no running provider: a known type's is UNAVAILABLE (returned, to throw; a retry may
     * succeed once its provider runs), any other type is thrown here as {@link BadInput}.
     */
    private ResourceException noProvider(String type) {
        if (Runtime.knownTypes().contains(type)) {
            return new ResourceException(
                    ResourceException.Kind.UNAVAILABLE,
                    "no provider of resource type '" + type + "' is running; install or enable one");
        }
        List<String> running = providers.all().stream()
                .map(Providers.Registered::type)
                .distinct()
                .toList();
        throw new BadInput(
                "unknown resource type '" + type + "'; types with a running provider: " + String.join(", ", running));
    }
}
