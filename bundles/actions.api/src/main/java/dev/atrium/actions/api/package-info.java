/**
 * What Actions lets other capabilities use: {@link dev.atrium.actions.api.WorkflowArtifacts}, the artifacts of
 * successful workflow runs at a commit, and a bounded run that builds one.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.actions.api;
