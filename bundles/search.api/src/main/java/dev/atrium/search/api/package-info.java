/**
 * Workspace search. A capability whose items a workspace's search covers registers an
 * {@link dev.atrium.search.api.IndexSource}; the search capability follows each source's changes with a durable
 * cursor, embeds the items and answers {@link dev.atrium.search.api.SemanticSearch} for capabilities that search by
 * meaning (a thread search in {@code semantic} mode).
 */
@org.osgi.annotation.versioning.Version("1.1.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.search.api;
