package dev.atrium.resources.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.ServiceLocator;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Who may do what to a resource. Ownership is always the kernel's answer ({@link OwnerScope}); this class only
 * combines it with the core's own grants and tokens:
 * <ul>
 * <li>a Principal acting in the resource's own workspace (the default) holds {@link Access#ADMIN} when the kernel
 * proves it owns that workspace;</li>
 * <li>a Principal acting in another workspace ({@code space_id}) holds what that workspace was granted, when the
 * kernel proves it owns that workspace too;</li>
 * <li>a resource token holds its permission on its one resource, while the resource's workspace is live.</li>
 * </ul>
 * Everything else is the same 404 as a resource that does not exist.
 */
@Component(service = Authz.class)
public class Authz {

    /** The header a resource token travels in (the {@code Authorization} header is the kernel's). */
    public static final String TOKEN_HEADER = "X-Resource-Token";

    public static final String TOKEN_PREFIX = "ark_";

    /**
     * A resource and what this call may do to it.
     *
     * @param scopeCapped whether {@code access} was lowered to read because the caller's token lacks {@value #WRITE_SCOPE}
     */
    public record Granted(ResourceRow row, Access access, String via, boolean scopeCapped) {

        public Granted(ResourceRow row, Access access, String via) {
            this(row, access, via, false);
        }
    }

    static final String READ_SCOPE = "files:read";
    static final String WRITE_SCOPE = "files:write";

    /** The answer for a service id the caller may not use: the same whether the service is another's or missing. */
    static final String SERVICE_NOT_FOUND = "service not found";

    private final OwnerScope ownerScope;
    private final SpaceDirectory spaces;
    private final ResourceStore store;

    /** The services capability's answer to "which workspace is this service in"; absent while it is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    volatile ServiceLocator services;

    @Activate
    public Authz(@Reference OwnerScope ownerScope, @Reference SpaceDirectory spaces, @Reference ResourceStore store) {
        this.ownerScope = ownerScope;
        this.spaces = spaces;
        this.store = store;
    }

    /** The Principal's caller of the request, or null when it carries none (a resource-token request). */
    static Caller callerOrNull(SecurityContext sc) {
        return sc != null && sc.getUserPrincipal() instanceof Caller c && c.principalId() != null ? c : null;
    }

    static void requireScope(Caller caller, Access needed) {
        String scope = needed == Access.READ ? READ_SCOPE : WRITE_SCOPE;
        if (!caller.hasScope(scope)) {
            throw ApiException.forbidden("this token lacks the scope " + scope);
        }
    }

    /** The resource {@code id} for an owner-only operation: the kernel must prove the caller owns its workspace. */
    public ResourceRow owned(Caller caller, String id) {
        ResourceRow row = store.find(id).orElseThrow(ResourcesApi::notFound);
        if (!owns(caller, row.spaceId)) {
            throw ResourcesApi.notFound();
        }
        return row;
    }

    /**
     * The workspace of service {@code serviceId}, proven by the kernel's owner scope to be the caller's. A service id
     * arrives in a request body or path, so it is checked like any other id: another Principal's service and a missing
     * one are the same 404.
     */
    public SpaceRef ownedService(Caller caller, String serviceId) {
        ServiceLocator locator = services;
        String spaceId = locator == null ? null : locator.workspaceOf(serviceId).orElse(null);
        if (spaceId == null) {
            throw ApiException.notFound(SERVICE_NOT_FOUND);
        }
        try {
            return ownerScope.require(caller, spaceId);
        } catch (ApiException e) {
            throw ApiException.notFound(SERVICE_NOT_FOUND);
        }
    }

    boolean owns(Caller caller, String spaceId) {
        try {
            ownerScope.require(caller, spaceId);
            return true;
        } catch (ApiException e) {
            return false;
        }
    }

    /**
     * Authorises a data call (facets, connection info) on {@code id}: by the caller (acting in {@code actingSpace}, or
     * in the resource's own workspace when null) or, without a caller, by the resource token.
     */
    public Granted authorize(SecurityContext sc, String token, String id, String actingSpace, Access needed) {
        return authorize(callerOrNull(sc), token, id, actingSpace, needed);
    }

    /** As {@link #authorize(SecurityContext, String, String, String, Access)}; {@code caller} null for none. */
    public Granted authorize(Caller caller, String token, String id, String actingSpace, Access needed) {
        return authorize(caller, token, id, actingSpace, needed, null);
    }

    /**
     * As {@link #authorize(Caller, String, String, String, Access)} for a resource of one type: a resource of another
     * type is 404 like a missing one, before any check of what the caller holds on it.
     */
    public Granted authorize(Caller caller, String token, String id, String actingSpace, Access needed, String type) {
        if (caller != null && caller.principalId() == null) {
            caller = null;
        }
        if (caller != null) {
            requireScope(caller, needed);
            Granted g = byCaller(caller, store.find(id).orElseThrow(ResourcesApi::notFound), actingSpace);
            if (type != null && !type.equals(g.row().type)) {
                throw ResourcesApi.notFound();
            }
            // the token's scopes bound what its Principal could do: without files:write a call holds read at most, so
            // a read route that could write (a SQL query) gets the provider's read-only handling
            if (!caller.hasScope(WRITE_SCOPE) && g.access().allows(Access.WRITE)) {
                g = new Granted(g.row(), Access.READ, g.via(), true);
            }
            return check(g, needed);
        }
        if (token == null || token.isBlank()) {
            throw ApiException.unauthorized("authentication required: send Authorization: Bearer <token> or "
                    + TOKEN_HEADER + ": <resource token>");
        }
        TokenRow t = token.startsWith(TOKEN_PREFIX)
                ? store.tokenByHash(Digests.sha256Base64Url(token.trim())).orElse(null)
                : null;
        if (t == null) {
            throw ApiException.unauthorized("the resource token is invalid or was deleted");
        }
        ResourceRow row = store.find(id).orElseThrow(ResourcesApi::notFound);
        // a token of another resource learns nothing about this one; a token of a workspace whose owner is no longer
        // active (or of a removed workspace) works no more: fail closed
        if (!row.id.equals(t.resourceId)
                || spaces.byId(row.spaceId).isEmpty()
                || (type != null && !type.equals(row.type))) {
            throw ResourcesApi.notFound();
        }
        Granted g = check(new Granted(row, Access.parse(t.permission), "token:" + t.id), needed);
        // when a token was last used, to the minute: one write per token per minute at most
        if (t.lastUsedAt == null
                || t.lastUsedAt.isBefore(java.time.Instant.now().minusSeconds(60))) {
            store.touchToken(t.id);
        }
        return g;
    }

    /** As {@link #authorize} for a resource already found by name and owned by the caller. */
    public Granted byCaller(Caller caller, ResourceRow row, String actingSpace) {
        if (actingSpace == null || actingSpace.isBlank()) {
            if (!owns(caller, row.spaceId)) {
                throw ResourcesApi.notFound();
            }
            return new Granted(row, Access.ADMIN, "owner");
        }
        SpaceRef acting;
        try {
            acting = ownerScope.require(caller, actingSpace);
        } catch (ApiException e) {
            throw ResourcesApi.notFound();
        }
        if (acting.id().equals(row.spaceId)) {
            return new Granted(row, Access.ADMIN, "owner");
        }
        AccessRow grant = store.grant(row.id, acting.id()).orElseThrow(ResourcesApi::notFound);
        return new Granted(row, Access.parse(grant.permission), "grant:" + acting.id());
    }

    private static Granted check(Granted g, Access needed) {
        if (!g.access().allows(needed)) {
            throw ApiException.forbidden("this needs " + needed.wire() + " access to the resource; "
                    + g.via().replaceAll(":.*", "") + " access here is "
                    + g.access().wire());
        }
        return g;
    }
}
