package dev.atrium.runs.internal;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of runs (ConfigAdmin pid {@code dev.atrium.runs}); where the operator's configuration sets
 * nothing, the {@code ATRIUM_*} environment variable named in a description supplies the value (bundles/config).
 */
@Component(
        service = RunsSettings.class,
        configurationPid = "dev.atrium.runs",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = RunsSettings.Config.class)
public class RunsSettings {

    @ObjectClassDefinition(name = "Atrium runs")
    public @interface Config {
        @AttributeDefinition(
                description = "Runs executed at once by this instance; 0: it executes none (ATRIUM_RUNS_WORKERS)")
        int workers() default 4;

        @AttributeDefinition(description = "Model turns a run may take before it fails (ATRIUM_RUNS_STEP_LIMIT)")
        int stepLimit() default 8;

        @AttributeDefinition(description = "Milliseconds between SSE/WebSocket heartbeats (ATRIUM_RUNS_HEARTBEAT_MS)")
        long heartbeatMillis() default 15_000;

        @AttributeDefinition(
                description =
                        "Threads that write one event to a run's subscribers; 0: one per processor (ATRIUM_RUNS_FANOUT_THREADS)")
        int fanoutThreads() default 0;

        @AttributeDefinition(
                description = "Milliseconds between queue polls besides NOTIFY wake-ups (ATRIUM_RUNS_POLL_MS)")
        long pollMillis() default 1_000;

        @AttributeDefinition(
                description =
                        "Seconds one model turn may take, streaming included, before the run fails (ATRIUM_RUNS_TURN_TIMEOUT_S)")
        long turnTimeoutSeconds() default 300;

        @AttributeDefinition(
                description = "Seconds one http_fetch may take, body included (ATRIUM_RUNS_FETCH_TIMEOUT_S)")
        long fetchTimeoutSeconds() default 30;

        @AttributeDefinition(
                description = "OpenAI-compatible base URL, e.g. https://api.openai.com/v1 (ATRIUM_OPENAI_BASE_URL)")
        String openaiBaseUrl() default "https://api.openai.com/v1";

        @AttributeDefinition(description = "OpenAI API key (ATRIUM_OPENAI_API_KEY)")
        String openaiApiKey() default "";

        @AttributeDefinition(description = "Anthropic base URL (ATRIUM_ANTHROPIC_BASE_URL)")
        String anthropicBaseUrl() default "https://api.anthropic.com";

        @AttributeDefinition(description = "Anthropic API key (ATRIUM_ANTHROPIC_API_KEY)")
        String anthropicApiKey() default "";

        @AttributeDefinition(description = "Provider of workspaces that chose none (ATRIUM_RUNS_DEFAULT_PROVIDER)")
        String defaultProvider() default "";

        @AttributeDefinition(description = "Model of workspaces that chose none (ATRIUM_RUNS_DEFAULT_MODEL)")
        String defaultModel() default "";
    }

    final int workers;
    final int stepLimit;
    final long heartbeatMillis;
    final long pollMillis;
    final int fanoutThreads;
    final long turnTimeoutSeconds;
    final long fetchTimeoutSeconds;
    final String openaiBaseUrl;
    final String openaiApiKey;
    final String anthropicBaseUrl;
    final String anthropicApiKey;
    final String defaultProvider;
    final String defaultModel;

    @Activate
    public RunsSettings(Config config) {
        workers = Math.max(0, config.workers());
        stepLimit = Math.max(1, config.stepLimit());
        heartbeatMillis = Math.max(1, config.heartbeatMillis());
        pollMillis = Math.max(1, config.pollMillis());
        int fanout = Math.max(0, config.fanoutThreads());
        fanoutThreads = Math.min(64, fanout == 0 ? Runtime.getRuntime().availableProcessors() : fanout);
        turnTimeoutSeconds = Math.max(1, config.turnTimeoutSeconds());
        fetchTimeoutSeconds = Math.max(1, config.fetchTimeoutSeconds());
        openaiBaseUrl = trimSlash(config.openaiBaseUrl().trim());
        openaiApiKey = config.openaiApiKey().trim();
        anthropicBaseUrl = trimSlash(config.anthropicBaseUrl().trim());
        anthropicApiKey = config.anthropicApiKey().trim();
        defaultProvider = config.defaultProvider().trim();
        defaultModel = config.defaultModel().trim();
    }

    private static String trimSlash(String s) {
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }
}
