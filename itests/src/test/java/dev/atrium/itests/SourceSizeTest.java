package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A class of the bundles' main code over 600 lines says why it is one class ({@code Why one class of …} in its
 * description): a long class is a decision someone made, not one nobody noticed (issue 33).
 */
class SourceSizeTest {

    static final int LIMIT = 600;

    @Test
    void aClassOverSixHundredLinesSaysWhyItIsOne() throws IOException {
        List<String> unexplained;
        try (Stream<Path> files = Files.walk(AtriumServer.ROOT.resolve("bundles"))) {
            unexplained = files.filter(
                            p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/"))
                    .filter(p -> {
                        try {
                            List<String> lines = Files.readAllLines(p);
                            return lines.size() > LIMIT
                                    && lines.stream().noneMatch(l -> l.contains("Why one class of"));
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    })
                    .map(p -> AtriumServer.ROOT.relativize(p).toString())
                    .sorted()
                    .toList();
        }
        assertEquals(
                List.of(),
                unexplained,
                "classes over " + LIMIT + " lines without a sentence saying why they are one class");
    }
}
