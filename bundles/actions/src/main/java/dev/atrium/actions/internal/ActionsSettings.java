package dev.atrium.actions.internal;

import java.nio.file.Path;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of Actions (ConfigAdmin pid {@code dev.atrium.actions}); where the operator's configuration
 * sets nothing, the {@code ATRIUM_*} environment variable named in a description supplies the value (bundles/config).
 */
@Component(
        service = ActionsSettings.class,
        configurationPid = "dev.atrium.actions",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = ActionsSettings.Config.class)
public class ActionsSettings {

    @ObjectClassDefinition(name = "Atrium Actions")
    public @interface Config {
        @AttributeDefinition(
                description = "The data directory (--data, ATRIUM_DATA); jobs' workspaces live in its actions/")
        String dataDirectory() default "data";

        @AttributeDefinition(description = "Jobs this server runs at once (ATRIUM_ACTIONS_MAX_JOBS)")
        int maxJobs() default 8;

        @AttributeDefinition(
                description = "Jobs one Principal's runs have running at once (ATRIUM_ACTIONS_MAX_JOBS_PER_PRINCIPAL)")
        int maxJobsPerPrincipal() default 4;

        @AttributeDefinition(description = "Memory limit of a job's container in MiB (ATRIUM_ACTIONS_JOB_MEMORY_MB)")
        int jobMemoryMb() default 1024;

        @AttributeDefinition(
                description = "Thousandths of a CPU a job's container may use (ATRIUM_ACTIONS_JOB_MILLICPUS)")
        int jobMilliCpus() default 1000;

        @AttributeDefinition(
                description =
                        "Largest timeout-minutes a job may ask for, and the default (ATRIUM_ACTIONS_MAX_JOB_MINUTES)")
        int maxJobMinutes() default 360;

        @AttributeDefinition(
                description =
                        "Days an artifact is kept unless its upload asks for fewer (ATRIUM_ACTIONS_ARTIFACT_RETENTION_DAYS)")
        int artifactRetentionDays() default 90;

        @AttributeDefinition(description = "Largest artifact or cache in bytes (ATRIUM_ACTIONS_MAX_ARTIFACT_BYTES)")
        long maxArtifactBytes() default 2L * 1024 * 1024 * 1024;

        @AttributeDefinition(
                description =
                        "Largest log of one job in bytes; output past it is dropped with a note (ATRIUM_ACTIONS_MAX_LOG_BYTES)")
        long maxLogBytes() default 64L * 1024 * 1024;
    }

    final Path workDirectory;
    final int maxJobs;
    final int maxJobsPerPrincipal;
    final long jobMemoryBytes;
    final double jobCpus;
    final int maxJobMinutes;
    final int artifactRetentionDays;
    final long maxArtifactBytes;
    final long maxLogBytes;

    @Activate
    public ActionsSettings(Config config) {
        this.workDirectory = Path.of(config.dataDirectory()).toAbsolutePath().resolve("actions");
        this.maxJobs = Math.max(1, config.maxJobs());
        this.maxJobsPerPrincipal = Math.max(1, config.maxJobsPerPrincipal());
        this.jobMemoryBytes = Math.max(16, config.jobMemoryMb()) * 1024L * 1024L;
        this.jobCpus = config.jobMilliCpus() > 0 ? config.jobMilliCpus() / 1000.0 : 1.0;
        this.maxJobMinutes = Math.max(1, config.maxJobMinutes());
        this.artifactRetentionDays = Math.max(1, config.artifactRetentionDays());
        this.maxArtifactBytes = Math.max(1024, config.maxArtifactBytes());
        this.maxLogBytes = Math.max(1024, config.maxLogBytes());
    }
}
