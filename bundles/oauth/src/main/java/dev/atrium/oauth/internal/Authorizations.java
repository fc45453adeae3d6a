package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.Sql;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Authorization requests (RFC 6749 §4.1 with PKCE): checking a request, and the user's approval (a fresh code and
 * the consent) or denial, each sent back to the client's redirect URI.
 */
@Component(service = Authorizations.class)
public class Authorizations {

    private final Sql sql;
    private final OAuthClients clients;
    private final OAuthConsents consents;
    private final OAuthAuditLog audit;

    @Activate
    public Authorizations(
            @Reference DataSource dataSource,
            @Reference OAuthClients clients,
            @Reference OAuthConsents consents,
            @Reference OAuthAuditLog audit) {
        this.sql = new Sql(dataSource);
        this.clients = clients;
        this.consents = consents;
        this.audit = audit;
    }

    /** The {@code prompt} values of OpenID Connect Core 3.1.2.1 this server acts on. */
    static final Set<String> PROMPTS = Set.of("none", "login", "consent", "select_account");

    /**
     * A checked authorization request. {@code maxAge} is the oldest sign-in (in seconds) the client accepts, or null;
     * {@code prompt} holds the client's prompt values.
     */
    record AuthorizeRequest(
            Client client,
            String redirectUri,
            boolean redirectUriGiven,
            Set<String> scopes,
            String state,
            String codeChallenge,
            String nonce,
            Set<String> prompt,
            Long maxAge) {

        /** Whether the user must sign in again first: {@code prompt=login}, or a sign-in older than {@code max_age}. */
        boolean needsFreshSignIn(Authentication signedIn) {
            return prompt.contains("login")
                    || (maxAge != null
                            && signedIn.at()
                                    .plusSeconds(maxAge)
                                    .isBefore(Instant.now().minusMillis(999)));
        }
    }

    /** An authorization error sent back to the client's redirect URI (RFC 6749 §4.1.2.1). */
    static final class RedirectError extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String error;
        final String redirectUri;
        final String state;

        RedirectError(String error, String description, String redirectUri, String state) {
            super(description);
            this.error = error;
            this.redirectUri = redirectUri;
            this.state = state;
        }

        String location() {
            return OAuthServer.withQuery(
                    redirectUri, "error", error, "error_description", getMessage(), "state", state);
        }
    }

    /**
     * Checks an authorization request. An unknown client or a redirect URI that is not registered exactly is an
     * {@link OAuthError} shown to the user (never a redirect to an unverified URI); everything after that is a
     * {@link RedirectError}.
     */
    AuthorizeRequest checkAuthorize(Map<String, String> p) {
        String clientId = p.get("client_id");
        Client client =
                clients.client(clientId).orElseThrow(() -> new OAuthError("invalid_client", "unknown client_id", 400));
        String given = p.get("redirect_uri");
        String redirectUri;
        if (given == null || given.isEmpty()) {
            if (client.redirectUris().size() != 1) {
                throw OAuthError.invalidRequest("redirect_uri is required: the client registered several");
            }
            redirectUri = client.redirectUris().get(0);
        } else if (client.redirectUris().contains(given)
                || client.redirectUris().stream().anyMatch(r -> sameLoopbackRedirect(r, given))) {
            redirectUri = given;
        } else {
            throw OAuthError.unauthorizedClient("the redirect_uri is not registered for this client");
        }
        String state = p.get("state");
        boolean openid = p.get("scope") != null
                && java.util.Arrays.asList(p.get("scope").trim().split("\\s+")).contains("openid");
        if ((given == null || given.isEmpty()) && openid) {
            // OpenID Connect Core 3.1.2.1: redirect_uri is REQUIRED in an OpenID request
            throw OAuthError.invalidRequest("redirect_uri is required in an OpenID Connect request (scope openid)");
        }
        if (!"code".equals(p.get("response_type"))) {
            throw new RedirectError("unsupported_response_type", "response_type must be code", redirectUri, state);
        }
        if (!client.grantTypes().contains("authorization_code")) {
            throw new RedirectError(
                    "unauthorized_client", "this client may not use the authorization_code grant", redirectUri, state);
        }
        Set<String> scopes = requestedScopes(
                p.get("scope"), client, msg -> new RedirectError("invalid_scope", msg, redirectUri, state));
        String challenge = p.get("code_challenge");
        String method = p.get("code_challenge_method");
        if (challenge == null || challenge.isEmpty()) {
            if (client.isPublic()) {
                throw new RedirectError(
                        "invalid_request",
                        "a public client must use PKCE (code_challenge with S256)",
                        redirectUri,
                        state);
            }
            challenge = null;
        } else {
            if (!"S256".equals(method)) {
                throw new RedirectError("invalid_request", "code_challenge_method must be S256", redirectUri, state);
            }
            if (!challenge.matches("[A-Za-z0-9_-]{43}")) {
                throw new RedirectError(
                        "invalid_request", "code_challenge must be a base64url SHA-256", redirectUri, state);
            }
        }
        String nonce = p.get("nonce");
        if (nonce != null && nonce.length() > 500) {
            throw new RedirectError("invalid_request", "nonce is too long", redirectUri, state);
        }
        Set<String> prompt = new java.util.LinkedHashSet<>();
        if (p.get("prompt") != null) {
            for (String v : p.get("prompt").trim().split("\\s+")) {
                if (v.isEmpty()) {
                    continue;
                }
                if (!PROMPTS.contains(v)) {
                    throw new RedirectError(
                            "invalid_request",
                            "unknown prompt value '" + v + "'; supported: none login consent select_account",
                            redirectUri,
                            state);
                }
                prompt.add(v);
            }
        }
        if (prompt.contains("none") && prompt.size() > 1) {
            throw new RedirectError(
                    "invalid_request", "prompt=none cannot be combined with other prompt values", redirectUri, state);
        }
        Long maxAge = null;
        if (p.get("max_age") != null && !p.get("max_age").isEmpty()) {
            try {
                maxAge = Long.parseLong(p.get("max_age"));
            } catch (NumberFormatException e) {
                maxAge = -1L;
            }
            if (maxAge < 0) {
                throw new RedirectError(
                        "invalid_request", "max_age must be a non-negative number of seconds", redirectUri, state);
            }
        }
        return new AuthorizeRequest(
                client,
                redirectUri,
                given != null && !given.isEmpty(),
                scopes,
                state,
                challenge,
                nonce,
                java.util.Collections.unmodifiableSet(prompt),
                maxAge);
    }

    /**
     * RFC 8252 §7.3: a native app's loopback redirect (an {@code http} IP literal, 127.0.0.1 or [::1]) listens on a port
     * it picks at run time, so the port is not compared; scheme, host, path and query must be the registered ones.
     */
    static boolean sameLoopbackRedirect(String registered, String given) {
        java.net.URI r;
        java.net.URI g;
        try {
            r = new java.net.URI(registered);
            g = new java.net.URI(given);
        } catch (java.net.URISyntaxException e) {
            return false;
        }
        return "http".equals(r.getScheme())
                && "http".equals(g.getScheme())
                && loopbackLiteral(r.getHost())
                && r.getHost().equals(g.getHost())
                && r.getRawUserInfo() == null
                && g.getRawUserInfo() == null
                && java.util.Objects.equals(emptyAsSlash(r.getRawPath()), emptyAsSlash(g.getRawPath()))
                && java.util.Objects.equals(r.getRawQuery(), g.getRawQuery())
                && g.getRawFragment() == null;
    }

    private static boolean loopbackLiteral(String host) {
        return "127.0.0.1".equals(host) || "[::1]".equals(host);
    }

    private static String emptyAsSlash(String path) {
        return path == null || path.isEmpty() ? "/" : path;
    }

    /** The requested scopes: known, within the client's, and the client's own when none are named. */
    static Set<String> requestedScopes(
            String requested, Client client, java.util.function.Function<String, RuntimeException> invalid) {
        Set<String> scopes = ScopeSet.parse(requested);
        if (scopes == null) {
            throw invalid.apply("unknown scope in '" + requested + "'");
        }
        if (scopes.isEmpty()) {
            return client.scopes();
        }
        for (String s : scopes) {
            if (!client.scopes().contains(s)) {
                throw invalid.apply("scope '" + s + "' is not registered for this client");
            }
        }
        return scopes;
    }

    /** The user approved: records the consent and returns the redirect carrying a fresh code. */
    String approve(String principalId, Authentication signedIn, AuthorizeRequest r) {
        String code = Ids.random("atac_", 40);
        sql.tx(c -> {
            Sql.update(
                    c,
                    "INSERT INTO oauth_codes (code_hash, client_id, principal_id, redirect_uri, scopes, code_challenge, nonce, "
                            + "family_id, expires_at, auth_time, amr) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    Digests.sha256(code),
                    r.client().clientId(),
                    principalId,
                    r.redirectUriGiven() ? r.redirectUri() : null,
                    ScopeSet.join(r.scopes()),
                    r.codeChallenge(),
                    r.nonce(),
                    Ids.random("fam_", 20),
                    Instant.now().plus(OAuthServer.CODE_TTL),
                    signedIn.at(),
                    signedIn.amrColumn());
            consents.consent(c, principalId, r.client().clientId(), r.scopes());
            return null;
        });
        audit.audit(principalId, r.client().clientId(), "authorization_granted", ScopeSet.join(r.scopes()));
        return OAuthServer.withQuery(r.redirectUri(), "code", code, "state", r.state());
    }

    String deny(String principalId, AuthorizeRequest r) {
        audit.audit(principalId, r.client().clientId(), "authorization_denied", ScopeSet.join(r.scopes()));
        return OAuthServer.withQuery(
                r.redirectUri(),
                "error",
                "access_denied",
                "error_description",
                "the user denied the request",
                "state",
                r.state());
    }
}
