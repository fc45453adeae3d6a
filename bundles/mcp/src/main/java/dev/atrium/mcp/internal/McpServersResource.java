package dev.atrium.mcp.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.mcp.internal.McpServerStore.Server;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/mcp/servers}: a workspace's MCP servers. The workspace is named by {@code space_id} (query of the list,
 * field of the registration) and proven through the kernel's {@link OwnerScope}; a server addressed by its own id is
 * resolved to its workspace and proven the same way, so another Principal's server is the same 404 as a missing one.
 */
@Component(service = McpServersResource.class)
@KernelResource
@Path("/api/mcp/servers")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class McpServersResource {

    static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,31}");
    static final Set<String> TRANSPORTS = Set.of("streamable_http", "sse");
    static final int MAX_URL = 2048;
    static final int MAX_SERVERS = 50;
    private static final String NOT_FOUND = "MCP server not found";

    private final OwnerScope ownerScope;
    private final McpServerStore store;
    private final McpClient client;
    private final McpOAuth oauth;
    private final PublicUrls urls;

    @Activate
    public McpServersResource(
            @Reference OwnerScope ownerScope,
            @Reference McpServerStore store,
            @Reference McpClient client,
            @Reference McpOAuth oauth,
            @Reference PublicUrls urls) {
        this.ownerScope = ownerScope;
        this.store = store;
        this.client = client;
        this.oauth = oauth;
        this.urls = urls;
    }

    @GET
    @RequiresScope("threads:read")
    @JsonShape(McpJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @QueryParam("space_id") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = space(Caller.from(sc), spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "servers",
                store.list(space.id(), page.limit(), page.offset()).stream()
                        .map(Server::toJson)
                        .toList(),
                store.count(space.id()));
    }

    @POST
    @RequiresScope("threads:write")
    @JsonShape(McpJson.One.class)
    public Response create(@Context SecurityContext sc, @JsonShape(McpJson.Registration.class) JsonNode body) {
        NulText.reject(body);
        JsonBody in = JsonBody.of(body);
        SpaceRef space = space(Caller.from(sc), in.string("space_id").orElse(null));
        String name = name(in.requiredString("name"));
        String url = url(in.requiredString("url"));
        String transport = in.oneOf("transport", TRANSPORTS).orElse("streamable_http");
        boolean enabled = in.bool("enabled").orElse(true);
        if (store.count(space.id()) >= MAX_SERVERS) {
            throw ApiException.conflict("a workspace has at most " + MAX_SERVERS + " MCP servers");
        }
        if (store.list(space.id(), MAX_SERVERS, 0).stream()
                .anyMatch(s -> s.name().equals(name))) {
            throw ApiException.conflict("an MCP server named '" + name + "' is already registered in this workspace");
        }
        return Response.status(201)
                .entity(Map.of(
                        "server",
                        store.create(space.id(), name, url, transport, enabled).toJson()))
                .build();
    }

    @PATCH
    @Path("{id}")
    @RequiresScope("threads:write")
    @JsonShape(McpJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc, @PathParam("id") String id, @JsonShape(McpJson.Change.class) JsonNode body) {
        NulText.reject(body);
        Server server = owned(Caller.from(sc), id);
        JsonBody in = JsonBody.of(body);
        if (server.managedBy() != null
                && (in.string("name").isPresent()
                        || in.string("url").isPresent()
                        || in.string("transport").isPresent())) {
            throw managed(server);
        }
        String name = in.string("name").map(McpServersResource::name).orElse(null);
        String url = in.string("url").map(this::url).orElse(null);
        String transport = in.oneOf("transport", TRANSPORTS).orElse(null);
        Boolean enabled = in.bool("enabled").orElse(null);
        if (name == null && url == null && transport == null && enabled == null) {
            throw ApiException.badRequest("nothing to change: give name, url, transport or enabled");
        }
        if (name != null
                && !name.equals(server.name())
                && store.list(server.spaceId(), MAX_SERVERS, 0).stream()
                        .anyMatch(s -> s.name().equals(name))) {
            throw ApiException.conflict("an MCP server named '" + name + "' is already registered in this workspace");
        }
        if (url != null && !url.equals(server.url())) {
            oauth.forget(server.id()); // its client and tokens were for the old resource
        }
        return Map.of(
                "server",
                store.update(server.id(), name, url, transport, enabled)
                        .orElseThrow(() -> ApiException.notFound(NOT_FOUND))
                        .toJson());
    }

    @DELETE
    @Path("{id}")
    @RequiresScope("threads:write")
    @JsonShape(McpJson.Deleted.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        Server server = owned(Caller.from(sc), id);
        if (server.managedBy() != null) {
            throw managed(server);
        }
        if (!store.delete(server.id())) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return Map.of("success", true);
    }

    /** The server's tools, listed live; the listing is remembered for the workspace's runs. */
    @GET
    @Path("{id}/tools")
    @RequiresScope("threads:read")
    @JsonShape(McpJson.Tools.class)
    public Map<String, Object> tools(@Context SecurityContext sc, @PathParam("id") String id) {
        Server server = owned(Caller.from(sc), id);
        ArrayNode tools;
        try {
            tools = oauth.withToken(server, bearer -> client.listTools(server.url(), server.transport(), bearer));
        } catch (McpClient.AuthorizationRequired e) {
            throw new ApiException(
                    409,
                    "MCP_AUTHORIZATION_REQUIRED",
                    "the MCP server requires authorization: connect it with POST /api/mcp/servers/" + server.id()
                            + "/authorize");
        } catch (IOException e) {
            throw new ApiException(502, "BAD_GATEWAY", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("the server is stopping");
        }
        store.rememberTools(server.id(), server.url(), server.transport(), tools);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("server_id", server.id());
        m.put("tools", tools);
        return m;
    }

    /**
     * Begins the OAuth flow for a server that demands it: discovery, dynamic client registration, and the authorization
     * URL (PKCE S256, a single-use state bound to this server, its workspace and the caller) to send the user's browser to.
     */
    @POST
    @Path("{id}/authorize")
    @RequiresScope("threads:write")
    @JsonShape(McpJson.Authorization.class)
    public Map<String, Object> authorize(
            @Context SecurityContext sc, @Context UriInfo uri, @PathParam("id") String id) {
        Caller caller = Caller.from(sc);
        Server server = owned(caller, id);
        McpOAuth.Started started;
        try {
            started = oauth.start(
                    server, caller.principalId(), urls.base(uri.getBaseUri()) + McpOAuthCallbackResource.PATH);
        } catch (IOException e) {
            throw new ApiException(502, "BAD_GATEWAY", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("the server is stopping");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("authorization_url", started.authorizationUrl());
        m.put("expires_at", started.expiresAt().toString());
        return m;
    }

    private SpaceRef space(Caller caller, String spaceId) {
        if (spaceId == null || spaceId.isBlank()) {
            throw ApiException.badRequest("space_id is required");
        }
        return ownerScope.require(caller, spaceId);
    }

    private Server owned(Caller caller, String id) {
        Server server = store.get(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        try {
            ownerScope.require(caller, server.spaceId());
        } catch (ApiException e) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return server;
    }

    /** Its manager keeps it as its source says; the owner may still disable it. */
    private static ApiException managed(Server server) {
        return ApiException.conflict("the MCP server '" + server.name() + "' is managed by " + server.managedBy()
                + ": change or remove it there (its owner may enable or disable it here)");
    }

    static String name(String name) {
        String n = name.trim();
        if (!NAME.matcher(n).matches()) {
            throw ApiException.badRequest(
                    "name must be 1 to 32 characters of a-z, 0-9, '_' and '-', starting with a letter or digit");
        }
        return n;
    }

    private String url(String url) {
        String u = url.trim();
        if (u.isEmpty() || u.length() > MAX_URL) {
            throw ApiException.badRequest("url must be 1 to " + MAX_URL + " characters");
        }
        client.check(u);
        return u;
    }
}
