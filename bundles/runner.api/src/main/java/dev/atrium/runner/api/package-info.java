/**
 * The job-runner SPI: how a bundle runs the jobs of workflows in fresh, isolated containers.
 *
 * <p>The {@code actions} capability owns workflows, runs, jobs, logs, artifacts and secrets. For each job it asks a
 * {@link dev.atrium.runner.api.JobRunner} for a {@link dev.atrium.runner.api.JobContainer} with the job's workspace
 * (a directory on this machine it prepares and reads back: the checkout, artifacts, caches), runs each step in it as
 * a command, and stops or removes it. A runner never sees Principals, tokens or repositories; nothing of the job's
 * workspace leaves it except through that directory and the output of its commands.
 *
 * <p>A runner is an OSGi service with the property {@value dev.atrium.runner.api.JobRunner#NAME} (e.g. {@code podman}).
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.runner.api;
