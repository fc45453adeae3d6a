package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An API package is baselined against the released jars kept in {@code cnf/baseline}: a build of {@code runs.api}
 * with one method removed from an exported interface, and no major version bump, fails {@code mvn verify}. The API
 * under test must be at its baseline's version: one already a major ahead of it (kernel.api 2.0 over the released
 * 1.6) may legitimately drop more until the next release.
 */
class ApiBaselineTest {

    private static final String REMOVED =
            "    /** Grants the run must hold, e.g. {@code egress.http}. */\n    Set<String> requiredGrants();\n";

    @Test
    void removingAnApiMethodWithoutAMajorBumpFailsTheBuild(@TempDir Path copy) throws Exception {
        Path root = AtriumServer.ROOT;
        for (String part : List.of("pom.xml", "bnd.bnd", "cnf", ".mvn", "bundles/runs.api")) {
            copyTree(root.resolve(part), copy.resolve(part));
        }
        Path api = copy.resolve("bundles/runs.api/src/main/java/dev/atrium/runs/api/AgentTool.java");
        String source = Files.readString(api);
        int start = source.indexOf(REMOVED);
        assertTrue(
                start > 0, "AgentTool.requiredGrants() is where this test expects it; pick another method if it moved");
        // the interface's own link to the method goes too: a dangling link is an Error Prone warning, which fails
        // the compile before the baseline could
        Files.writeString(
                api,
                (source.substring(0, start) + source.substring(start + REMOVED.length()))
                        .replace("{@link #requiredGrants()}", "its required grants"));

        Path log = copy.resolve("build.log");
        Process mvn = new ProcessBuilder(
                        "mvn",
                        "-B",
                        "-f",
                        copy.resolve("bundles/runs.api/pom.xml").toString(),
                        "verify",
                        "-DskipTests",
                        // the cut leaves the file unformatted; the format check would fail the build first
                        "-Dspotless.check.skip=true")
                .directory(copy.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        assertTrue(mvn.waitFor(5, TimeUnit.MINUTES), "the build finished");
        String out = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println("runs.api without AgentTool.requiredGrants(): mvn exited " + mvn.exitValue());
        assertNotEquals(0, mvn.exitValue(), "the build passed although an API method was removed:\n" + tail(out));
        assertTrue(
                out.contains("dev.atrium.runs.api") && out.contains("MAJOR"),
                "it failed on the baseline:\n" + tail(out));
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                Path rel = from.relativize(p);
                if (rel.toString().startsWith("target")) {
                    continue;
                }
                Path dest = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dest);
                } else {
                    Files.createDirectories(dest.getParent());
                    Files.copy(p, dest);
                }
            }
        }
    }

    private static String tail(String s) {
        return s.length() < 4000 ? s : s.substring(s.length() - 4000);
    }
}
