package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.PublicUrls;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The authorization server as the resources see it: the protocol's constants, the issuer, and one entry per
 * operation, each handed to the part that owns it ({@link OAuthClients}, {@link Authorizations}, {@link TokenGrants},
 * {@link DeviceFlow}, {@link IssuedTokens}, {@link OAuthConsents}, {@link OAuthAuditLog}). Resources translate HTTP to
 * these calls; every failure of the protocol is an {@link OAuthError}.
 */
@Component(
        service = OAuthServer.class,
        configurationPid = "dev.atrium.oauth",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = OAuthServer.Config.class)
public class OAuthServer {

    @ObjectClassDefinition(name = "Atrium OAuth server")
    public @interface Config {
        @AttributeDefinition(description = "The issuer, when it differs from the public base URL (ATRIUM_OAUTH_ISSUER)")
        String issuer() default "";
    }

    static final Duration CODE_TTL = Duration.ofSeconds(60);
    static final Duration ACCESS_TTL = Duration.ofHours(1);
    static final Duration REFRESH_TTL = Duration.ofDays(30);
    static final Duration ID_TOKEN_TTL = Duration.ofHours(1);
    static final Duration DEVICE_TTL = Duration.ofMinutes(10);
    static final int DEVICE_INTERVAL = 2;
    static final String DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
    static final Set<String> GRANT_TYPES =
            Set.of("authorization_code", "refresh_token", "client_credentials", DEVICE_GRANT);
    static final Set<String> AUTH_METHODS = Set.of("client_secret_basic", "client_secret_post", "none");

    private final PrincipalDirectory principals;
    private final PublicUrls urls;
    private final OAuthClients clients;
    private final Authorizations authorizations;
    private final TokenGrants grants;
    private final DeviceFlow devices;
    private final IssuedTokens tokens;
    private final OAuthConsents consents;
    private final OAuthAuditLog audit;
    private final String configuredIssuer;

    @Activate
    public OAuthServer(
            @Reference PrincipalDirectory principals,
            @Reference PublicUrls urls,
            @Reference OAuthClients clients,
            @Reference Authorizations authorizations,
            @Reference TokenGrants grants,
            @Reference DeviceFlow devices,
            @Reference IssuedTokens tokens,
            @Reference OAuthConsents consents,
            @Reference OAuthAuditLog audit,
            Config config) {
        this.principals = principals;
        this.urls = urls;
        this.clients = clients;
        this.authorizations = authorizations;
        this.grants = grants;
        this.devices = devices;
        this.tokens = tokens;
        this.consents = consents;
        this.audit = audit;
        this.configuredIssuer =
                config.issuer().isBlank() ? null : config.issuer().trim().replaceAll("/+$", "");
    }

    /**
     * The issuer, and base of every URL the server publishes: the configured one ({@code ATRIUM_OAUTH_ISSUER}), else the
     * operator's public base URL, else (and the kernel warned at start) the request's own scheme and Host.
     */
    String issuer(java.net.URI requestBase) {
        return configuredIssuer != null ? configuredIssuer : urls.base(requestBase);
    }

    // ---------------------------------------------------------------- clients

    OAuthClients.Registered register(String ownerPrincipalId, OAuthClients.ClientSpec spec, boolean dynamic) {
        return clients.register(ownerPrincipalId, spec, dynamic);
    }

    Optional<Client> client(String clientId) {
        return clients.client(clientId);
    }

    Optional<Client> clientByRegistrationToken(String clientId, String token) {
        return clients.clientByRegistrationToken(clientId, token);
    }

    List<Client> owned(String principalId) {
        return clients.owned(principalId);
    }

    Client update(
            String principalId,
            String clientId,
            String name,
            List<String> redirectUris,
            Set<String> scopes,
            String clientUri,
            String logoUri,
            List<String> postLogoutRedirectUris) {
        return clients.update(
                principalId, clientId, name, redirectUris, scopes, clientUri, logoUri, postLogoutRedirectUris);
    }

    void delete(String principalId, String clientId) {
        clients.delete(principalId, clientId);
    }

    Client authenticate(String authorization, String bodyClientId, String bodySecret) {
        return clients.authenticate(authorization, bodyClientId, bodySecret);
    }

    // ---------------------------------------------------------------- authorization

    Authorizations.AuthorizeRequest checkAuthorize(Map<String, String> p) {
        return authorizations.checkAuthorize(p);
    }

    /** The signed-in caller approved: a code that records when and how they signed in. */
    String approve(dev.atrium.kernel.api.Caller user, Authorizations.AuthorizeRequest r) {
        return authorizations.approve(user.principalId(), Authentication.of(user), r);
    }

    String deny(String principalId, Authorizations.AuthorizeRequest r) {
        return authorizations.deny(principalId, r);
    }

    // ---------------------------------------------------------------- token endpoint

    Map<String, Object> token(String issuer, Client client, Map<String, String> p) {
        String grant = p.get("grant_type");
        if (grant == null || grant.isEmpty()) {
            throw OAuthError.invalidRequest("grant_type is required");
        }
        if (!GRANT_TYPES.contains(grant)) {
            throw OAuthError.unsupportedGrantType("grant_type '" + grant + "' is not supported");
        }
        if (!client.grantTypes().contains(grant)) {
            throw OAuthError.unauthorizedClient("this client may not use the " + grant + " grant");
        }
        return switch (grant) {
            case "authorization_code" -> grants.codeGrant(issuer, client, p);
            case "refresh_token" -> grants.refreshGrant(issuer, client, p);
            case "client_credentials" -> grants.clientCredentials(client, p);
            default -> devices.deviceGrant(issuer, client, p);
        };
    }

    Map<String, Object> profileClaims(String principalId, Set<String> scopes) {
        return grants.profileClaims(principalId, scopes);
    }

    // ---------------------------------------------------------------- device flow (RFC 8628)

    Map<String, Object> deviceAuthorization(String issuer, Client client, Map<String, String> p) {
        return devices.deviceAuthorization(issuer, client, p);
    }

    DeviceFlow.DeviceRow pendingDevice(String userCode) {
        return devices.pendingDevice(userCode);
    }

    void decideDevice(dev.atrium.kernel.api.Caller user, String userCode, boolean approve) {
        devices.decideDevice(user.principalId(), Authentication.of(user), userCode, approve);
    }

    // ---------------------------------------------------------------- introspection, revocation, bearer use

    Map<String, Object> introspect(String issuer, Client client, String token) {
        return tokens.introspect(issuer, client, token);
    }

    void revoke(Client client, String token) {
        tokens.revoke(client, token);
    }

    Optional<IssuedTokens.Bearer> bearer(String token) {
        return tokens.bearer(token);
    }

    boolean principalActive(String principalId) {
        return tokens.principalActive(principalId);
    }

    PrincipalDirectory principals() {
        return principals;
    }

    // ---------------------------------------------------------------- consents and audit

    boolean consentCovers(String principalId, String clientId, Set<String> scopes) {
        return consents.covers(principalId, clientId, scopes);
    }

    List<Map<String, Object>> consents(String principalId) {
        return consents.consents(principalId);
    }

    boolean revokeConsent(String principalId, String clientId) {
        return consents.revokeConsent(principalId, clientId);
    }

    List<Map<String, Object>> auditLogs(String principalId, int limit, int offset) {
        return audit.auditLogs(principalId, limit, offset);
    }

    int auditCount(String principalId) {
        return audit.auditCount(principalId);
    }

    // ---------------------------------------------------------------- helpers

    static String withQuery(String uri, String... pairs) {
        StringBuilder sb = new StringBuilder(uri);
        boolean first = !uri.contains("?");
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1] == null) {
                continue;
            }
            sb.append(first ? '?' : '&')
                    .append(pairs[i])
                    .append('=')
                    .append(java.net.URLEncoder.encode(pairs[i + 1], StandardCharsets.UTF_8));
            first = false;
        }
        return sb.toString();
    }
}
