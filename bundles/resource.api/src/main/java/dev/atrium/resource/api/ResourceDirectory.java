package dev.atrium.resource.api;

import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.SpaceRef;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * What the resources core lets other capabilities (services) do with resources: find one a service may bind, keep the
 * bindings of a service (the core's binding rows are the one record of them, also written by
 * {@code POST /api/resources/:id/bind}), and open a bound resource's facet for the service's deployed code.
 * Implemented by the {@code resources} bundle; providers never implement it.
 *
 * <p>A resource is bindable by a service of workspace {@code S} when it belongs to {@code S}, or to another workspace
 * whose owner the kernel proves is the caller and that granted {@code S} access. A resource of another Principal is
 * never found: the same empty answer as a missing one.
 */
@ProviderType
public interface ResourceDirectory {

    /**
     * A resource bound to a service under a variable name.
     *
     * @param bindingName the name the code sees ({@code env.<name>})
     * @param access      what the service's code may do: {@link Access#WRITE} in the resource's own workspace, the
     *                    grant (at most write) otherwise
     */
    record Bound(
            String bindingName, String resourceId, String resourceName, String type, String spaceId, Access access) {}

    /**
     * The resource with {@code resourceId} (or, when that is null, named {@code resourceName} in {@code space}) that a
     * service of {@code space} may bind, with the access it would get.
     *
     * @param space the service's workspace, proven for {@code caller} by the kernel's owner scope
     */
    Optional<Bound> find(Caller caller, SpaceRef space, String resourceId, String resourceName);

    /**
     * The bindings of {@code serviceId} (of workspace {@code spaceId}) that still hold, by binding name; a binding whose
     * resource lost its grant to {@code spaceId} is left out.
     */
    List<Bound> bindings(String serviceId, String spaceId);

    /**
     * Makes {@code bindings} (binding name to resource id) exactly the bindings of {@code serviceId}, in one
     * transaction; each resource is checked again as by {@link #find}.
     *
     * @throws IllegalArgumentException naming the first binding whose resource the caller may not bind
     */
    List<Bound> replaceBindings(Caller caller, SpaceRef space, String serviceId, Map<String, String> bindings);

    /** Removes every binding of a deleted service. */
    void unbindAll(String serviceId);

    /**
     * A bound resource's facet for one call of the service's code, with its context; empty when the resource is gone,
     * no longer bound to {@code serviceId}, its workspace is no longer live, the grant to {@code spaceId} was revoked,
     * or its provider (or that facet) is not running.
     *
     * @throws IllegalStateException when this directory stopped while the call ran (its bundle updating), so that it
     *     can no longer tell: the caller tries again with the directory's next instance, or answers 503
     */
    <F> Optional<Opened<F>> open(String serviceId, String spaceId, String bindingName, Class<F> facet);

    /** A facet and the context to call it with. */
    record Opened<F>(F facet, ResourceContext context, Bound bound) {}

    /**
     * Creates a resource of {@code space} as {@code POST /api/resources} does: the type's default backend (or
     * {@code backend}), {@code config} checked against the provider's schema, provisioned before the call returns.
     *
     * @param space   proven for {@code caller} by the kernel's owner scope
     * @param backend null for the type's default
     * @return the resource, as {@link #find} would give it to a service of {@code space}
     * @throws IllegalArgumentException with a message for the client: an unknown type or backend, a bad name or config
     * @throws IllegalStateException    when {@code space} has a resource of that name already
     * @throws ResourceException        when the provider could not provision it
     * @since 1.9
     */
    Bound create(Caller caller, SpaceRef space, String type, String backend, String name, Map<String, Object> config)
            throws ResourceException;

    /**
     * Deletes a resource of {@code space} with its data, as {@code DELETE /api/resources/:id} does; whether it was there.
     * A resource of another workspace is not touched (false).
     *
     * @since 1.9
     */
    boolean delete(Caller caller, SpaceRef space, String resourceId) throws ResourceException;
}
