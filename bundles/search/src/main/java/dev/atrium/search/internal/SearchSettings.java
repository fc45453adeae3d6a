package dev.atrium.search.internal;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of search (ConfigAdmin pid {@code dev.atrium.search}); where the operator's configuration
 * sets nothing, the {@code ATRIUM_*} environment variable named in a description supplies the value (bundles/config).
 */
@Component(
        service = SearchSettings.class,
        configurationPid = "dev.atrium.search",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = SearchSettings.Config.class)
public class SearchSettings {

    @ObjectClassDefinition(name = "Atrium search")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "Base URL of an OpenAI-compatible embeddings API, as ATRIUM_OPENAI_BASE_URL takes it, e.g."
                                + " https://api.openai.com/v1 (its /embeddings is called); empty: search is keyword-only (ATRIUM_EMBEDDINGS_BASE_URL)")
        String embeddingsBaseUrl() default "";

        @AttributeDefinition(description = "Bearer key of the embeddings API (ATRIUM_EMBEDDINGS_API_KEY)")
        String embeddingsApiKey() default "";

        @AttributeDefinition(description = "The embeddings model (ATRIUM_EMBEDDINGS_MODEL)")
        String embeddingsModel() default "text-embedding-3-small";

        @AttributeDefinition(description = "Texts per embeddings request (ATRIUM_EMBEDDINGS_BATCH)")
        int embeddingsBatch() default 64;

        @AttributeDefinition(
                description = "How often the indexer reads the sources' changes, ms (ATRIUM_SEARCH_POLL_MS)")
        int pollMillis() default 1000;

        @AttributeDefinition(description = "How long an answer is kept, s; 0 keeps none (ATRIUM_SEARCH_CACHE_S)")
        int cacheSeconds() default 30;

        @AttributeDefinition(
                description = "Seconds between two index/vectorize or index/rebuild calls of one workspace"
                        + " (ATRIUM_SEARCH_INDEX_INTERVAL_S)")
        int indexIntervalSeconds() default 60;

        @AttributeDefinition(
                description = "The data directory (--data, ATRIUM_DATA); the Lucene indexes live in its search/")
        String dataDirectory() default "data";
    }

    private final Config config;
    private final URI embeddings;
    private final Path indexes;

    @Activate
    public SearchSettings(Config config) {
        this.config = config;
        String base = config.embeddingsBaseUrl().strip();
        this.embeddings = base.isEmpty() ? null : URI.create(base.endsWith("/") ? base : base + "/");
        this.indexes = Path.of(config.dataDirectory())
                .toAbsolutePath()
                .resolve("search")
                .resolve("lucene");
    }

    /** The embeddings API's base, or null when none is configured. */
    URI embeddingsBase() {
        return embeddings;
    }

    String embeddingsApiKey() {
        return config.embeddingsApiKey();
    }

    String embeddingsModel() {
        return config.embeddingsModel();
    }

    int embeddingsBatch() {
        return Math.max(1, Math.min(config.embeddingsBatch(), 2048));
    }

    Duration poll() {
        return Duration.ofMillis(Math.max(50, config.pollMillis()));
    }

    Duration cache() {
        return Duration.ofSeconds(Math.max(0, config.cacheSeconds()));
    }

    Duration indexInterval() {
        return Duration.ofSeconds(Math.max(0, config.indexIntervalSeconds()));
    }

    /** Where the workspaces' Lucene indexes live, one directory each. */
    Path indexes() {
        return indexes;
    }
}
