package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.text.PDFTextStripper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.wiring.BundleWiring;

/**
 * The PDF export inside the real runtime, with an operator font directory and a small memory budget: characters the
 * built-in font lacks come from the directory, and the threads bundle holds no font file, scratch file or thread
 * after an export, stops cleanly and serves again when restarted.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class ThreadPdfExportLifecycleTest {

    static final String ARMENIAN = "Բարեւ աշխարհ";
    static final String GEORGIAN = "გამარჯობა მსოფლიო";

    @Test
    void exportsUseTheConfiguredFontsAndLeaveNoOpenFileScratchFileOrThreadWhenTheBundleStops(@TempDir Path tmp)
            throws Exception {
        Path fonts = Files.createDirectories(tmp.resolve("fonts"));
        try (InputStream in = getClass().getResourceAsStream("/net/sf/jasperreports/fonts/dejavu/DejaVuSans.ttf")) {
            Files.copy(in, fonts.resolve("DejaVuSans.ttf"));
        }
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(
                tmp.resolve("runtime"),
                Map.of("atrium.threads.pdfFontDirs", fonts.toString(), "atrium.threads.pdfMemoryBytes", "65536"))) {
            runtime.assertHealthy(90_000);
            Http operator = new Http(
                    runtime.base(),
                    Files.readString(runtime.data.resolve("operator.token")).trim());
            assertEquals(
                    201,
                    operator.post("/admin/users", Map.of("username", "pdf-check"))
                            .status());
            Http user = operator.as(operator.post("/admin/users/pdf-check/tokens", Map.of())
                    .get("token")
                    .asText());
            Http.Reply created = user.post("/api/spaces/pdf-check/threads", Map.of("title", "Fonts " + ARMENIAN));
            assertEquals(201, created.status(), created.body());
            String thread = created.json().path("thread").path("id").asText();
            StringBuilder longText = new StringBuilder();
            while (longText.length() < 60_000) {
                longText.append("Lorem ipsum dolor sit amet, ").append(GEORGIAN).append(". ");
            }
            for (String content :
                    List.of(ARMENIAN + " and " + GEORGIAN, "private use \uE000 here", longText.toString())) {
                assertEquals(
                        201,
                        user.post("/api/threads/" + thread + "/messages", Map.of("content", content))
                                .status());
            }

            Bundle threads = runtime.bundle("dev.atrium.threads");
            Path scratch = threads.getBundleContext().getDataFile("pdf-scratch").toPath();
            for (int i = 0; i < 3; i++) {
                String text = text(export(runtime, user, thread));
                assertTrue(text.startsWith("Fonts " + ARMENIAN + "\n"), text.substring(0, 100));
                assertTrue(
                        text.contains("\n" + ARMENIAN + " and " + GEORGIAN + "\n"),
                        "from the font directory: " + text.substring(0, 300));
                assertTrue(text.contains("private use \uFFFD here"), "no font has U+E000: DejaVu's U+FFFD stands in");
            }
            assertEquals(List.of(), list(scratch), "no scratch file is left behind");
            assertEquals(List.of(), openFilesUnder(fonts, scratch), "no font or scratch file stays open");

            ClassLoader loader = threads.adapt(BundleWiring.class).getClassLoader();
            Files.writeString(scratch.resolve("PDFBox-left-by-a-crash.tmp"), "x");
            threads.stop();
            assertEquals(Bundle.RESOLVED, threads.getState());
            assertFalse(
                    Files.exists(scratch.resolve("PDFBox-left-by-a-crash.tmp")),
                    "stopping cleans the scratch directory");
            assertEquals(List.of(), threadsOf(loader), "no thread of the stopped bundle");

            threads.start();
            runtime.assertHealthy(30_000);
            assertTrue(text(export(runtime, user, thread)).contains(ARMENIAN), "the restarted bundle exports again");
            assertEquals(List.of(), openFilesUnder(fonts, scratch));
        }
    }

    static byte[] export(InFrameworkRuntime runtime, Http user, String thread) throws Exception {
        HttpResponse<byte[]> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(
                                        URI.create(runtime.base() + "/api/threads/" + thread + "/export?format=pdf"))
                                .header("Authorization", "Bearer " + user.token())
                                .build(),
                        HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, r.statusCode(), new String(r.body()));
        return r.body();
    }

    static String text(byte[] pdf) throws IOException {
        try (PDDocument doc = PDDocument.load(pdf)) {
            assertTrue(doc.getNumberOfPages() > 1);
            return new PDFTextStripper().getText(doc);
        }
    }

    static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.toList();
        }
    }

    /** Files of this process under the given directories that are open now (Linux: /proc/self/fd). */
    static List<Path> openFilesUnder(Path... dirs) throws IOException {
        List<Path> open = new ArrayList<>();
        File[] fds = new File("/proc/self/fd").listFiles();
        for (File fd : fds == null ? new File[0] : fds) {
            try {
                Path target = Files.readSymbolicLink(fd.toPath());
                for (Path d : dirs) {
                    if (target.startsWith(d.toRealPath())) {
                        open.add(target);
                    }
                }
            } catch (IOException | UnsupportedOperationException gone) {
                // closed while listing
            }
        }
        return open;
    }

    static List<String> threadsOf(ClassLoader loader) {
        List<String> found = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getContextClassLoader() == loader || t.getClass().getClassLoader() == loader) {
                found.add(t.getName());
            }
        }
        return found;
    }
}
