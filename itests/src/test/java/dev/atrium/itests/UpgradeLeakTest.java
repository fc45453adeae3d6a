package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Fifty upgrades of a capability leave nothing behind: live threads come back to their baseline and no class
 * of the first revision stays reachable (its bundle class loader is collected).
 */
// counts the live threads of the whole test JVM, where the other lane's clients run too
@Isolated
@ResourceLock(InFrameworkRuntime.LOCK)
class UpgradeLeakTest {

    @Test
    void fiftyUpdatesLeaveNoThreadsAndNoOldClassLoaderBehind(@TempDir Path tmp) throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp)) {
            runtime.assertHealthy(60_000);
            Http operator = new Http(
                    runtime.base(),
                    Files.readString(runtime.data.resolve("operator.token")).trim());
            assertEquals(
                    201,
                    operator.post("/admin/users", Map.of("username", "leak-check"))
                            .status());
            Http user = operator.as(operator.post("/admin/users/leak-check/tokens", Map.of())
                    .get("token")
                    .asText());
            String space = "/api/spaces/leak-check/memories";
            String memory = user.post(space, Map.of("content", "used by every revision"))
                    .get("memory")
                    .get("id")
                    .asText();
            exercise(user, space, memory);

            int baseline = settledThreadCount(Integer.MAX_VALUE);
            WeakReference<Class<?>> first = new WeakReference<>(
                    runtime.bundle(BundleUpdateTest.BSN).loadClass("dev.atrium.memories.internal.MemoryStore"));
            byte[] a = BundleUpdateTest.variant("leakA", null, s -> s);
            byte[] b = BundleUpdateTest.variant("leakB", null, s -> s);
            for (int i = 0; i < 50; i++) {
                Http.Reply r = operator.send(
                        "POST",
                        "/admin/bundles/" + BundleUpdateTest.BSN + "/update",
                        i % 2 == 0 ? a : b,
                        "application/java-archive");
                assertEquals(200, r.status(), "update " + i + ": " + r.body());
                exercise(user, space, memory);
            }
            for (int i = 0; i < 100 && first.get() != null; i++) {
                System.gc();
                Thread.sleep(100);
            }
            int after = settledThreadCount(baseline + 5);
            System.out.println("after 50 updates: threads " + baseline + " -> " + after + ", first revision's class "
                    + (first.get() == null ? "collected" : "STILL REACHABLE"));
            assertTrue(after <= baseline + 5, "live threads " + after + " against a baseline of " + baseline);
            assertNull(first.get(), "a class of the first revision is still reachable: its class loader leaked");
        }
    }

    private static void exercise(Http user, String space, String memory) {
        assertEquals(200, user.get(space).status());
        assertEquals(200, user.get("/api/memories/" + memory).status());
    }

    /** The live thread count once it has stopped falling (or reached {@code target}), waiting at most 15 s. */
    private static int settledThreadCount(int target) throws InterruptedException {
        int count = ManagementFactory.getThreadMXBean().getThreadCount();
        long deadline = System.currentTimeMillis() + 15_000;
        while (count > target && System.currentTimeMillis() < deadline) {
            Thread.sleep(500);
            count = ManagementFactory.getThreadMXBean().getThreadCount();
        }
        if (target == Integer.MAX_VALUE) {
            Thread.sleep(1000);
            count = ManagementFactory.getThreadMXBean().getThreadCount();
        }
        return count;
    }
}
