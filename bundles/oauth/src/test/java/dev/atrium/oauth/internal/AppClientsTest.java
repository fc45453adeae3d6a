package dev.atrium.oauth.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.AppClientRegistry;
import dev.atrium.kernel.api.AppClientRegistry.Registered;
import dev.atrium.kernel.api.AppClientRegistry.Spec;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.api.TestPostgres;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** App-owned OAuth clients on a fresh database of the machine's PostgreSQL, with the bundle's own migrations. */
class AppClientsTest {

    private static TestPostgres database;
    private static OAuthClients clients;
    private static AppClients apps;
    private static Sql sql;

    @BeforeAll
    static void createDatabase() throws Exception {
        database = TestPostgres.create("atrium_oauth");
        // V2 only adds a trigger that calls the kernel's function; nothing here listens to it
        database.run(OAuthClients.class, "/db/migration/V1__oauth.sql");
        database.run(OAuthClients.class, "/db/migration/V3__sign_in_and_logout.sql");
        database.run(OAuthClients.class, "/db/migration/V4__app_clients.sql");
        OAuthAuditLog audit = new OAuthAuditLog(database.dataSource());
        clients = new OAuthClients(database.dataSource(), new IssuedTokens(database.dataSource(), null, audit), audit);
        apps = new AppClients(clients);
        sql = new Sql(database.dataSource());
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        database.close();
    }

    private static Spec spec(String name) {
        return new Spec(
                name,
                List.of("https://app.example.com/callback", "http://127.0.0.1:8787/callback"),
                List.of("openid", "profile"),
                "https://app.example.com/logo.png",
                "https://app.example.com/terms",
                null);
    }

    private static boolean authenticates(String clientId, String secret) {
        try {
            clients.authenticate(null, clientId, secret);
            return true;
        } catch (OAuthError e) {
            return false;
        }
    }

    @Test
    void aRegisteredAppClientIsConfidentialWithCodeAndRefreshGrantsAndListedAmongItsOwnersClients() {
        Registered r = apps.register("prn_owner1", spec("Notes app"));

        assertNotNull(r.secret());
        assertEquals("Notes app", r.spec().clientName());
        assertEquals(List.of("openid", "profile"), r.spec().scopes());
        assertEquals("https://app.example.com/terms", r.spec().tosUri());
        assertTrue(authenticates(r.clientId(), r.secret()));
        assertFalse(authenticates(r.clientId(), r.secret() + "x"));
        Client stored = clients.client(r.clientId()).orElseThrow();
        assertEquals(Set.of("authorization_code", "refresh_token"), stored.grantTypes());
        assertFalse(stored.isPublic());
        assertTrue(
                clients.owned("prn_owner1").stream().anyMatch(c -> c.clientId().equals(r.clientId())));
    }

    @Test
    void aRotatedSecretKeepsAuthenticatingDuringItsGraceAlongsideTheNewOne() {
        Registered r = apps.register("prn_owner2", spec("Rolling app"));

        Registered rotated = apps.rotateSecret("prn_owner2", r.clientId(), Duration.ofHours(1))
                .orElseThrow();

        assertNotEquals(r.secret(), rotated.secret());
        assertTrue(authenticates(r.clientId(), rotated.secret()));
        assertTrue(authenticates(r.clientId(), r.secret()));
    }

    @Test
    void withNoGraceTheOldSecretStopsAtOnce() {
        Registered r = apps.register("prn_owner3", spec("Strict app"));

        Registered rotated =
                apps.rotateSecret("prn_owner3", r.clientId(), Duration.ZERO).orElseThrow();

        assertTrue(authenticates(r.clientId(), rotated.secret()));
        assertFalse(authenticates(r.clientId(), r.secret()));
    }

    @Test
    void aSecretRotatedOnAnotherInstanceWorksAtOnceDespiteThisInstancesCachedClient() {
        OAuthAuditLog audit = new OAuthAuditLog(database.dataSource());
        OAuthClients other =
                new OAuthClients(database.dataSource(), new IssuedTokens(database.dataSource(), null, audit), audit);
        Registered r = apps.register("prn_owner10", spec("Two instances"));
        assertTrue(authenticates(r.clientId(), r.secret())); // now cached here

        Registered rotated = new AppClients(other)
                .rotateSecret("prn_owner10", r.clientId(), Duration.ZERO)
                .orElseThrow();

        assertTrue(authenticates(r.clientId(), rotated.secret()));
    }

    @Test
    void aSecondRotationEndsTheFirstSecretAndKeepsOnlyTheOneItReplaced() {
        Registered r = apps.register("prn_owner4", spec("Twice rotated"));
        Registered second = apps.rotateSecret("prn_owner4", r.clientId(), Duration.ofHours(1))
                .orElseThrow();

        Registered third = apps.rotateSecret("prn_owner4", r.clientId(), Duration.ofHours(1))
                .orElseThrow();

        assertFalse(authenticates(r.clientId(), r.secret()));
        assertTrue(authenticates(r.clientId(), second.secret()));
        assertTrue(authenticates(r.clientId(), third.secret()));
    }

    @Test
    void thePreviousSecretIsRefusedOnceItsGraceHasEnded() {
        Registered r = apps.register("prn_owner5", spec("Expiring app"));
        Registered rotated = apps.rotateSecret("prn_owner5", r.clientId(), Duration.ofMinutes(5))
                .orElseThrow();
        Client c = clients.client(r.clientId()).orElseThrow();

        Instant end = c.previousSecretExpiresAt();
        assertTrue(c.secretMatches(r.secret(), end.minusSeconds(1)));
        assertFalse(c.secretMatches(r.secret(), end));
        assertFalse(c.secretMatches(r.secret(), end.plusSeconds(3600)));
        assertTrue(c.secretMatches(rotated.secret(), end.plusSeconds(3600)));
        assertFalse(c.secretMatches(null, end.minusSeconds(1)));
    }

    @Test
    void anUpdateReplacesTheMetadataAndKeepsTheSecretAndGrants() {
        Registered r = apps.register("prn_owner6", spec("Old name"));

        Registered updated = apps.update(
                        "prn_owner6",
                        r.clientId(),
                        new Spec(
                                "New name",
                                List.of("https://new.example.com/cb"),
                                List.of("openid", "files:read"),
                                null,
                                null,
                                "https://new.example.com/privacy"))
                .orElseThrow();

        assertNull(updated.secret());
        assertEquals("New name", updated.spec().clientName());
        assertEquals(List.of("https://new.example.com/cb"), updated.spec().redirectUris());
        assertEquals(List.of("openid", "files:read"), updated.spec().scopes());
        assertNull(updated.spec().logoUri());
        assertNull(updated.spec().tosUri());
        assertEquals("https://new.example.com/privacy", updated.spec().policyUri());
        assertTrue(authenticates(r.clientId(), r.secret()));
        assertEquals(
                Set.of("authorization_code", "refresh_token"),
                clients.client(r.clientId()).orElseThrow().grantTypes());
    }

    @Test
    void anotherPrincipalsClientIsAnsweredAsAMissingOne() {
        Registered r = apps.register("prn_owner7", spec("Mine"));

        assertTrue(apps.update("prn_other", r.clientId(), spec("Theirs")).isEmpty());
        assertTrue(apps.rotateSecret("prn_other", r.clientId(), Duration.ofHours(1))
                .isEmpty());
        assertFalse(apps.delete("prn_other", r.clientId()));
        assertTrue(apps.update("prn_owner7", "atc_missing", spec("Missing")).isEmpty());
        assertFalse(apps.delete("prn_owner7", "atc_missing"));

        assertEquals("Mine", clients.client(r.clientId()).orElseThrow().name());
        assertTrue(authenticates(r.clientId(), r.secret()));
    }

    @Test
    void aSpecTheRegistrationEndpointRefusesIsInvalid() {
        List<Spec> refused = List.of(
                new Spec("", List.of("https://a.example.com/cb"), List.of("openid"), null, null, null),
                new Spec("x", List.of("javascript:alert(1)"), List.of("openid"), null, null, null),
                new Spec("x", List.of("http://app.example.com/cb"), List.of("openid"), null, null, null),
                new Spec("x", List.of("https://a.example.com/cb#frag"), List.of("openid"), null, null, null),
                new Spec("x", List.of(), List.of("openid"), null, null, null),
                new Spec("x", List.of("https://a.example.com/cb"), List.of("openid", "admin:all"), null, null, null),
                new Spec("x", List.of("https://a.example.com/cb"), List.of(), null, null, null),
                new Spec("x", List.of("https://a.example.com/cb"), List.of("openid"), null, "ftp://terms", null));
        for (Spec s : refused) {
            assertThrows(AppClientRegistry.Invalid.class, () -> apps.register("prn_owner8", s), s.toString());
        }
        assertTrue(clients.owned("prn_owner8").isEmpty());
    }

    @Test
    void deletingAnAppClientRemovesItAndItsTokens() {
        Registered r = apps.register("prn_owner9", spec("Short-lived"));
        sql.update(
                "INSERT INTO oauth_tokens (token_hash, kind, client_id, principal_id, scopes, family_id, expires_at) "
                        + "VALUES (?, 'access', ?, 'prn_user', 'openid', 'fam_1', ?)",
                Digests.sha256("ato_test_" + r.clientId()),
                r.clientId(),
                Instant.now().plusSeconds(3600));

        assertTrue(apps.delete("prn_owner9", r.clientId()));

        assertTrue(clients.client(r.clientId()).isEmpty());
        assertFalse(authenticates(r.clientId(), r.secret()));
        assertEquals(0L, sql.count("SELECT count(*) FROM oauth_tokens WHERE client_id = ?", r.clientId()));
        assertFalse(apps.delete("prn_owner9", r.clientId()));
    }
}
