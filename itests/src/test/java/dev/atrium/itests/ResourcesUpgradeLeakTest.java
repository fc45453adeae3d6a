package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Updates of the resources core close its EclipseLink EntityManagerFactory and release its classes: after twenty
 * updates (each serving resources through a new EntityManagerFactory), no class of the first revision is reachable.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class ResourcesUpgradeLeakTest {

    static final String BSN = "dev.atrium.resources";
    static final Path JAR = AtriumServer.ROOT.resolve("bundles/resources/target/resources-0.1.0-SNAPSHOT.jar");

    @Test
    void twentyUpdatesOfTheJpaBundleLeaveNoOldClassLoaderBehind(@TempDir Path tmp) throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp)) {
            runtime.assertHealthy(60_000);
            Http operator = new Http(
                    runtime.base(),
                    Files.readString(runtime.data.resolve("operator.token")).trim());
            assertEquals(
                    201,
                    operator.post("/admin/users", Map.of("username", "jpa-leak"))
                            .status());
            Http user = operator.as(operator.post("/admin/users/jpa-leak/tokens", Map.of())
                    .get("token")
                    .asText());
            Http.Reply created = user.post("/api/resources", Map.of("name", "leak-kv", "type", "kv"));
            assertEquals(201, created.status(), created.body());
            String id = created.get("resource").get("id").asText();
            exercise(user, id);

            WeakReference<Class<?>> first =
                    new WeakReference<>(runtime.bundle(BSN).loadClass("dev.atrium.resources.internal.ResourceRow"));
            byte[] a = variant("leakA");
            byte[] b = variant("leakB");
            for (int i = 0; i < 20; i++) {
                Http.Reply r = operator.send(
                        "POST", "/admin/bundles/" + BSN + "/update", i % 2 == 0 ? a : b, "application/java-archive");
                assertEquals(200, r.status(), "update " + i + ": " + r.body());
                exercise(user, id);
            }
            for (int i = 0; i < 100 && first.get() != null; i++) {
                System.gc();
                Thread.sleep(100);
            }
            System.out.println("after 20 updates of " + BSN + ": first revision's entity class "
                    + (first.get() == null ? "collected" : "STILL REACHABLE"));
            assertNull(
                    first.get(),
                    "an entity class of the first revision is still reachable: EclipseLink kept its class loader");
        }
    }

    private static void exercise(Http user, String id) {
        assertEquals(200, user.get("/api/resources/" + id).status());
        assertEquals(200, user.get("/api/resources").status());
    }

    /** The resources jar with another Bundle-Version qualifier, so that each update installs a new revision. */
    static byte[] variant(String qualifier) throws IOException {
        return Jars.withQualifier(JAR, qualifier);
    }
}
