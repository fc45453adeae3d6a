package dev.atrium.resources.internal;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.BodyLimit;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.StoredContent;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.KvFacet;
import dev.atrium.resource.api.ObjectFacet;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.SqlFacet;
import dev.atrium.resources.internal.Authz.Granted;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.StreamingOutput;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/resources…}: every route of the spec's Resources table. Rows are the core's ({@link ResourceStore});
 * data is the provider's, reached only after {@link Authz} said what the call may do. A resource whose provider is not
 * running keeps its rows and answers 503 naming the provider on every route that needs it.
 *
 * <p>Why one class of about 1,330 lines: it is the spec's one Resources table, 37 routes of about 30 lines each (input
 * checks, {@link Authz}, one provider call); the facets' own logic lives in the providers. It is to be split by facet
 * with the SPI changes of issue 33 (item 5).
 */
@Component(service = ResourcesApi.class)
@KernelResource
@Path("/api/resources")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ResourcesApi {

    static final String NOT_FOUND = "resource not found";
    static final Pattern SERVICE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_-]{0,99}");
    static final Pattern BINDING = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,63}");
    static final int MAX_KEY = 512;
    static final int MAX_OBJECT_KEY = 1024;
    static final long MAX_KV_VALUE = 1L << 20;
    static final long MAX_OBJECT = 100L << 20;
    static final int MAX_SQL = 100_000;

    private final OwnerScope ownerScope;
    private final SpaceDirectory spaces;
    private final PrincipalDirectory principals;
    private final ResourceStore store;
    private final Providers providers;
    private final Runtime runtime;
    private final Authz authz;
    private final Directory directory;

    @Activate
    public ResourcesApi(
            @Reference OwnerScope ownerScope,
            @Reference SpaceDirectory spaces,
            @Reference PrincipalDirectory principals,
            @Reference ResourceStore store,
            @Reference Providers providers,
            @Reference Runtime runtime,
            @Reference Authz authz,
            @Reference Directory directory) {
        this.directory = directory;
        this.ownerScope = ownerScope;
        this.spaces = spaces;
        this.principals = principals;
        this.store = store;
        this.providers = providers;
        this.runtime = runtime;
        this.authz = authz;
    }

    static ApiException notFound() {
        return ApiException.notFound(NOT_FOUND);
    }

    // ---------------------------------------------------------------- listing and creating

    @GET
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.Page.class)
    public Map<String, Object> list(
            @Context SecurityContext sc,
            @QueryParam("space_id") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = space(Caller.from(sc), spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "resources",
                store.list(space.id(), null, page.limit(), page.offset()).stream()
                        .map(this::summary)
                        .toList(),
                store.count(space.id(), null));
    }

    @GET
    @Path("type/{type}")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.Page.class)
    public Map<String, Object> byType(
            @Context SecurityContext sc,
            @PathParam("type") String type,
            @QueryParam("space_id") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = space(Caller.from(sc), spaceId);
        requireType(type);
        PageRequest page = PageRequest.of(limit, offset);
        return page.body(
                "resources",
                store.list(space.id(), type, page.limit(), page.offset()).stream()
                        .map(this::summary)
                        .toList(),
                store.count(space.id(), type));
    }

    @GET
    @Path("shared/{spaceId}")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.SharedPage.class)
    public Map<String, Object> shared(
            @Context SecurityContext sc,
            @PathParam("spaceId") String spaceId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        SpaceRef space = ownerScope.require(Caller.from(sc), spaceId);
        PageRequest page = PageRequest.of(limit, offset);
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object[] r : store.sharedWith(space.id(), page.limit(), page.offset())) {
            Map<String, Object> m = summary((ResourceRow) r[0]);
            m.put("permission", r[1]);
            out.add(m);
        }
        return page.body("resources", out, store.countSharedWith(space.id()));
    }

    /** The running providers and the config each takes (what a client needs to create a resource). */
    @GET
    @Path("providers")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.ProviderList.class)
    public Map<String, Object> providers(@Context SecurityContext sc) {
        Caller.from(sc);
        List<Map<String, Object>> out = new ArrayList<>();
        for (Providers.Registered p : providers.all()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("type", p.type());
            m.put("backend", p.backend());
            m.put("facets", facets(p.provider()));
            m.put("config_schema", p.provider().configSchema().toJson());
            out.add(m);
        }
        return Map.of("providers", out);
    }

    @POST
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.One.class)
    public Response create(@Context SecurityContext sc, @JsonShape(ResourceJson.Create.class) JsonNode body) {
        NulText.reject(body);
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        String name = name(b.text("name", 1, 64));
        String type = b.text("type", 1, 40);
        requireType(type);
        String backend = b.optionalText("backend", 1, 40).orElse(null);
        Map<String, Object> config = config(body);
        SpaceRef space = space(caller, b.optionalText("space_id", 1, 200).orElse(null));
        ResourceRow row;
        try {
            row = directory.lifecycle().create(space.id(), type, backend, name, config);
        } catch (ResourceLifecycle.BadInput e) {
            throw ApiException.badRequest(e.getMessage());
        } catch (ResourceLifecycle.NameTaken e) {
            throw ApiException.conflict(e.getMessage());
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
        return Response.status(201)
                .entity(Map.of("resource", detail(row, Access.ADMIN)))
                .build();
    }

    // ---------------------------------------------------------------- one resource

    @GET
    @Path("{id}")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.One.class)
    public Map<String, Object> get(
            @Context SecurityContext sc, @PathParam("id") String id, @QueryParam("space_id") String actingSpace) {
        Caller caller = Caller.from(sc);
        Granted g = authz.byCaller(caller, store.find(id).orElseThrow(ResourcesApi::notFound), actingSpace);
        return Map.of("resource", detail(g.row(), g.access()));
    }

    @GET
    @Path("by-name/{name}")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.One.class)
    public Map<String, Object> getByName(
            @Context SecurityContext sc, @PathParam("name") String name, @QueryParam("space_id") String spaceId) {
        return Map.of("resource", detail(byName(Caller.from(sc), name, spaceId), Access.ADMIN));
    }

    @PATCH
    @Path("{id}")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.One.class)
    public Map<String, Object> update(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ResourceJson.Update.class) JsonNode body) {
        NulText.reject(body);
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        for (java.util.Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!Set.of("name", "config").contains(field)) {
                throw ApiException.badRequest("only name and config can be changed; '" + field + "' cannot");
            }
        }
        Optional<String> newName = b.optionalText("name", 1, 64).map(ResourcesApi::name);
        Map<String, Object> rawConfig = body.has("config") ? config(body) : null;
        ResourceRow row = authz.owned(caller, id);
        String storedConfig = null;
        if (rawConfig != null) {
            ResourceProvider provider = providers.require(row.type, row.backend);
            Map<String, Object> config = validate(provider, rawConfig);
            try {
                provider.update(runtime.context(row, Access.ADMIN), config);
            } catch (ResourceException e) {
                throw Runtime.answer(e);
            }
            storedConfig = Runtime.json(provider.configSchema().withoutSecrets(config));
        }
        return Map.of("resource", detail(store.update(row.id, newName.orElse(null), storedConfig), Access.ADMIN));
    }

    @DELETE
    @Path("{id}")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> delete(@Context SecurityContext sc, @PathParam("id") String id) {
        return delete(authz.owned(Caller.from(sc), id));
    }

    @DELETE
    @Path("by-name/{name}")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> deleteByName(
            @Context SecurityContext sc, @PathParam("name") String name, @QueryParam("space_id") String spaceId) {
        return delete(byName(Caller.from(sc), name, spaceId));
    }

    private Map<String, Object> delete(ResourceRow row) {
        boolean deleted;
        try {
            deleted = directory.lifecycle().delete(row);
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
        if (!deleted) {
            throw notFound();
        }
        return Map.of("success", true);
    }

    // ---------------------------------------------------------------- access grants (owner only)

    @GET
    @Path("{id}/access")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.Grants.class)
    public Map<String, Object> access(@Context SecurityContext sc, @PathParam("id") String id) {
        ResourceRow row = authz.owned(Caller.from(sc), id);
        return Map.of(
                "access",
                store.grants(row.id).stream().map(ResourcesApi::grantJson).toList());
    }

    @POST
    @Path("{id}/access")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.OneGrant.class)
    public Response grant(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ResourceJson.GrantInput.class) JsonNode body) {
        NulText.reject(body);
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        String target = b.text("space_id", 1, 200);
        String permission = b.oneOf("permission", Set.of("read", "write", "admin"))
                .orElseThrow(() -> ApiException.badRequest("permission is required: read, write or admin"));
        ResourceRow row = authz.owned(caller, id);
        // single authority: the kernel must prove the caller owns the workspace granted to, or it does not exist for us
        SpaceRef space;
        try {
            space = ownerScope.require(caller, target);
        } catch (ApiException e) {
            throw ApiException.notFound("workspace not found");
        }
        if (space.id().equals(row.spaceId)) {
            throw ApiException.badRequest("space_id is the resource's own workspace, which always has full access");
        }
        return Response.status(201)
                .entity(Map.of("access", grantJson(store.grant(row.id, space.id(), permission))))
                .build();
    }

    @DELETE
    @Path("{id}/access/{spaceId}")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> revoke(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("spaceId") String spaceId) {
        Caller caller = Caller.from(sc);
        ResourceRow row = authz.owned(caller, id);
        String target = spaceId;
        if (store.grant(row.id, target).isEmpty()) {
            // a slug names the same workspace as its id
            try {
                target = ownerScope.require(caller, spaceId).id();
            } catch (ApiException e) {
                throw ApiException.notFound("no access grant for that workspace");
            }
        }
        if (!store.revoke(row.id, target)) {
            throw ApiException.notFound("no access grant for that workspace");
        }
        directory.changed(store.bindings(row.id).stream().map(b -> b.serviceId).toList());
        return Map.of("success", true);
    }

    // ---------------------------------------------------------------- bindings (owner only)

    @POST
    @Path("{id}/bind")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.OneBinding.class)
    public Response bind(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ResourceJson.BindInput.class) JsonNode body) {
        NulText.reject(body);
        JsonBody b = JsonBody.of(body);
        String serviceId = b.text("service_id", 1, 100);
        if (!SERVICE_ID.matcher(serviceId).matches()) {
            throw ApiException.badRequest("service_id must be letters, digits, '_' or '-'");
        }
        Optional<String> binding = b.optionalText("binding", 1, 64);
        if (binding.isPresent() && !BINDING.matcher(binding.get()).matches()) {
            throw ApiException.badRequest(
                    "binding must be a variable name: letters, digits and '_', not starting with a digit");
        }
        Caller caller = Caller.from(sc);
        ResourceRow row = authz.owned(caller, id);
        // the service must be the caller's too (the kernel's proof, 404 as a missing one), and its workspace must be
        // one whose code may use the resource, the rule of PATCH /api/services/:id/bindings: nothing is stored and no
        // service is redeployed otherwise
        SpaceRef serviceSpace = authz.ownedService(caller, serviceId);
        if (directory.find(caller, serviceSpace, row.id, null).isEmpty()) {
            throw ApiException.badRequest(
                    "the service is in another workspace, which holds no access grant on this resource: grant it access"
                            + " (POST /api/resources/" + row.id
                            + "/access) or bind a resource of the service's workspace");
        }
        String name = binding.orElseGet(
                () -> row.name.toUpperCase(java.util.Locale.ROOT).replaceAll("[^A-Z0-9_]", "_"));
        if (!BINDING.matcher(name).matches()) {
            name = "_" + name;
        }
        BindingRow bound = store.bind(row.id, serviceId, name);
        directory.changed(List.of(serviceId));
        return Response.status(201)
                .entity(Map.of("binding", bindingJson(bound)))
                .build();
    }

    @DELETE
    @Path("{id}/bind/{serviceId}")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> unbind(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("serviceId") String serviceId) {
        Caller caller = Caller.from(sc);
        return unbind(caller, authz.owned(caller, id), serviceId);
    }

    @DELETE
    @Path("by-name/{name}/bind/{serviceId}")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> unbindByName(
            @Context SecurityContext sc,
            @PathParam("name") String name,
            @PathParam("serviceId") String serviceId,
            @QueryParam("space_id") String spaceId) {
        Caller caller = Caller.from(sc);
        return unbind(caller, byName(caller, name, spaceId), serviceId);
    }

    private Map<String, Object> unbind(Caller caller, ResourceRow row, String serviceId) {
        // only the caller's own service is redeployed by an unbind: another's is the same 404 as a missing one
        authz.ownedService(caller, serviceId);
        if (!store.unbind(row.id, serviceId)) {
            throw ApiException.notFound("the resource is not bound to that service");
        }
        directory.changed(List.of(serviceId));
        return Map.of("success", true);
    }

    // ---------------------------------------------------------------- tokens (owner only)

    @GET
    @Path("{id}/tokens")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.Tokens.class)
    public Map<String, Object> tokens(@Context SecurityContext sc, @PathParam("id") String id) {
        return tokens(authz.owned(Caller.from(sc), id));
    }

    @GET
    @Path("by-name/{name}/tokens")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.Tokens.class)
    public Map<String, Object> tokensByName(
            @Context SecurityContext sc, @PathParam("name") String name, @QueryParam("space_id") String spaceId) {
        return tokens(byName(Caller.from(sc), name, spaceId));
    }

    private Map<String, Object> tokens(ResourceRow row) {
        return Map.of(
                "tokens",
                store.tokens(row.id).stream().map(ResourcesApi::tokenJson).toList());
    }

    @POST
    @Path("{id}/tokens")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.OneNewToken.class)
    public Response createToken(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @JsonShape(ResourceJson.TokenInput.class) JsonNode body) {
        NulText.reject(body);
        TokenRequest request = TokenRequest.of(body);
        return createToken(authz.owned(Caller.from(sc), id), request);
    }

    @POST
    @Path("by-name/{name}/tokens")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.OneNewToken.class)
    public Response createTokenByName(
            @Context SecurityContext sc,
            @PathParam("name") String name,
            @QueryParam("space_id") String spaceId,
            @JsonShape(ResourceJson.TokenInput.class) JsonNode body) {
        NulText.reject(body);
        TokenRequest request = TokenRequest.of(body);
        return createToken(byName(Caller.from(sc), name, spaceId), request);
    }

    private record TokenRequest(String name, String permission) {
        static TokenRequest of(JsonNode body) {
            JsonBody b = JsonBody.of(body);
            return new TokenRequest(
                    b.optionalText("name", 1, 100).orElse("token"),
                    b.oneOf("permission", Set.of("read", "write", "admin")).orElse("read"));
        }
    }

    private Response createToken(ResourceRow row, TokenRequest request) {
        String secret = Ids.random(Authz.TOKEN_PREFIX, 40);
        TokenRow t = new TokenRow();
        t.id = Ids.id("rtk");
        t.resourceId = row.id;
        t.name = request.name();
        t.permission = request.permission();
        t.tokenHash = Digests.sha256Base64Url(secret);
        t.createdAt = ResourceStore.now();
        store.createToken(t);
        Map<String, Object> m = tokenJson(t);
        m.put("token", secret);
        m.put("header", Authz.TOKEN_HEADER);
        return Response.status(201).entity(Map.of("token", m)).build();
    }

    @DELETE
    @Path("{id}/tokens/{tokenId}")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> deleteToken(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("tokenId") String tokenId) {
        return deleteToken(authz.owned(Caller.from(sc), id), tokenId);
    }

    @DELETE
    @Path("by-name/{name}/tokens/{tokenId}")
    @RequiresScope("files:write")
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> deleteTokenByName(
            @Context SecurityContext sc,
            @PathParam("name") String name,
            @PathParam("tokenId") String tokenId,
            @QueryParam("space_id") String spaceId) {
        return deleteToken(byName(Caller.from(sc), name, spaceId), tokenId);
    }

    private Map<String, Object> deleteToken(ResourceRow row, String tokenId) {
        if (!store.deleteToken(row.id, tokenId)) {
            throw ApiException.notFound("token not found");
        }
        return Map.of("success", true);
    }

    // ---------------------------------------------------------------- connection info

    @GET
    @Path("{id}/connection")
    @Anonymous
    @JsonShape(ResourceJson.OneConnection.class)
    public Map<String, Object> connection(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @QueryParam("space_id") String actingSpace) {
        return connection(authz.authorize(sc, token, id, actingSpace, Access.READ));
    }

    @GET
    @Path("by-name/{name}/connection")
    @RequiresScope("files:read")
    @JsonShape(ResourceJson.OneConnection.class)
    public Map<String, Object> connectionByName(
            @Context SecurityContext sc, @PathParam("name") String name, @QueryParam("space_id") String spaceId) {
        return connection(new Granted(byName(Caller.from(sc), name, spaceId), Access.ADMIN, "owner"));
    }

    private Map<String, Object> connection(Granted g) {
        ResourceProvider provider = providers.require(g.row().type, g.row().backend);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("resource_id", g.row().id);
        m.put("type", g.row().type);
        m.put("backend", g.row().backend);
        m.put("permission", g.access().wire());
        m.put("api", "/api/resources/" + g.row().id);
        m.put("token_header", Authz.TOKEN_HEADER);
        try {
            m.put("connection", provider.connectionInfo(runtime.context(g.row(), g.access())));
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
        return Map.of("connection", m);
    }

    // ---------------------------------------------------------------- kv facet

    @GET
    @Path("{id}/kv/entries")
    @Anonymous
    @JsonShape(ResourceJson.KvPage.class)
    public Map<String, Object> kvList(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @QueryParam("space_id") String actingSpace,
            @QueryParam("prefix") String prefix,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        int n = limit(limit, 1000, 1000);
        String p = prefix == null ? "" : prefix;
        if (p.length() > MAX_KEY) {
            throw ApiException.badRequest("prefix must be at most " + MAX_KEY + " characters");
        }
        NulText.reject("prefix", p);
        KvFacet kv = facet(g, KvFacet.class, "kv");
        try {
            KvFacet.KvPage page = kv.list(runtime.context(g.row(), g.access()), p, blankToNull(cursor), n);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(
                    "keys",
                    page.keys().stream()
                            .map(k -> {
                                Map<String, Object> e = new LinkedHashMap<>();
                                e.put("name", k.name());
                                e.put(
                                        "expires_at",
                                        k.expiresAt() == null
                                                ? null
                                                : k.expiresAt().toString());
                                return e;
                            })
                            .toList());
            m.put("cursor", page.cursor());
            m.put("list_complete", page.cursor() == null);
            return m;
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
    }

    @GET
    @Path("{id}/kv/entries/{key: .+}")
    @Anonymous
    @Produces({MediaType.APPLICATION_OCTET_STREAM, MediaType.APPLICATION_JSON})
    @NotJson("application/octet-stream")
    public Response kvGet(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @PathParam("key") String key,
            @QueryParam("space_id") String actingSpace) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        kvKey(key);
        KvFacet kv = facet(g, KvFacet.class, "kv");
        try {
            KvFacet.KvEntry entry = kv.get(runtime.context(g.row(), g.access()), key)
                    .orElseThrow(() -> ApiException.notFound("key not found"));
            Response.ResponseBuilder r = Response.ok(entry.value(), MediaType.APPLICATION_OCTET_STREAM_TYPE);
            if (entry.expiresAt() != null) {
                r.header("X-Expires-At", entry.expiresAt().toString());
            }
            return r.build();
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
    }

    @PUT
    @Path("{id}/kv/entries/{key: .+}")
    @Anonymous
    @Consumes(MediaType.WILDCARD)
    @BodyLimit(MAX_KV_VALUE)
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> kvPut(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @PathParam("key") String key,
            @QueryParam("space_id") String actingSpace,
            @QueryParam("expiration_ttl") String ttl,
            byte[] value) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.WRITE);
        kvKey(key);
        Duration expiry = null;
        if (ttl != null && !ttl.isBlank()) {
            long seconds;
            try {
                seconds = Long.parseLong(ttl.trim());
            } catch (NumberFormatException e) {
                throw ApiException.badRequest("expiration_ttl must be a whole number of seconds");
            }
            if (seconds < 1 || seconds > 10L * 365 * 86400) {
                throw ApiException.badRequest("expiration_ttl must be between 1 second and 10 years");
            }
            expiry = Duration.ofSeconds(seconds);
        }
        byte[] bytes = value == null ? new byte[0] : value;
        if (bytes.length > MAX_KV_VALUE) {
            throw new ApiException(413, "PAYLOAD_TOO_LARGE", "a value must be at most " + MAX_KV_VALUE + " bytes");
        }
        KvFacet kv = facet(g, KvFacet.class, "kv");
        try {
            kv.put(runtime.context(g.row(), g.access()), key, bytes, expiry);
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
        return Map.of("success", true);
    }

    @DELETE
    @Path("{id}/kv/entries/{key: .+}")
    @Anonymous
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> kvDelete(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @PathParam("key") String key,
            @QueryParam("space_id") String actingSpace) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.WRITE);
        kvKey(key);
        KvFacet kv = facet(g, KvFacet.class, "kv");
        try {
            if (!kv.delete(runtime.context(g.row(), g.access()), key)) {
                throw ApiException.notFound("key not found");
            }
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
        return Map.of("success", true);
    }

    // ---------------------------------------------------------------- object facet

    @GET
    @Path("{id}/objects")
    @Anonymous
    @JsonShape(ResourceJson.ObjectPage.class)
    public Map<String, Object> objects(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @QueryParam("space_id") String actingSpace,
            @QueryParam("prefix") String prefix,
            @QueryParam("cursor") String cursor,
            @QueryParam("limit") String limit) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        int n = limit(limit, 1000, 1000);
        String p = prefix == null ? "" : prefix;
        if (p.length() > MAX_OBJECT_KEY) {
            throw ApiException.badRequest("prefix must be at most " + MAX_OBJECT_KEY + " characters");
        }
        NulText.reject("prefix", p);
        ObjectFacet objects = facet(g, ObjectFacet.class, "objects");
        try {
            ObjectFacet.ObjectPage page = objects.list(runtime.context(g.row(), g.access()), p, blankToNull(cursor), n);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(
                    "objects",
                    page.objects().stream().map(ResourcesApi::objectJson).toList());
            m.put("cursor", page.cursor());
            m.put("truncated", page.cursor() != null);
            return m;
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
    }

    @GET
    @Path("{id}/objects-stats")
    @Anonymous
    @JsonShape(ResourceJson.OneStats.class)
    public Map<String, Object> objectStats(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @QueryParam("space_id") String actingSpace) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        ObjectFacet objects = facet(g, ObjectFacet.class, "objects");
        try {
            ObjectFacet.ObjectStats s = objects.stats(runtime.context(g.row(), g.access()));
            return Map.of("stats", Map.of("object_count", s.objectCount(), "total_bytes", s.totalBytes()));
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
    }

    private static final Pattern RANGE = Pattern.compile("bytes=(\\d{1,18})-(\\d{0,18})");

    @GET
    @Path("{id}/objects/{key: .+}")
    @Anonymous
    @Produces({MediaType.WILDCARD, MediaType.APPLICATION_JSON})
    @NotJson("*/*")
    public Response objectGet(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @PathParam("key") String key,
            @QueryParam("space_id") String actingSpace,
            @HeaderParam("Range") String range) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        objectKey(key);
        ObjectFacet objects = facet(g, ObjectFacet.class, "objects");
        ResourceContext ctx = runtime.context(g.row(), g.access());
        try {
            ObjectFacet.ObjectInfo info =
                    objects.head(ctx, key).orElseThrow(() -> ApiException.notFound("object not found"));
            long offset = 0;
            long length = info.size();
            int status = 200;
            if (range != null && !range.isBlank()) {
                Matcher m = RANGE.matcher(range.trim());
                if (!m.matches()) {
                    throw new ApiException(416, "RANGE_NOT_SATISFIABLE", "Range must be 'bytes=<first>-[<last>]'");
                }
                offset = Long.parseLong(m.group(1));
                long last =
                        m.group(2).isEmpty() ? info.size() - 1 : Math.min(Long.parseLong(m.group(2)), info.size() - 1);
                if (offset >= info.size() || last < offset) {
                    throw new ApiException(
                            416,
                            "RANGE_NOT_SATISFIABLE",
                            "the range lies outside the object's " + info.size() + " bytes");
                }
                length = last - offset + 1;
                status = 206;
            }
            InputStream in = objects.get(ctx, key, offset, length);
            StreamingOutput body = out -> {
                try (InputStream src = in) {
                    src.transferTo(out);
                }
            };
            // an object is bytes a user (or a worker) stored: never run on the API's origin
            Response.ResponseBuilder r = Response.status(status)
                    .entity(body)
                    .type(info.contentType() == null ? MediaType.APPLICATION_OCTET_STREAM : info.contentType())
                    .header("Content-Length", length)
                    .header("ETag", "\"" + info.etag() + "\"")
                    .header("Accept-Ranges", "bytes")
                    .header("X-Content-Type-Options", StoredContent.NOSNIFF)
                    .header("Content-Security-Policy", StoredContent.CSP)
                    .header(
                            "Content-Disposition",
                            StoredContent.disposition(
                                    StoredContent.passive(info.contentType()) ? "inline" : "attachment",
                                    key.substring(key.lastIndexOf('/') + 1)));
            if (status == 206) {
                r.header("Content-Range", "bytes " + offset + "-" + (offset + length - 1) + "/" + info.size());
            }
            return r.build();
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
    }

    @PUT
    @Path("{id}/objects/{key: .+}")
    @Anonymous
    @Consumes(MediaType.WILDCARD)
    @BodyLimit(MAX_OBJECT)
    @JsonShape(ResourceJson.OneObject.class)
    public Map<String, Object> objectPut(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @PathParam("key") String key,
            @QueryParam("space_id") String actingSpace,
            @HeaderParam("Content-Type") String contentType,
            InputStream content) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.WRITE);
        objectKey(key);
        if (contentType != null
                && (contentType.length() > 200 || contentType.chars().anyMatch(c -> c < 0x20 || c > 0x7e))) {
            throw ApiException.badRequest("Content-Type must be at most 200 printable ASCII characters");
        }
        ObjectFacet objects = facet(g, ObjectFacet.class, "objects");
        try (InputStream in = content) {
            ObjectFacet.ObjectInfo info =
                    objects.put(runtime.context(g.row(), g.access()), key, in, contentType, MAX_OBJECT);
            return Map.of("object", objectJson(info));
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        } catch (IOException e) {
            throw ApiException.badRequest("the request body could not be read");
        }
    }

    @DELETE
    @Path("{id}/objects/{key: .+}")
    @Anonymous
    @JsonShape(ResourceJson.Success.class)
    public Map<String, Object> objectDelete(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @PathParam("key") String key,
            @QueryParam("space_id") String actingSpace) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.WRITE);
        objectKey(key);
        ObjectFacet objects = facet(g, ObjectFacet.class, "objects");
        try {
            if (!objects.delete(runtime.context(g.row(), g.access()), key)) {
                throw ApiException.notFound("object not found");
            }
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
        return Map.of("success", true);
    }

    // ---------------------------------------------------------------- sql facet

    @GET
    @Path("{id}/sql/tables")
    @Anonymous
    @JsonShape(ResourceJson.Tables.class)
    public Map<String, Object> sqlTables(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @QueryParam("space_id") String actingSpace) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        SqlFacet sql = facet(g, SqlFacet.class, "sql");
        try {
            return Map.of(
                    "tables",
                    sql.tables(runtime.context(g.row(), g.access())).stream()
                            .map(t -> Map.<String, Object>of("name", t.name(), "row_count", t.rowCount()))
                            .toList());
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
    }

    @GET
    @Path("{id}/sql/tables/{tableName}")
    @Anonymous
    @JsonShape(ResourceJson.SqlResult.class)
    public Map<String, Object> sqlTable(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @PathParam("tableName") String table,
            @QueryParam("space_id") String actingSpace,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        PageRequest page = PageRequest.of(limit, offset);
        if (table.length() > 200) {
            throw ApiException.badRequest("tableName must be at most 200 characters");
        }
        SqlFacet sql = facet(g, SqlFacet.class, "sql");
        try {
            return sqlJson(sql.tableRows(runtime.context(g.row(), g.access()), table, page.limit(), page.offset()));
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
    }

    @POST
    @Path("{id}/sql/query")
    @Anonymous
    @JsonShape(ResourceJson.SqlResult.class)
    public Map<String, Object> sqlQuery(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @QueryParam("space_id") String actingSpace,
            @JsonShape(ResourceJson.SqlInput.class) JsonNode body) {
        NulText.reject(body);
        // a read grant (or a files:read token) may query: the provider makes writes impossible on a read call by its
        // database's own means (SqlFacet), so a write statement fails inside SQLite, not on a reading of its text
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        String text = JsonBody.of(body).text("sql", 1, MAX_SQL);
        List<Object> params = new ArrayList<>();
        JsonNode p = body.get("params");
        if (p != null && !p.isNull()) {
            if (!p.isArray() || p.size() > 1000) {
                throw ApiException.badRequest("params must be an array of at most 1000 values");
            }
            for (JsonNode v : p) {
                if (v.isNull()) {
                    params.add(null);
                } else if (v.isIntegralNumber() && v.canConvertToLong()) {
                    params.add(v.asLong());
                } else if (v.isNumber()) {
                    params.add(v.asDouble());
                } else if (v.isBoolean()) {
                    params.add(v.asBoolean());
                } else if (v.isTextual()) {
                    params.add(v.asText());
                } else {
                    throw ApiException.badRequest("params may hold only strings, numbers, booleans and null");
                }
            }
        }
        SqlFacet sql = facet(g, SqlFacet.class, "sql");
        try {
            return sqlJson(sql.query(runtime.context(g.row(), g.access()), text, params));
        } catch (ResourceException e) {
            if (e.kind() == ResourceException.Kind.FORBIDDEN && g.scopeCapped()) {
                // the database refused a write because the token, not the Principal, is read-only: say which scope is
                // missing
                throw ApiException.forbidden(
                        "this token lacks the scope " + Authz.WRITE_SCOPE + ": it gets a read-only connection");
            }
            throw Runtime.answer(e);
        }
    }

    @POST
    @Path("{id}/sql/export")
    @Anonymous
    @Consumes(MediaType.WILDCARD)
    @Produces({"application/sql", MediaType.APPLICATION_JSON})
    @NotJson("application/sql")
    public Response sqlExport(
            @Context SecurityContext sc,
            @HeaderParam(Authz.TOKEN_HEADER) String token,
            @PathParam("id") String id,
            @QueryParam("space_id") String actingSpace) {
        Granted g = authz.authorize(sc, token, id, actingSpace, Access.READ);
        SqlFacet sql = facet(g, SqlFacet.class, "sql");
        ResourceContext ctx = runtime.context(g.row(), g.access());
        // the dump is written to memory first, so a failure is still a proper error answer rather than a cut stream
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try {
            sql.export(ctx, out);
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
        return Response.ok(out.toByteArray(), "application/sql; charset=utf-8")
                .header("Content-Disposition", "attachment; filename=\"" + g.row().name + ".sql\"")
                .build();
    }

    // ---------------------------------------------------------------- helpers

    /** The workspace a list or create is about: {@code space_id} proven by the kernel, else the caller's default one. */
    private SpaceRef space(Caller caller, String spaceId) {
        if (spaceId != null && !spaceId.isBlank()) {
            return ownerScope.require(caller, spaceId.trim());
        }
        String username = principals
                .get(caller.principalId())
                .map(PrincipalDirectory.Entry::username)
                .orElse(null);
        SpaceRef dflt = username == null ? null : spaces.byOwnerName(username).orElse(null);
        if (dflt == null) {
            throw ApiException.badRequest(
                    "space_id is required (this account has no username, so no default workspace to use)");
        }
        return ownerScope.require(caller, dflt.id());
    }

    /** The caller's resource called {@code name}: in {@code spaceId} when given, else in whichever of its workspaces has one. */
    private ResourceRow byName(Caller caller, String name, String spaceId) {
        if (name.length() > 64) {
            throw notFound();
        }
        String in = null;
        if (spaceId != null && !spaceId.isBlank()) {
            try {
                in = ownerScope.require(caller, spaceId.trim()).id();
            } catch (ApiException e) {
                throw notFound();
            }
        }
        List<ResourceRow> mine = new ArrayList<>();
        for (ResourceRow r : store.byName(name)) {
            if ((in == null || in.equals(r.spaceId)) && authz.owns(caller, r.spaceId)) {
                mine.add(r);
            }
        }
        if (mine.isEmpty()) {
            throw notFound();
        }
        if (mine.size() > 1) {
            throw ApiException.conflict(
                    "several of your workspaces have a resource named '" + name + "'; pass space_id to choose one");
        }
        return mine.get(0);
    }

    private <F> F facet(Granted g, Class<F> facet, String what) {
        ResourceProvider provider = providers.require(g.row().type, g.row().backend);
        if (!facet.isInstance(provider)) {
            throw ApiException.badRequest("a " + g.row().type + " resource has no " + what + " routes");
        }
        return facet.cast(provider);
    }

    private static void requireType(String type) {
        try {
            ResourceLifecycle.requireType(type);
        } catch (ResourceLifecycle.BadInput e) {
            throw ApiException.badRequest(e.getMessage());
        }
    }

    private static String name(String name) {
        try {
            return ResourceLifecycle.requireName(name);
        } catch (ResourceLifecycle.BadInput e) {
            throw ApiException.badRequest(e.getMessage());
        }
    }

    private static Map<String, Object> config(JsonNode body) {
        JsonNode c = body.get("config");
        if (c == null || c.isNull()) {
            return Map.of();
        }
        if (!c.isObject()) {
            throw ApiException.badRequest("config must be a JSON object");
        }
        return Runtime.JSON.convertValue(c, new TypeReference<Map<String, Object>>() {});
    }

    private static Map<String, Object> validate(ResourceProvider provider, Map<String, Object> raw) {
        try {
            return ResourceLifecycle.validate(provider, raw);
        } catch (ResourceLifecycle.BadInput e) {
            throw ApiException.badRequest(e.getMessage());
        } catch (ResourceException e) {
            throw Runtime.answer(e);
        }
    }

    private static void kvKey(String key) {
        if (key.isEmpty() || key.length() > MAX_KEY) {
            throw ApiException.badRequest("a key must be 1 to " + MAX_KEY + " characters");
        }
        NulText.reject("key", key);
    }

    private static void objectKey(String key) {
        if (key.isEmpty() || key.length() > MAX_OBJECT_KEY) {
            throw ApiException.badRequest("an object key must be 1 to " + MAX_OBJECT_KEY + " characters");
        }
        NulText.reject("key", key);
    }

    private static int limit(String value, int dflt, int max) {
        if (value == null || value.isBlank()) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 1 && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiException.badRequest("limit must be an integer between 1 and " + max);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    private static List<String> facets(ResourceProvider p) {
        List<String> out = new ArrayList<>();
        if (p instanceof SqlFacet) {
            out.add("sql");
        }
        if (p instanceof ObjectFacet) {
            out.add("objects");
        }
        if (p instanceof KvFacet) {
            out.add("kv");
        }
        if (p instanceof dev.atrium.resource.api.QueueFacet) {
            out.add("queue");
        }
        if (p instanceof dev.atrium.resource.api.VectorFacet) {
            out.add("vectors");
        }
        if (p instanceof dev.atrium.resource.api.AnalyticsFacet) {
            out.add("analytics");
        }
        if (p instanceof dev.atrium.resource.api.SecretFacet) {
            out.add("secret");
        }
        return out;
    }

    private Map<String, Object> summary(ResourceRow r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", r.id);
        m.put("name", r.name);
        m.put("type", r.type);
        m.put("backend", r.backend);
        m.put("space_id", r.spaceId);
        m.put("status", providers.find(r.type, r.backend).isPresent() ? "ready" : "provider_missing");
        m.put("created_at", r.createdAt.toString());
        m.put("updated_at", r.updatedAt.toString());
        return m;
    }

    private Map<String, Object> detail(ResourceRow r, Access access) {
        Map<String, Object> m = summary(r);
        m.put("config", Runtime.parse(r.config));
        m.put("permission", access.wire());
        Optional<ResourceProvider> provider = providers.find(r.type, r.backend);
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("type", r.type);
        p.put("backend", r.backend);
        p.put("available", provider.isPresent());
        if (provider.isPresent()) {
            p.put("facets", facets(provider.get()));
            ResourceProvider.Health h;
            try {
                h = provider.get().health(runtime.context(r, access));
            } catch (RuntimeException e) {
                h = ResourceProvider.Health.failing("health check failed");
            }
            p.put("healthy", h != null && h.healthy());
            p.put("health", h == null ? "unknown" : h.detail());
        }
        m.put("provider", p);
        // access info and bindings only for the owner: a grantee sees what it may do, not who else may
        if (access == Access.ADMIN) {
            m.put(
                    "access",
                    store.grants(r.id).stream().map(ResourcesApi::grantJson).toList());
            m.put(
                    "bindings",
                    store.bindings(r.id).stream().map(ResourcesApi::bindingJson).toList());
        }
        m.put("usage", runtime.usage(r.spaceId, r.id));
        return m;
    }

    private static Map<String, Object> grantJson(AccessRow a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("space_id", a.spaceId);
        m.put("permission", a.permission);
        m.put("created_at", a.createdAt.toString());
        return m;
    }

    private static Map<String, Object> bindingJson(BindingRow b) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("service_id", b.serviceId);
        m.put("binding", b.bindingName);
        m.put("created_at", b.createdAt.toString());
        return m;
    }

    private static Map<String, Object> tokenJson(TokenRow t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", t.id);
        m.put("name", t.name);
        m.put("permission", t.permission);
        m.put("created_at", t.createdAt.toString());
        m.put("last_used_at", t.lastUsedAt == null ? null : t.lastUsedAt.toString());
        return m;
    }

    private static Map<String, Object> objectJson(ObjectFacet.ObjectInfo o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", o.key());
        m.put("size", o.size());
        m.put("etag", o.etag());
        m.put("content_type", o.contentType());
        m.put("uploaded", o.uploaded() == null ? null : o.uploaded().toString());
        return m;
    }

    private static Map<String, Object> sqlJson(SqlFacet.SqlResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("columns", r.columns());
        List<List<Object>> rows = new ArrayList<>();
        for (List<Object> row : r.rows()) {
            List<Object> out = new ArrayList<>();
            for (Object v : row) {
                out.add(
                        v instanceof byte[] bytes
                                ? java.util.Base64.getEncoder().encodeToString(bytes)
                                : v);
            }
            rows.add(out);
        }
        m.put("rows", rows);
        m.put("rows_changed", r.rowsChanged());
        m.put("truncated", r.truncated());
        return m;
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
