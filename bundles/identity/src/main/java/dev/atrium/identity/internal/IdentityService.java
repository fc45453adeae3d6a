package dev.atrium.identity.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.AuditLog;
import dev.atrium.kernel.api.Authenticator;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.PasswordHasher;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.SessionVerifier;
import dev.atrium.kernel.api.Sql;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Sign-in state: configured providers, the (provider, subject) → Principal links, local passwords, flows in flight
 * and browser sessions. It is the kernel's {@link SessionVerifier}.
 */
@Component(
        service = {IdentityService.class, SessionVerifier.class},
        configurationPid = "dev.atrium.identity",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = IdentityService.Config.class)
public class IdentityService implements SessionVerifier {

    /** An OIDC provider set up at start (issuer and client id both set), besides those added through the admin API. */
    @ObjectClassDefinition(name = "Atrium sign-in")
    public @interface Config {
        @AttributeDefinition(description = "Issuer of the OIDC provider configured at start (ATRIUM_OIDC_ISSUER)")
        String oidcIssuer() default "";

        @AttributeDefinition(description = "Its client id (ATRIUM_OIDC_CLIENT_ID)")
        String oidcClientId() default "";

        @AttributeDefinition(description = "Its client secret (ATRIUM_OIDC_CLIENT_SECRET)")
        String oidcClientSecret() default "";

        @AttributeDefinition(description = "Its provider name (ATRIUM_OIDC_NAME)")
        String oidcName() default "oidc";

        @AttributeDefinition(description = "Scopes asked of it (ATRIUM_OIDC_SCOPES)")
        String oidcScopes() default "openid profile email";
    }

    static final String LOCAL = "local";
    static final Duration SESSION_TTL = Duration.ofDays(14);
    static final Duration FLOW_TTL = Duration.ofMinutes(10);

    private final Sql sql;
    private final PrincipalDirectory directory;
    final OidcClient oidc = new OidcClient();

    @Activate
    public IdentityService(
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            @Reference PrincipalDirectory directory,
            BundleContext context,
            Config config) {
        migrations.apply(context.getBundle());
        this.sql = new Sql(dataSource);
        this.directory = directory;
        bootstrapProvider(config);
    }

    private void bootstrapProvider(Config config) {
        if (!config.oidcIssuer().isBlank() && !config.oidcClientId().isBlank()) {
            putProvider(
                    config.oidcName().isBlank() ? "oidc" : config.oidcName().trim(),
                    config.oidcIssuer().trim(),
                    config.oidcClientId().trim(),
                    config.oidcClientSecret().isBlank() ? null : config.oidcClientSecret(),
                    config.oidcScopes());
        }
    }

    PrincipalDirectory principals() {
        return directory;
    }

    // ---------------------------------------------------------------- providers

    void putProvider(String name, String issuer, String clientId, String clientSecret, String scopes) {
        if (name == null || !name.matches("[a-z0-9][a-z0-9-]{0,39}") || LOCAL.equals(name)) {
            throw ApiException.badRequest(
                    "a provider name is 1 to 40 lowercase letters, digits and hyphens, and not 'local'");
        }
        if (issuer == null || !issuer.matches("https?://.+")) {
            throw ApiException.badRequest("issuer must be an http(s) URL");
        }
        if (clientId == null || clientId.isBlank()) {
            throw ApiException.badRequest("client_id is required");
        }
        String s = scopes == null || scopes.isBlank() ? "openid profile email" : scopes;
        if (!(" " + s + " ").contains(" openid ")) {
            s = "openid " + s;
        }
        sql.update(
                "INSERT INTO identity_providers (name, issuer, client_id, client_secret, scopes) VALUES (?, ?, ?, ?, ?) "
                        + "ON CONFLICT (name) DO UPDATE SET issuer = excluded.issuer, client_id = excluded.client_id, "
                        + "client_secret = excluded.client_secret, scopes = excluded.scopes, updated_at = now()",
                name,
                issuer.replaceAll("/+$", ""),
                clientId,
                clientSecret,
                s);
    }

    Optional<OidcClient.Provider> provider(String name) {
        if (name == null || name.indexOf('\0') >= 0) {
            // no stored name holds NUL, and PostgreSQL refuses it as a parameter: a 500 for a query like ?provider=%00
            return Optional.empty();
        }
        return sql.one(
                "SELECT name, issuer, client_id, client_secret, scopes FROM identity_providers WHERE name = ?",
                rs -> new OidcClient.Provider(
                        rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5)),
                name);
    }

    List<Map<String, Object>> providers() {
        return sql.list("SELECT name, issuer, client_id, scopes FROM identity_providers ORDER BY name", rs -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", rs.getString(1));
            m.put("type", "oidc");
            m.put("issuer", rs.getString(2));
            m.put("client_id", rs.getString(3));
            m.put("scopes", rs.getString(4));
            return m;
        });
    }

    // ---------------------------------------------------------------- flows

    record Flow(
            String state,
            String provider,
            String mode,
            String nonce,
            String verifier,
            String returnTo,
            String principalId) {}

    Flow startFlow(String provider, String mode, String returnTo, String principalId) {
        Flow f = new Flow(
                Ids.random("", 32), provider, mode, Ids.random("", 32), Ids.random("", 64), returnTo, principalId);
        sql.update("DELETE FROM identity_login_states WHERE expires_at < now()");
        sql.update(
                "INSERT INTO identity_login_states (state, provider, mode, nonce, code_verifier, return_to, principal_id, expires_at) "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                f.state(),
                provider,
                mode,
                f.nonce(),
                f.verifier(),
                returnTo,
                principalId,
                Instant.now().plus(FLOW_TTL));
        return f;
    }

    /** Takes the flow of {@code state} (single use); empty when unknown or expired. */
    Optional<Flow> takeFlow(String state) {
        if (state == null || state.length() > 100) {
            return Optional.empty();
        }
        return sql.one(
                "DELETE FROM identity_login_states WHERE state = ? AND expires_at > now() "
                        + "RETURNING state, provider, mode, nonce, code_verifier, return_to, principal_id",
                rs -> new Flow(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        rs.getString(4),
                        rs.getString(5),
                        rs.getString(6),
                        rs.getString(7)),
                state);
    }

    // ---------------------------------------------------------------- subjects and Principals

    /** The Principal a subject maps to, through a link or as the Principal's own (provider, subject). */
    Optional<String> mapped(String provider, String subject) {
        Optional<String> linked = sql.one(
                "SELECT principal_id FROM identity_links WHERE provider = ? AND subject = ?",
                rs -> rs.getString(1),
                provider,
                subject);
        return linked.isPresent() ? linked : directory.find(provider, subject).map(PrincipalDirectory.Entry::id);
    }

    /** First login creates the Principal and its default workspace; later logins find it again. */
    PrincipalDirectory.Entry signIn(String provider, JsonNode claims) {
        String subject = claims.path("sub").asText();
        Optional<String> existing = mapped(provider, subject);
        if (existing.isPresent()) {
            return directory.get(existing.get()).orElseThrow(() -> ApiException.unauthorized("this account is gone"));
        }
        PrincipalDirectory.Entry e = directory.findOrCreate(
                provider,
                subject,
                claims.path("preferred_username").asText(null),
                claims.path("name").asText(null),
                claims.path("email").asText(null));
        sql.update(
                "INSERT INTO identity_links (provider, subject, principal_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                provider,
                subject,
                e.id());
        return e;
    }

    /** Attaches {@code (provider, subject)} to {@code principalId}; 409 when it maps to another Principal already. */
    void link(String principalId, String provider, String subject) {
        Optional<String> existing = mapped(provider, subject);
        if (existing.isPresent()) {
            if (existing.get().equals(principalId)) {
                return;
            }
            throw ApiException.conflict("this " + provider + " account is already linked to another user");
        }
        try {
            sql.update(
                    "INSERT INTO identity_links (provider, subject, principal_id) VALUES (?, ?, ?)",
                    provider,
                    subject,
                    principalId);
        } catch (RuntimeException raced) {
            throw ApiException.conflict("this " + provider + " account is already linked to another user");
        }
    }

    List<Map<String, Object>> links(String principalId) {
        return sql.list(
                "SELECT provider, subject, created_at FROM identity_links WHERE principal_id = ? ORDER BY created_at",
                rs -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("provider", rs.getString(1));
                    m.put("subject", rs.getString(2));
                    m.put("created_at", Sql.instant(rs, "created_at").toString());
                    return m;
                },
                principalId);
    }

    // ---------------------------------------------------------------- local users

    /** Creates a local user (Principal and default workspace) with a password; 409 when the name is taken. */
    PrincipalDirectory.Entry addLocalUser(String requested, char[] password) {
        String username = requested == null ? "" : requested.trim().toLowerCase(java.util.Locale.ROOT);
        // the kernel's handle rule, checked before anything is created (sign-in lowercases what users type)
        if (username.length() < 3
                || username.length() > 39
                || !username.matches("[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")
                || username.contains("--")) {
            throw ApiException.badRequest("username must be 3 to 39 lowercase letters, digits and single hyphens, "
                    + "starting and ending with a letter or digit");
        }
        if (password.length < 8) {
            throw ApiException.badRequest("the password must be at least 8 characters");
        }
        if (sql.one("SELECT 1 FROM identity_local_users WHERE username = ?", rs -> 1, username)
                .isPresent()) {
            throw ApiException.conflict("local user '" + username + "' exists");
        }
        PrincipalDirectory.Entry e = directory.findOrCreate(LOCAL, username, username, username, null);
        if (!username.equals(e.username())) {
            throw ApiException.conflict("username '" + username + "' is already taken");
        }
        PasswordHasher.Hash hash = PasswordHasher.hash(password);
        sql.update(
                "INSERT INTO identity_local_users (username, principal_id, password_hash, salt, iterations) VALUES (?, ?, ?, ?, ?) "
                        + "ON CONFLICT (username) DO NOTHING",
                username,
                e.id(),
                hash.key(),
                hash.salt(),
                hash.iterations());
        return e;
    }

    /** The Principal of a correct username and password, or empty. Unknown users cost as much as known ones. */
    Optional<String> checkPassword(String username, char[] password) {
        record Row(String principalId, byte[] hash, byte[] salt, int iterations) {}
        Optional<Row> row = sql.one(
                "SELECT principal_id, password_hash, salt, iterations FROM identity_local_users WHERE username = ?",
                rs -> new Row(rs.getString(1), rs.getBytes(2), rs.getBytes(3), rs.getInt(4)),
                username == null ? "" : username);
        if (row.isEmpty()) {
            PasswordHasher.verifyNothing(password);
            return Optional.empty();
        }
        return PasswordHasher.verify(
                        password,
                        new PasswordHasher.Hash(
                                row.get().iterations(),
                                row.get().salt(),
                                row.get().hash()))
                ? Optional.of(row.get().principalId())
                : Optional.empty();
    }

    // ---------------------------------------------------------------- sessions

    record NewSession(String cookie, String csrf, Instant expiresAt) {}

    /** A fresh session; the one the browser held before (if any) ends, so a planted session id is worthless. */
    NewSession createSession(String principalId, String provider, String previousCookie) {
        if (previousCookie != null) {
            endSession(previousCookie);
        }
        String cookie = Ids.random("ats_", 43);
        String csrf = Ids.random("", 32);
        Instant expires = Instant.now().plus(SESSION_TTL);
        sql.update(
                "INSERT INTO identity_sessions (id_hash, principal_id, provider, csrf_token, expires_at) VALUES (?, ?, ?, ?, ?)",
                Digests.sha256(cookie),
                principalId,
                provider,
                csrf,
                expires);
        AuditLog log = audit;
        if (log != null) {
            log.signedIn(principalId, provider);
        }
        return new NewSession(cookie, csrf, expires);
    }

    /** Optional and dynamic: a sign-in is not refused for want of its audit entry. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile AuditLog audit;

    /** Ends every live session of the Principal (the operator's revoke-tokens); how many. */
    int endSessionsOf(String principalId) {
        int ended = sql.update(
                "UPDATE identity_sessions SET ended_at = now() WHERE principal_id = ? AND ended_at IS NULL "
                        + "AND expires_at > now()",
                principalId);
        Authenticator kernel = authenticator;
        if (kernel != null) {
            kernel.accessChanged();
        }
        return ended;
    }

    boolean endSession(String cookie) {
        if (cookie == null || cookie.length() > 200) {
            return false;
        }
        boolean ended = sql.update(
                        "UPDATE identity_sessions SET ended_at = now() WHERE id_hash = ? AND ended_at IS NULL",
                        (Object) Digests.sha256(cookie))
                == 1;
        // the ended session stops working on this instance before the answer leaves, not when the notification arrives
        Authenticator kernel = authenticator;
        if (kernel != null) {
            kernel.accessChanged();
        }
        return ended;
    }

    /** Optional and dynamic: the kernel's authenticator itself uses this service as its session verifier. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    volatile Authenticator authenticator;

    record Live(String principalId, String provider, String csrf, Instant expiresAt, Instant signedInAt) {}

    Optional<Live> live(String cookie) {
        if (cookie == null || !cookie.startsWith("ats_") || cookie.length() > 200) {
            return Optional.empty();
        }
        return sql.one(
                "SELECT principal_id, provider, csrf_token, expires_at, created_at FROM identity_sessions WHERE id_hash = ? "
                        + "AND ended_at IS NULL AND expires_at > now()",
                rs -> new Live(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        Sql.instant(rs, "expires_at"),
                        Sql.instant(rs, "created_at")),
                (Object) Digests.sha256(cookie));
    }

    @Override
    public Session verify(String cookieValue) {
        // the kernel checks the Principal is active and makes the session's caller.
        // A session starts at its sign-in: when and how its person authenticated (OpenID Connect's auth_time, amr).
        return live(cookieValue)
                .map(live -> new Session(
                        live.principalId(),
                        live.csrf(),
                        live.expiresAt(),
                        live.signedInAt(),
                        java.util.Set.of(LOCAL.equals(live.provider()) ? "pwd" : "fed")))
                .orElse(null);
    }
}
