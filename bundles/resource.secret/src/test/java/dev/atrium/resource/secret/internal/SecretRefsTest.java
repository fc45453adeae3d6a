package dev.atrium.resource.secret.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.TestPostgres;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.TestResourceContext;
import java.lang.annotation.Annotation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** secretRef values on a fresh database of the machine's PostgreSQL, keys in a temp dir. */
class SecretRefsTest {

    private static TestPostgres database;
    private static javax.sql.DataSource dataSource;

    @TempDir
    Path data;

    private SecretRefs secrets;

    @BeforeAll
    static void createDatabase() throws Exception {
        database = TestPostgres.create("atrium_secret");
        dataSource = database.dataSource();
        database.run(SecretRefs.class, "/db/migration/V1__secret_values.sql");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        database.close();
    }

    @BeforeEach
    void start() {
        secrets = newProvider(data);
    }

    private static SecretRefs newProvider(Path data) {
        SecretRefs.Config config = new SecretRefs.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return SecretRefs.Config.class;
            }

            @Override
            public String dataDirectory() {
                return data.toString();
            }
        };
        return new SecretRefs(dataSource, bundle -> 0, TestPostgres.noBundleContext(), config);
    }

    private TestResourceContext secret(String value) throws Exception {
        TestResourceContext ctx = new TestResourceContext(dataSource, null, Map.of("value", value));
        secrets.provision(ctx);
        return ctx;
    }

    private static byte[] storedCiphertext(String resourceId) throws Exception {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(
                        "SELECT ciphertext FROM resource_secret_values WHERE resource_id = '" + resourceId + "'")) {
            assertTrue(rs.next());
            return rs.getBytes(1);
        }
    }

    @Test
    void aValueIsKeptEncryptedAndRevealedByteForByte() throws Exception {
        String value = "sk_live_Ωmega-" + UUID.randomUUID();
        TestResourceContext ctx = secret(value);
        assertArrayEquals(value.getBytes(StandardCharsets.UTF_8), secrets.reveal(ctx));
        String stored = new String(storedCiphertext(ctx.resourceId()), StandardCharsets.ISO_8859_1);
        assertFalse(stored.contains("sk_live"), "the plaintext is in the database");
        assertEquals(
                value.getBytes(StandardCharsets.UTF_8).length + 16,
                storedCiphertext(ctx.resourceId()).length,
                "ciphertext and GCM tag");
    }

    @Test
    void theSchemaMarksTheValueWriteOnlyAndTheCoreStoresConfigWithoutIt() {
        var schema = secrets.configSchema();
        assertEquals(java.util.Set.of("value"), schema.secretFields());
        assertEquals(Map.of(), schema.withoutSecrets(Map.of("value", "s3cret")));
        assertTrue(
                schema.toJson().toString().contains("writeOnly=true"),
                schema.toJson().toString());
    }

    @Test
    void anUpdateReplacesTheValue() throws Exception {
        TestResourceContext ctx = secret("first");
        secrets.update(ctx, Map.of("value", "second"));
        assertArrayEquals("second".getBytes(StandardCharsets.UTF_8), secrets.reveal(ctx));
        assertEquals(
                ResourceException.Kind.BAD_INPUT,
                assertThrows(ResourceException.class, () -> secrets.update(ctx, Map.of()))
                        .kind());
        assertArrayEquals(
                "second".getBytes(StandardCharsets.UTF_8), secrets.reveal(ctx), "a refused update changes nothing");
    }

    @Test
    void afterARotationOldValuesStayReadableAndMoveToTheNewKeyWhenRead() throws Exception {
        TestResourceContext old = secret("made before the rotation");
        String before = secrets.keyIdOf(old.resourceId()).orElseThrow();
        String rotated = secrets.rotate();
        assertNotEquals(before, rotated);
        assertTrue(rotated.compareTo(before) > 0, "a new key sorts after the old one");
        assertEquals(
                before, secrets.keyIdOf(old.resourceId()).orElseThrow(), "nothing is re-encrypted until it is read");
        assertArrayEquals("made before the rotation".getBytes(StandardCharsets.UTF_8), secrets.reveal(old));
        assertEquals(rotated, secrets.keyIdOf(old.resourceId()).orElseThrow());
        assertArrayEquals("made before the rotation".getBytes(StandardCharsets.UTF_8), secrets.reveal(old));
        TestResourceContext fresh = secret("made after");
        assertEquals(rotated, secrets.keyIdOf(fresh.resourceId()).orElseThrow());
        assertEquals(2, secrets.keyUsage().size());
        assertEquals(
                0L,
                secrets.keyUsage().get(0).get("values"),
                "the old key encrypts nothing any more: it may be removed");
        // two rotations at once never share an id
        assertNotEquals(secrets.rotate(), secrets.rotate());
    }

    @Test
    void aValueMovedToAnotherResourceDoesNotDecrypt() throws Exception {
        TestResourceContext victim = secret("victim's");
        TestResourceContext thief = secret("thief's");
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement()) {
            s.execute(
                    "UPDATE resource_secret_values SET (key_id, nonce, ciphertext) = (SELECT key_id, nonce, ciphertext FROM resource_secret_values"
                            + " WHERE resource_id = '" + victim.resourceId() + "') WHERE resource_id = '"
                            + thief.resourceId() + "'");
        }
        ResourceException e = assertThrows(ResourceException.class, () -> secrets.reveal(thief));
        assertEquals(ResourceException.Kind.UNAVAILABLE, e.kind());
        assertTrue(e.getMessage().contains("altered"), e.getMessage());
    }

    @Test
    void aValueWhoseKeyFileIsGoneIsUnavailableNamingTheKeyAndReadableWhenItReturns() throws Exception {
        TestResourceContext ctx = secret("needs its key");
        String keyId = secrets.keyIdOf(ctx.resourceId()).orElseThrow();
        Path file = data.resolve("keys/secret-ref/" + keyId + ".key");
        Path aside = data.resolve(keyId + ".aside");
        Files.move(file, aside);
        ResourceException e = assertThrows(ResourceException.class, () -> secrets.reveal(ctx));
        assertEquals(ResourceException.Kind.UNAVAILABLE, e.kind());
        assertTrue(e.getMessage().contains(keyId), e.getMessage());
        Files.move(aside, file);
        assertArrayEquals("needs its key".getBytes(StandardCharsets.UTF_8), secrets.reveal(ctx));
    }

    @Test
    void keysAreFilesOnlyTheServerCanReadAndSurviveARestart() throws Exception {
        TestResourceContext ctx = secret("kept across restarts");
        Path dir = data.resolve("keys/secret-ref");
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        try (var files = Files.list(dir)) {
            for (Path key : files.toList()) {
                assertEquals(
                        "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(key)), key.toString());
            }
        }
        assertArrayEquals(
                "kept across restarts".getBytes(StandardCharsets.UTF_8),
                newProvider(data).reveal(ctx));
    }

    @Test
    void deprovisioningRemovesTheValue() throws Exception {
        TestResourceContext ctx = secret("short-lived");
        secrets.deprovision(ctx);
        secrets.deprovision(ctx);
        assertEquals(
                ResourceException.Kind.NOT_FOUND,
                assertThrows(ResourceException.class, () -> secrets.reveal(ctx)).kind());
    }

    @Test
    void theConnectionInfoNeverHoldsTheValue() throws Exception {
        TestResourceContext ctx = secret("not-in-connection-info");
        assertFalse(secrets.connectionInfo(ctx).toString().contains("not-in-connection-info"));
        assertTrue(secrets.health(ctx).healthy());
    }
}
