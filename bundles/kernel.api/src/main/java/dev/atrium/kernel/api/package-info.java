/**
 * The kernel's contract with capability bundles: who is calling ({@link dev.atrium.kernel.api.Caller}, made only by the kernel),
 * whether they may touch a workspace ({@link dev.atrium.kernel.api.OwnerScope}), the spec's error
 * ({@link dev.atrium.kernel.api.ApiException}), request-body reading and limits ({@link dev.atrium.kernel.api.BodyLimit}),
 * pagination and schema migrations, outbound connections ({@link dev.atrium.kernel.api.EgressGuard}), and the one way
 * every bundle reads and writes its tables ({@link dev.atrium.kernel.api.Sql}), makes ids ({@link dev.atrium.kernel.api.Ids}),
 * hashes secrets ({@link dev.atrium.kernel.api.Digests}) and hashes passwords ({@link dev.atrium.kernel.api.PasswordHasher}), seals values
 * at rest ({@link dev.atrium.kernel.api.Sealer}, {@link dev.atrium.kernel.api.KeyFile}), and gives a workspace's common environment to the
 * code it runs ({@link dev.atrium.kernel.api.WorkspaceEnvironment}), and hands live resources to a bundle's next revision
 * ({@link dev.atrium.kernel.api.Keepsakes}). A capability's JAX-RS resource is a {@link dev.atrium.kernel.api.KernelResource}; what it
 * reports to the operator's health view, a {@link dev.atrium.kernel.api.HealthCheck}; its share of a workspace archive, a
 * {@link dev.atrium.kernel.api.WorkspaceArchivePart} (and what follows an import, a
 * {@link dev.atrium.kernel.api.WorkspaceImportListener}); and the audit log and a Principal's credentials are
 * {@link dev.atrium.kernel.api.AuditLog} and {@link dev.atrium.kernel.api.PrincipalCredentials} (2.17); a long job it runs
 * reports its progress and end through {@link dev.atrium.kernel.api.Jobs}, and archive parts that refer to each other
 * name them in {@link dev.atrium.kernel.api.WorkspaceArchivePart#after()} (2.18). {@link dev.atrium.kernel.api.RelayRouter}: requests
 * the edge relays below the servlet stack (2.19).
 */
@org.osgi.annotation.versioning.Version("2.19.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.kernel.api;
