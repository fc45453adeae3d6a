package dev.atrium.kernel.internal.rest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.internal.auth.PersonalAccessTokens;
import dev.atrium.kernel.internal.auth.Scopes;
import dev.atrium.kernel.internal.domain.Names;
import dev.atrium.kernel.internal.domain.PrincipalRecord;
import dev.atrium.kernel.internal.domain.Principals;
import dev.atrium.kernel.internal.domain.Workspaces;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Set;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.PATCH;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The signed-in Principal: {@code /api/me}, its settings, username, default workspace and personal access tokens. */
@Component(service = MeResource.class)
@KernelResource
@Path("/api/me")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class MeResource {

    static final Set<String> VISIBILITY = Set.of("public", "followers", "private");

    private final Principals principals;
    private final Workspaces workspaces;
    private final PersonalAccessTokens tokens;

    @Activate
    public MeResource(
            @Reference Principals principals,
            @Reference Workspaces workspaces,
            @Reference PersonalAccessTokens tokens) {
        this.principals = principals;
        this.workspaces = workspaces;
        this.tokens = tokens;
    }

    static PrincipalRecord me(Principals principals, Caller caller) {
        return principals
                .get(caller.principalId())
                .orElseThrow(() -> ApiException.unauthorized("authentication required"));
    }

    @GET
    @JsonShape(KernelJson.Me.class)
    public Map<String, Object> me(@Context SecurityContext sc) {
        return me(principals, Caller.from(sc)).toMe();
    }

    @RequiresScope("account:read")
    @GET
    @Path("settings")
    @JsonShape(KernelJson.Settings.class)
    public Map<String, Object> settings(@Context SecurityContext sc) {
        return me(principals, Caller.from(sc)).toSettings();
    }

    @PATCH
    @Path("settings")
    @JsonShape(KernelJson.Settings.class)
    public Map<String, Object> updateSettings(
            @Context SecurityContext sc, @JsonShape(KernelJson.SettingsInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        JsonBody b = JsonBody.of(body);
        Principals.SettingsChange change = new Principals.SettingsChange(
                b.bool("setup_completed").orElse(null),
                b.bool("auto_update_enabled").orElse(null),
                b.bool("private_account").orElse(null),
                b.oneOf("activity_visibility", VISIBILITY).orElse(null));
        return principals.updateSettings(caller.principalId(), change).toSettings();
    }

    @PATCH
    @Path("username")
    @JsonShape(KernelJson.Me.class)
    public Map<String, Object> rename(
            @Context SecurityContext sc, @JsonShape(KernelJson.UsernameInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        String username = validUsername(JsonBody.of(body));
        return principals.rename(caller.principalId(), username, false).toMe();
    }

    static String validUsername(JsonBody body) {
        String username = body.requiredString("username").trim();
        String problem = Names.formProblem("username", username, 3, 39);
        if (problem != null) {
            throw ApiException.badRequest(problem);
        }
        return username;
    }

    @GET
    @Path("personal-space")
    @JsonShape(KernelJson.OneSpace.class)
    public Map<String, Object> personalSpace(@Context SecurityContext sc) {
        return SpacesResource.defaultSpace(workspaces, Caller.from(sc));
    }

    @RequiresScope("account:read")
    @GET
    @Path("personal-access-tokens")
    @JsonShape(KernelJson.Tokens.class)
    public Map<String, Object> listTokens(@Context SecurityContext sc) {
        return Map.of(
                "tokens",
                tokens.list(Caller.from(sc).principalId()).stream()
                        .map(PersonalAccessTokens.Token::toJson)
                        .toList());
    }

    @POST
    @Path("personal-access-tokens")
    @JsonShape(KernelJson.CreatedToken.class)
    public Response createToken(@Context SecurityContext sc, @JsonShape(KernelJson.TokenInput.class) JsonNode body) {
        Caller caller = Caller.from(sc);
        return Response.status(201)
                .entity(createToken(tokens, caller.principalId(), JsonBody.of(body), null)
                        .toJson())
                .build();
    }

    /** Validates a token request body and creates the token; shared with the operator's admin API. */
    static PersonalAccessTokens.Created createToken(
            PersonalAccessTokens tokens, String principalId, JsonBody b, String defaultName) {
        String name = defaultName == null
                ? b.text("name", 1, 100)
                : b.optionalText("name", 1, 100).orElse(defaultName);
        Set<String> scopes = Scopes.parse(b.string("scopes").orElse("*"));
        Instant expiresAt = b.string("expiresAt").map(MeResource::instant).orElse(null);
        return tokens.create(principalId, name, scopes, expiresAt);
    }

    private static Instant instant(String value) {
        try {
            return java.time.OffsetDateTime.parse(value).toInstant();
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest(
                    "expiresAt must be an ISO 8601 timestamp with an offset, such as 2030-01-31T12:00:00Z");
        }
    }

    @DELETE
    @Path("personal-access-tokens/{id}")
    @JsonShape(KernelJson.Success.class)
    public Map<String, Object> deleteToken(@Context SecurityContext sc, @PathParam("id") String id) {
        if (!tokens.delete(Caller.from(sc).principalId(), id)) {
            throw ApiException.notFound("personal access token not found");
        }
        return Map.of("success", true);
    }
}
