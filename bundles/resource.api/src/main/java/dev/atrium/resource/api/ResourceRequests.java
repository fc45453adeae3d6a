package dev.atrium.resource.api;

import java.security.Principal;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A provider's own HTTP routes. A type whose operations no facet names (a new type, or an operation the facets lack)
 * gets its routes from its provider: the provider registers a JAX-RS resource of its own (kernel.api's
 * {@code @KernelResource}, under {@code /api/resources/{id}/<type>/…}) and opens the resource of each request here.
 * The core authenticates and authorises exactly as on its own routes: a Principal's bearer token (with
 * {@code files:read} or {@code files:write}) or a resource token in {@link #TOKEN_HEADER}; a resource of another
 * Principal answers 404 as a missing one does. The core registers this service; a provider references it.
 *
 * <pre>
 * &#64;GET &#64;Path("count") &#64;Anonymous
 * public Map&lt;String, Object&gt; count(&#64;Context SecurityContext sc, &#64;HeaderParam(ResourceRequests.TOKEN_HEADER) String token,
 *         &#64;PathParam("id") String id) {
 *     ResourceContext ctx = requests.open(sc.getUserPrincipal(), token, id, "counter", Access.READ);
 *     …
 * }
 * </pre>
 *
 * @since 1.8
 */
@ProviderType
public interface ResourceRequests {

    /** The header a resource token comes in, as on the core's routes. */
    String TOKEN_HEADER = "X-Resource-Token";

    /**
     * The resource {@code resourceId} of type {@code type}, opened for a request that needs {@code needed}: its
     * context says the permission the caller holds (a read-only Principal token holds {@code read} at most).
     *
     * @param caller the request's {@code SecurityContext.getUserPrincipal()}; null (or not a signed-in Principal) when
     *     the request has none: then {@code resourceToken} must prove it
     * @throws dev.atrium.kernel.api.ApiException 401 without a caller or a valid resource token; 404 when there is no
     *     such resource of that type that the caller may see; 403 when the caller holds less than {@code needed}; 503
     *     when no provider of the resource's type and backend runs. Its message is the API client's answer.
     */
    ResourceContext open(Principal caller, String resourceToken, String resourceId, String type, Access needed);
}
