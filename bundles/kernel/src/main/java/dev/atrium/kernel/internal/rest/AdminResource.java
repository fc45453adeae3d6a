package dev.atrium.kernel.internal.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.AuditLog;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.PrincipalCredentials;
import dev.atrium.kernel.internal.audit.KernelAuditLog;
import dev.atrium.kernel.internal.audit.KeysetCursor;
import dev.atrium.kernel.internal.auth.PersonalAccessTokens;
import dev.atrium.kernel.internal.domain.AdminUsers;
import dev.atrium.kernel.internal.domain.PrincipalRecord;
import dev.atrium.kernel.internal.domain.Principals;
import dev.atrium.kernel.internal.domain.Workspaces;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The operator's user administration (the console's Users view and {@code ./atrium token create}): list and search,
 * create, suspend and reactivate, give a token, end every credential. Each change is written to the audit log.
 */
@Component(service = AdminResource.class)
@KernelResource
@Path("/admin/users")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
@OperatorOnly
public class AdminResource {

    private static final int MAX_QUERY = 200;

    private final Principals principals;
    private final Workspaces workspaces;
    private final PersonalAccessTokens tokens;
    private final AdminUsers users;
    private final KernelAuditLog audit;
    private final List<PrincipalCredentials> credentials = new CopyOnWriteArrayList<>();

    @Activate
    public AdminResource(
            @Reference Principals principals,
            @Reference Workspaces workspaces,
            @Reference PersonalAccessTokens tokens,
            @Reference AdminUsers users,
            @Reference KernelAuditLog audit) {
        this.principals = principals;
        this.workspaces = workspaces;
        this.tokens = tokens;
        this.users = users;
        this.audit = audit;
    }

    @Reference(
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY,
            unbind = "removeCredentials")
    void addCredentials(PrincipalCredentials holder) {
        credentials.add(holder);
    }

    void removeCredentials(PrincipalCredentials holder) {
        credentials.remove(holder);
    }

    /** Users newest first, a page of {@code limit} after {@code cursor}, matching {@code q} and {@code status}. */
    @GET
    @JsonShape(KernelJson.UserPage.class)
    public Map<String, Object> list(
            @QueryParam("q") String q,
            @QueryParam("status") String status,
            @QueryParam("limit") String limit,
            @QueryParam("cursor") String cursor) {
        NulText.reject("q", q);
        String query = q == null || q.isBlank() ? null : q.trim();
        if (query != null && query.length() > MAX_QUERY) {
            throw ApiException.badRequest("q must be at most " + MAX_QUERY + " characters");
        }
        String wanted = status == null || status.isBlank() ? null : status.trim();
        if (wanted != null && !wanted.equals("active") && !wanted.equals("suspended")) {
            throw ApiException.badRequest("status must be active or suspended");
        }
        AdminUsers.Page page = users.list(
                query,
                wanted,
                KeysetCursor.parse(cursor),
                PageRequest.of(limit, null).limit());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("users", page.users().stream().map(AdminUsers.User::toJson).toList());
        body.put("next_cursor", page.nextCursor());
        return body;
    }

    /** Creates the local Principal {@code username} with its default workspace, or returns the existing one. */
    @POST
    @JsonShape(KernelJson.UserAndSpace.class)
    public Response ensure(@JsonShape(KernelJson.UsernameInput.class) JsonNode body) {
        String username = MeResource.validUsername(JsonBody.of(body));
        Principals.Ensured ensured = principals.ensure(Principals.LOCAL_PROVIDER, username, username);
        if (ensured.created()) {
            audit.recordAbout(
                    AuditLog.OPERATOR,
                    "user_created",
                    username,
                    ensured.principal().id(),
                    "local");
        }
        return Response.status(ensured.created() ? 201 : 200)
                .entity(user(ensured.principal()))
                .build();
    }

    @GET
    @Path("{username}")
    @JsonShape(KernelJson.UserAndSpace.class)
    public Map<String, Object> one(@PathParam("username") String username) {
        return user(local(username));
    }

    private Map<String, Object> user(PrincipalRecord p) {
        // by id: a local Principal found by (provider, subject) may have changed its username since
        Map<String, Object> user = users.byId(p.id())
                .map(AdminUsers.User::toJson)
                .orElseThrow(() -> ApiException.notFound("no user named '" + p.username() + "'"));
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("user", user);
        m.put("space", workspaces.findDefault(p.id()).map(w -> w.toJson()).orElse(null));
        return m;
    }

    @POST
    @Path("{username}/tokens")
    @JsonShape(KernelJson.CreatedToken.class)
    public Response token(
            @PathParam("username") String username, @JsonShape(KernelJson.TokenInput.class) JsonNode body) {
        PrincipalRecord p = local(username);
        JsonBody b = JsonBody.of(
                body == null || body.isNull() || body.isMissingNode() ? JsonNodeFactory.instance.objectNode() : body);
        PersonalAccessTokens.Created created = MeResource.createToken(tokens, p.id(), b, "cli");
        audit.recordAbout(
                AuditLog.OPERATOR,
                "token_created",
                username,
                p.id(),
                created.token().name() + " (" + created.token().tokenPrefix() + "…, scopes "
                        + created.token().scopes() + ")");
        return Response.status(201).entity(created.toJson()).build();
    }

    /** Suspends the user: every token and session of theirs is refused from the next request, on every instance. */
    @POST
    @Path("{username}/suspend")
    @JsonShape(KernelJson.UserAndSpace.class)
    public Map<String, Object> suspend(@PathParam("username") String username) {
        return setStatus(username, "suspended", "user_suspended");
    }

    @POST
    @Path("{username}/reactivate")
    @JsonShape(KernelJson.UserAndSpace.class)
    public Map<String, Object> reactivate(@PathParam("username") String username) {
        return setStatus(username, "active", "user_reactivated");
    }

    /** The first name of {@link #reactivate}, kept for scripts that call it. */
    @POST
    @Path("{username}/activate")
    @JsonShape(KernelJson.UserAndSpace.class)
    public Map<String, Object> activate(@PathParam("username") String username) {
        return reactivate(username);
    }

    private Map<String, Object> setStatus(String username, String status, String action) {
        PrincipalRecord p = local(username);
        principals.setStatus(username, status);
        audit.recordAbout(AuditLog.OPERATOR, action, username, p.id(), null);
        return user(local(username));
    }

    /**
     * Ends every credential of the user: personal access tokens (deleted), and what each {@link PrincipalCredentials}
     * keeps (browser sessions, OAuth access and refresh tokens). The user stays active and may sign in again.
     */
    @POST
    @Path("{username}/revoke-tokens")
    @JsonShape(KernelJson.RevokedCredentials.class)
    public Map<String, Object> revokeTokens(@PathParam("username") String username) {
        PrincipalRecord p = local(username);
        Map<String, Object> revoked = new LinkedHashMap<>();
        revoked.put("personal_access_tokens", tokens.deleteAll(p.id()));
        for (PrincipalCredentials holder : credentials) {
            revoked.merge(holder.kind(), holder.revokeAll(p.id()), (a, b) -> (Integer) a + (Integer) b);
        }
        // this instance forgets now; the others hear the tables' triggers
        tokens.forgetAccess();
        StringBuilder detail = new StringBuilder();
        revoked.forEach((kind, n) -> detail.append(detail.isEmpty() ? "" : ", ")
                .append(n)
                .append(' ')
                .append(kind));
        audit.recordAbout(AuditLog.OPERATOR, "tokens_revoked", username, p.id(), detail.toString());
        Map<String, Object> body = user(p);
        body.put("revoked", revoked);
        return body;
    }

    private PrincipalRecord local(String username) {
        NulText.reject("username", username);
        return principals
                .byUsername(username)
                .orElseThrow(() -> ApiException.notFound("no user named '" + username + "'"));
    }
}
