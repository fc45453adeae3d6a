package dev.atrium.apps.internal;

import java.nio.file.Path;
import java.time.Duration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of the app platform (ConfigAdmin pid {@code dev.atrium.apps}); where the operator's
 * configuration sets nothing, the {@code ATRIUM_*} environment variable named in a description supplies the value.
 */
@Component(
        service = AppsSettings.class,
        configurationPid = "dev.atrium.apps",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = AppsSettings.Config.class)
public class AppsSettings {

    @ObjectClassDefinition(name = "Atrium app platform")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "The data directory (--data, ATRIUM_DATA); the apps' client-secret key lives in its keys/apps/")
        String dataDirectory() default "data";

        @AttributeDefinition(
                description =
                        "How long a deploy waits for the workflow run that builds an artifact (ATRIUM_APPS_BUILD_TIMEOUT_SECONDS)")
        int buildTimeoutSeconds() default 600;

        @AttributeDefinition(
                description =
                        "Largest worker bundle or container archive an app deploys (ATRIUM_APPS_MAX_ARTIFACT_BYTES)")
        long maxArtifactBytes() default 256L * 1024 * 1024;

        @AttributeDefinition(
                description =
                        "How long an app's previous OAuth client secret keeps working after client-key (ATRIUM_APPS_SECRET_GRACE_SECONDS)")
        int secretGraceSeconds() default 600;
    }

    final Path keyFile;
    final Duration buildTimeout;
    final long maxArtifactBytes;
    final Duration secretGrace;

    @Activate
    public AppsSettings(Config config) {
        this.keyFile = Path.of(config.dataDirectory())
                .toAbsolutePath()
                .resolve("keys")
                .resolve("apps")
                .resolve("clients.key");
        this.buildTimeout = Duration.ofSeconds(Math.max(1, config.buildTimeoutSeconds()));
        this.maxArtifactBytes = Math.max(1024, config.maxArtifactBytes());
        this.secretGrace = Duration.ofSeconds(Math.max(0, config.secretGraceSeconds()));
    }
}
