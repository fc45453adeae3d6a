/**
 * The resource-provider SPI: how a bundle adds a resource type ({@code d1}, {@code r2}, {@code kv}, …) or a new
 * backend for one, at run time.
 *
 * <h2>What a provider is</h2>
 * A provider is an OSGi service implementing {@link dev.atrium.resource.api.ResourceProvider}, registered with the
 * service properties {@value dev.atrium.resource.api.ResourceProvider#TYPE} (the resource type it serves) and
 * {@value dev.atrium.resource.api.ResourceProvider#BACKEND} (a short name of its backend, e.g. {@code postgres}).
 * With Declarative Services and the component property type
 * {@link dev.atrium.resource.api.ResourceProviderType}:
 *
 * <pre>
 * &#64;Component(service = ResourceProvider.class)
 * &#64;ResourceProviderType(type = "kv", backend = "files")
 * public class FileKv implements ResourceProvider, KvFacet { … }
 * </pre>
 *
 * The same object also implements the <em>facet</em> interfaces its type has ({@link dev.atrium.resource.api.KvFacet},
 * {@link dev.atrium.resource.api.ObjectFacet}, {@link dev.atrium.resource.api.SqlFacet},
 * {@link dev.atrium.resource.api.QueueFacet}, {@link dev.atrium.resource.api.VectorFacet},
 * {@link dev.atrium.resource.api.AnalyticsFacet}, {@link dev.atrium.resource.api.SecretFacet},
 * {@link dev.atrium.resource.api.WorkflowFacet}); the core serves a facet's HTTP routes only for providers that
 * implement it. Operations no facet names get routes of the provider's own, whose requests it opens through
 * {@link dev.atrium.resource.api.ResourceRequests} (since 1.8).
 *
 * <h2>What the core does for you</h2>
 * The core ({@code resources} bundle) owns the resource rows, names, access grants, tokens and bindings. Before any call
 * to a provider it has authenticated the caller and checked the permission the call needs; a provider never sees a
 * Principal or a token. Each call gets a {@link dev.atrium.resource.api.ResourceContext}: the resource's id, its
 * workspace, its configuration (already validated against the provider's
 * {@link dev.atrium.resource.api.ConfigSchema}), the permission the caller holds, and what the provider may use (the
 * server's {@code DataSource}, its {@code BlobStore}, a private directory, a usage meter).
 *
 * <p>The capability that keeps services registers a {@link dev.atrium.resource.api.ServiceLocator} (since 1.4), so the
 * core can prove a service id given to {@code POST /api/resources/:id/bind} belongs to the caller before binding it.
 *
 * <h2>Failures</h2>
 * Throw {@link dev.atrium.resource.api.ResourceException} with the {@link dev.atrium.resource.api.ResourceException.Kind}
 * that says whose fault it is; its message is shown to the API client, so it must not carry secrets. Anything else
 * thrown is answered 500 and logged.
 *
 * <h2>Life of a provider</h2>
 * When a provider's bundle stops or is removed, resources of its type keep their rows and answer 503 naming the
 * missing provider; when a provider of the same type and backend registers again, they work again. A provider must
 * therefore keep its data where a new version of itself finds it (the database, the blob store, its directory), never
 * only in memory.
 */
@org.osgi.annotation.versioning.Version("1.10.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.resource.api;
