package com.example.atrium.counters;

import java.util.Map;

import javax.ws.rs.GET;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.SecurityContext;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceRequests;

/**
 * The routes of a {@code counter} resource, {@code /api/resources/:id/counter}: a JAX-RS resource of the plugin's own,
 * registered with the server's API ({@code @KernelResource}). Each request opens its resource through the core
 * ({@link ResourceRequests}), which authenticates the caller (a bearer token, or a resource token: hence
 * {@code @Anonymous}, the core checks) and answers 401, 403, 404 or 503 itself.
 */
@Component(service = CounterRoutes.class)
@KernelResource
@Path("/api/resources/{id}/counter")
@Produces(MediaType.APPLICATION_JSON)
public class CounterRoutes {

    private final ResourceRequests requests;
    private final FileCounters counters;

    @Activate
    public CounterRoutes(@Reference ResourceRequests requests, @Reference FileCounters counters) {
        this.requests = requests;
        this.counters = counters;
    }

    @GET
    @Anonymous
    public Map<String, Object> get(
            @Context SecurityContext sc,
            @HeaderParam(ResourceRequests.TOKEN_HEADER) String token,
            @PathParam("id") String id) {
        ResourceContext ctx = requests.open(sc.getUserPrincipal(), token, id, FileCounters.TYPE, Access.READ);
        try {
            return Map.of("value", counters.value(ctx));
        } catch (ResourceException e) {
            throw ApiException.unavailable(e.getMessage());
        }
    }

    @POST
    @Path("increment")
    @Anonymous
    public Map<String, Object> increment(
            @Context SecurityContext sc,
            @HeaderParam(ResourceRequests.TOKEN_HEADER) String token,
            @PathParam("id") String id) {
        ResourceContext ctx = requests.open(sc.getUserPrincipal(), token, id, FileCounters.TYPE, Access.WRITE);
        try {
            return Map.of("value", counters.change(ctx, 1));
        } catch (ResourceException e) {
            throw ApiException.unavailable(e.getMessage());
        }
    }
}
