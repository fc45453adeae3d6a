package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** {@code <data>/deploy/}: dropping a bundle jar installs and starts it, replacing it upgrades it, removing it uninstalls it. */
@SharedServer
class DeployDirectoryTest {

    private static final String BSN = "org.osgi.util.converter";

    @Test
    void droppingReplacingAndRemovingAJarInstallsUpgradesAndUninstallsIt(AtriumServer server) throws Exception {
        Path bundles = Path.of(System.getProperty("atrium.testBundles"));
        Path deployed = server.data.resolve("deploy").resolve("converter.jar");
        try {
            Files.copy(bundles.resolve("org.osgi.util.converter-1.0.8.jar"), deployed);
            JsonNode installed = await(
                    server, b -> b.isPresent() && b.get().get("state").asText().equals("ACTIVE"));
            assertTrue(installed.get("version").asText().startsWith("1.0.8"), installed.toString());

            Path next = server.data.resolve("converter.jar.tmp");
            Files.copy(bundles.resolve("org.osgi.util.converter-1.0.9.jar"), next);
            Files.move(next, deployed, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            // The new version shows as soon as Bundle.update() installs it, while the bundle is still being
            // restarted and then refreshed; so the test waits for the new version to be ACTIVE.
            JsonNode upgraded = await(
                    server,
                    b -> b.isPresent()
                            && b.get().get("version").asText().startsWith("1.0.9")
                            && b.get().get("state").asText().equals("ACTIVE"));
            assertEquals(installed.get("id"), upgraded.get("id"), "upgraded in place, not installed a second time");
        } finally {
            Files.deleteIfExists(deployed);
        }
        await(server, Optional::isEmpty);
        Http.Reply health = FeatureSwitchTest.await(server.anonymous(), "/healthz", 200);
        assertEquals(
                200,
                health.status(),
                "ready again after the uninstall (FileInstall refreshes packages): " + health.body());
    }

    private static JsonNode await(AtriumServer server, Predicate<Optional<JsonNode>> condition)
            throws InterruptedException {
        long deadline = System.currentTimeMillis() + 20_000;
        Optional<JsonNode> bundle = find(server);
        while (!condition.test(bundle) && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
            bundle = find(server);
        }
        assertTrue(condition.test(bundle), "the deploy directory was not applied in time: " + bundle);
        return bundle.orElse(null);
    }

    private static Optional<JsonNode> find(AtriumServer server) {
        // listed while FileInstall installs, updates or uninstalls the bundle: the listing must not fail meanwhile
        Http.Reply listing = server.operator().get("/admin/bundles");
        assertEquals(200, listing.status(), listing.body());
        for (JsonNode b : listing.get("bundles")) {
            if (b.get("symbolic_name").asText().equals(BSN)) {
                return Optional.of(b);
            }
        }
        return Optional.empty();
    }
}
