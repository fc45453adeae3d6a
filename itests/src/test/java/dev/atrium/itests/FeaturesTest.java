package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** Every feature file is an OSGi Feature naming bundles that the runtime really ships. */
class FeaturesTest {

    @Test
    void everyFeatureNamesBundlesOfTheRuntime() throws Exception {
        Properties launch = new Properties();
        try (JarFile jar = new JarFile(System.getProperty("atrium.jar"));
                InputStream in = jar.getInputStream(jar.getEntry("launcher.properties"))) {
            launch.load(in);
        }
        String bundles = launch.getProperty("launch.bundles");
        List<Path> features;
        try (var files = Files.list(AtriumServer.ROOT.resolve("features"))) {
            features = files.filter(f -> f.toString().endsWith(".json")).toList();
        }
        assertFalse(features.isEmpty());
        for (Path f : features) {
            JsonNode feature = Http.JSON.readTree(f.toFile());
            assertEquals("1.0", feature.path("feature-resource-version").asText(), f.toString());
            assertTrue(feature.path("id").asText().matches("[\\w.-]+:[\\w.-]+:osgifeature:[\\w.-]+"), f.toString());
            assertFalse(feature.path("bundles").isEmpty(), f.toString());
            for (JsonNode b : feature.path("bundles")) {
                String[] gav = b.path("id").asText().split(":");
                assertEquals(3, gav.length, b.toString());
                assertTrue(
                        bundles.contains("jar/" + gav[1] + "-" + gav[2] + ".jar"),
                        f + " names " + b + " which the runtime lacks");
            }
        }
    }
}
