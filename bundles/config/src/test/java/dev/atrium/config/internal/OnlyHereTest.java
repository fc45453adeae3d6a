package dev.atrium.config.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The environment and the atrium.* framework properties are read in this bundle only (issue 14). */
class OnlyHereTest {

    private static final Pattern READS_SETTINGS = Pattern.compile("System\\.getenv|getProperty\\(\\s*\"atrium\\.");

    @Test
    void noOtherBundleReadsTheEnvironmentOrAtriumFrameworkProperties() throws IOException {
        Path bundles = Path.of("..").toAbsolutePath().normalize();
        assertTrue(Files.isDirectory(bundles.resolve("kernel/src/main/java")), "run from bundles/config: " + bundles);
        List<String> offenders;
        try (Stream<Path> files = Files.walk(bundles)) {
            offenders = files.filter(f -> f.toString().endsWith(".java")
                            && f.toString().contains("/src/main/java/")
                            && !f.startsWith(bundles.resolve("config")))
                    .filter(OnlyHereTest::readsSettings)
                    .map(f -> bundles.relativize(f).toString())
                    .sorted()
                    .toList();
        }
        assertEquals(
                List.of(),
                offenders,
                "read settings through the component's @Designate configuration; the name goes in "
                        + "bundles/config Settings");
    }

    private static boolean readsSettings(Path file) {
        try {
            return READS_SETTINGS.matcher(Files.readString(file)).find();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
