package dev.atrium.kernel.internal.auth;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.SessionVerifier;
import dev.atrium.kernel.api.TokenVerifier;
import dev.atrium.kernel.internal.auth.PersonalAccessTokens.Suspended;
import dev.atrium.kernel.internal.auth.PersonalAccessTokens.Valid;
import dev.atrium.kernel.internal.domain.PrincipalRecord;
import dev.atrium.kernel.internal.domain.Principals;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * Verifies Principal tokens (personal access tokens here, other prefixes through {@link TokenVerifier}s) and browser
 * session cookies (through {@link SessionVerifier}s).
 */
@Component(service = {Authenticator.class, TokenAuthenticator.class})
public class TokenAuthenticator implements Authenticator {

    private final PersonalAccessTokens tokens;
    private final Principals principals;
    private final AccessCache access;
    /*
     * The verifiers are bound by reference and their objects got only when a secret is verified: a verifier's bundle
     * (oauth, identity) needs this authenticator itself (optionally), and getting the verifier while binding made DS
     * create that bundle's component graph inside this one's creation; when the graph was created first, the cycle
     * closed on a component being created in the same thread and DS failed it ("Unable to get service for reference").
     */
    private static final String VERIFIERS = "verifiers";
    private static final String SESSIONS = "sessions";
    private final ComponentContext context;
    private final List<ServiceReference<TokenVerifier>> verifiers = new CopyOnWriteArrayList<>();
    private final List<ServiceReference<SessionVerifier>> sessions = new CopyOnWriteArrayList<>();
    private static final String BEARER = "bearer ";

    @Activate
    public TokenAuthenticator(
            ComponentContext context,
            @Reference PersonalAccessTokens tokens,
            @Reference Principals principals,
            @Reference AccessCache access) {
        this.context = context;
        this.tokens = tokens;
        this.principals = principals;
        this.access = access;
    }

    @Reference(
            name = VERIFIERS,
            service = TokenVerifier.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            unbind = "removeVerifier")
    void addVerifier(ServiceReference<TokenVerifier> verifier) {
        verifiers.add(verifier);
    }

    void removeVerifier(ServiceReference<TokenVerifier> verifier) {
        verifiers.remove(verifier);
        // what it proved must not outlive it (its feature disabled, its bundle updated)
        access.forgetAll();
    }

    @Reference(
            name = SESSIONS,
            service = SessionVerifier.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            unbind = "removeSessionVerifier")
    void addSessionVerifier(ServiceReference<SessionVerifier> verifier) {
        sessions.add(verifier);
    }

    void removeSessionVerifier(ServiceReference<SessionVerifier> verifier) {
        sessions.remove(verifier);
        access.forgetAll();
    }

    /** A live session: the kernel's caller for it and its CSRF token. */
    public record LiveSession(Caller caller, String csrfToken) {}

    /** The live session of a session cookie's value, or null; 401 when its Principal is suspended. */
    public LiveSession session(String cookieValue) {
        if (cookieValue == null || cookieValue.isBlank()) {
            return null;
        }
        Proof proof = access.get(
                "s:" + Digests.sha256Base64Url(cookieValue), () -> proveSession(cookieValue), Proof::expiresAt);
        return proof == null ? null : new LiveSession(proof.caller(), proof.csrfToken());
    }

    /** What a token or session proved: its caller, its CSRF token (sessions) and when it ends. */
    private record Proof(Caller caller, String csrfToken, Instant expiresAt) {}

    private Proof proveSession(String cookieValue) {
        for (ServiceReference<SessionVerifier> ref : sessions) {
            SessionVerifier verifier = context.locateService(SESSIONS, ref);
            if (verifier == null) {
                continue; // gone meanwhile
            }
            SessionVerifier.Session session = verifier.verify(cookieValue);
            if (session != null && session.principalId() != null && activePrincipal(session.principalId())) {
                return new Proof(
                        Mint.KERNEL.session(session.principalId(), session.authenticatedAt(), session.methods()),
                        session.csrfToken(),
                        session.expiresAt());
            }
        }
        return null;
    }

    /** Whether the Principal exists and is active: false when it is unknown, 401 when it is suspended. */
    private boolean activePrincipal(String principalId) {
        PrincipalRecord p = principals.get(principalId).orElse(null);
        if (p == null) {
            return false;
        }
        if (!"active".equals(p.status())) {
            throw ApiException.unauthorized("this Principal is suspended");
        }
        return true;
    }

    @Override
    public Caller authenticateReading(String authorization, String cookies) {
        if (authorization != null) {
            if (authorization.length() <= BEARER.length()
                    || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
                throw ApiException.unauthorized("the Authorization header must be 'Bearer <token>'");
            }
            return authenticate(authorization.substring(BEARER.length()).trim());
        }
        String value = cookie(cookies, SessionVerifier.COOKIE);
        if (value == null) {
            return null;
        }
        LiveSession session = session(value);
        if (session == null) {
            throw ApiException.unauthorized("the session has ended: sign in again");
        }
        return session.caller();
    }

    @Override
    public Caller authenticateSessionForm(String cookies, String csrfToken) {
        String value = cookie(cookies, SessionVerifier.COOKIE);
        LiveSession session = value == null ? null : session(value);
        if (session == null
                || csrfToken == null
                || session.csrfToken() == null
                || !dev.atrium.kernel.api.Digests.constantTimeEquals(csrfToken, session.csrfToken())) {
            return null;
        }
        return session.caller();
    }

    /** The value of cookie {@code name} in a {@code Cookie} header ({@code a=1; b=2}), or null. */
    static String cookie(String header, String name) {
        if (header == null) {
            return null;
        }
        for (String part : header.split(";")) {
            int eq = part.indexOf('=');
            if (eq > 0 && part.substring(0, eq).trim().equals(name)) {
                String v = part.substring(eq + 1).trim();
                if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
                    v = v.substring(1, v.length() - 1);
                }
                return v.isEmpty() ? null : v;
            }
        }
        return null;
    }

    @Override
    public void accessChanged() {
        access.forgetAll();
    }

    @Override
    public Caller authenticate(String secret) {
        if (secret == null || secret.isBlank()) {
            throw ApiException.unauthorized("authentication required");
        }
        Proof proof = access.get("t:" + Digests.sha256Base64Url(secret), () -> proveToken(secret), Proof::expiresAt);
        if (proof == null) {
            throw ApiException.unauthorized("the token is invalid, expired or revoked");
        }
        return proof.caller();
    }

    /** What a token proves, or null when it is unknown, expired or revoked; 401 when its Principal is suspended. */
    private Proof proveToken(String secret) {
        if (secret.startsWith(PersonalAccessTokens.PREFIX + "_")) {
            PersonalAccessTokens.Outcome outcome = tokens.authenticate(secret);
            if (outcome instanceof Valid v) {
                return new Proof(v.caller(), null, v.expiresAt());
            }
            if (outcome instanceof Suspended) {
                throw ApiException.unauthorized("this Principal is suspended");
            }
            return null;
        }
        for (ServiceReference<TokenVerifier> ref : verifiers) {
            TokenVerifier verifier = context.locateService(VERIFIERS, ref);
            if (verifier == null) {
                continue; // gone meanwhile
            }
            if (secret.startsWith(verifier.prefix())) {
                TokenVerifier.Verified verified = verifier.verify(secret);
                if (verified != null
                        && verified.principalId() != null
                        && verified.authMethod() != null
                        && !Mint.KERNEL_METHODS.contains(verified.authMethod())
                        && activePrincipal(verified.principalId())) {
                    return new Proof(
                            Mint.KERNEL.verified(verified.principalId(), verified.authMethod(), verified.scopes()),
                            null,
                            verified.expiresAt());
                }
                return null;
            }
        }
        return null;
    }
}
