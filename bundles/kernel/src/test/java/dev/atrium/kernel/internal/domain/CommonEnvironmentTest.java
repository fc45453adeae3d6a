package dev.atrium.kernel.internal.domain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.KernelMint;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.api.TestPostgres;
import java.lang.annotation.Annotation;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Secret common variables are sealed at rest, also those written in clear before sealing, and open only for their own name. */
class CommonEnvironmentTest {

    /** Outside a framework any subclass may mint (see KernelMint). */
    static final class Mint extends KernelMint {
        SpaceRef ref(String id) {
            return space(id, id, "p1", "standard", false, "p1");
        }
    }

    private static final Mint MINT = new Mint();
    private static TestPostgres database;
    private static Sql sql;

    @BeforeAll
    static void createDatabase() throws Exception {
        database = TestPostgres.create("atrium_commonenv");
        database.run(CommonEnvironment.class, "/db/migration/V1__principals_workspaces_tokens.sql");
        database.run(CommonEnvironment.class, "/db/migration/V2__access_notifications.sql");
        sql = new Sql(database.dataSource());
        sql.update("INSERT INTO principals (id, provider, subject) VALUES ('p1', 'local', 'p1')");
        sql.update(
                "INSERT INTO workspaces (id, owner_principal_id, name, slug) VALUES ('w1', 'p1', 'one', 'one'), ('w2', 'p1', 'two', 'two')");
        // a secret written before values were sealed
        sql.update(
                "INSERT INTO workspace_common_env (workspace_id, name, value, secret) VALUES ('w1', 'OLD_SECRET', 'kept-in-clear', true),"
                        + " ('w1', 'PLAIN', 'visible', false)");
        database.run(CommonEnvironment.class, "/db/migration/V3__common_env_sealed.sql");
    }

    @AfterAll
    static void dropDatabase() throws Exception {
        database.close();
    }

    static CommonEnvironment.Config config(Path data) {
        return new CommonEnvironment.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return CommonEnvironment.Config.class;
            }

            @Override
            public String dataDirectory() {
                return data.toString();
            }
        };
    }

    CommonEnvironment environment(Path data) throws Exception {
        return new CommonEnvironment(
                config(data), null, database.dataSource(), database.migrations(CommonEnvironment.class));
    }

    static boolean inDatabase(String value) throws Exception {
        try (Connection c = database.dataSource().getConnection();
                PreparedStatement s = c.prepareStatement("SELECT count(*) FROM workspace_common_env WHERE value LIKE ? "
                        + "OR position(convert_to(?, 'UTF8') in coalesce(ciphertext, ''::bytea)) > 0")) {
            s.setString(1, "%" + value + "%");
            s.setString(2, value);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        }
    }

    @Test
    void secretsAreSealedAtRestAndOpenOnlyForTheirOwnNameWithTheSameKey(@TempDir Path data) throws Exception {
        CommonEnvironment env = environment(data);
        assertFalse(inDatabase("kept-in-clear"), "the secret written in clear is sealed when the kernel starts");
        env.put("w1", "TOKEN", "tok-s3cret", true);
        assertFalse(inDatabase("tok-s3cret"));
        assertTrue(inDatabase("visible"), "plain values stay readable");

        var space = MINT.ref("w1");
        assertEquals(
                Map.of("OLD_SECRET", "kept-in-clear", "TOKEN", "tok-s3cret", "PLAIN", "visible"),
                env.values(space, List.of("OLD_SECRET", "TOKEN", "PLAIN", "MISSING")));
        assertEquals(Map.of(), env.values(MINT.ref("w2"), List.of("TOKEN")), "another workspace's variable");
        for (CommonEnvironment.Variable v : env.list("w1")) {
            assertEquals(v.secret(), v.value() == null, v.name() + ": a secret's value is never read back");
        }

        Path key = data.resolve("keys/kernel/common-env.key");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(key)));
        assertEquals(
                Map.of("TOKEN", "tok-s3cret"),
                environment(data).values(space, List.of("TOKEN")),
                "the same key file opens it again");

        // a sealed value moved to another name does not open
        sql.update(
                "UPDATE workspace_common_env SET value = NULL, secret = true, key_id = t.key_id, nonce = t.nonce, ciphertext = t.ciphertext "
                        + "FROM (SELECT key_id, nonce, ciphertext FROM workspace_common_env WHERE workspace_id = 'w1' AND name = 'TOKEN') t "
                        + "WHERE workspace_id = 'w1' AND name = 'PLAIN'");
        assertThrows(IllegalStateException.class, () -> env.values(space, List.of("PLAIN")));
        env.put("w1", "PLAIN", "visible", false);
    }
}
