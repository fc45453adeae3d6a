package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** {@code docs/architecture.md} names every bundle: a newcomer finds each one there, the day it is added. */
class ArchitectureDocTest {

    @Test
    void theArchitectureDocNamesEveryBundle() throws IOException {
        String doc = Files.readString(AtriumServer.ROOT.resolve("docs/architecture.md"));
        List<String> missing;
        try (Stream<Path> bundles = Files.list(AtriumServer.ROOT.resolve("bundles"))) {
            missing = bundles.filter(b -> Files.isRegularFile(b.resolve("pom.xml")))
                    .map(b -> b.getFileName().toString())
                    .filter(name -> !doc.contains("`" + name + "`"))
                    .sorted()
                    .toList();
        }
        assertEquals(List.of(), missing, "bundles docs/architecture.md does not name (as `name`)");
    }
}
