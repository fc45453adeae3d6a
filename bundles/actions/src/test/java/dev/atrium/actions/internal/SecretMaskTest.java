package dev.atrium.actions.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretMaskTest {

    static final String SECRET = "pa55/word+x=";

    @TempDir
    Path tmp;

    @Test
    void aSecretItsUrlFormAndItsBase64FormsAtEveryAlignmentAreHidden() {
        SecretMask mask = new SecretMask(List.of(SECRET));
        assertEquals("a *** b", mask.apply("a " + SECRET + " b"));
        assertEquals("u=***", mask.apply("u=" + URLEncoder.encode(SECRET, StandardCharsets.UTF_8)));
        for (String prefix : List.of("", "x", "xy", "xyz")) {
            String encoded = Base64.getEncoder().encodeToString((prefix + SECRET).getBytes(StandardCharsets.UTF_8));
            String shown = mask.apply(encoded);
            assertTrue(shown.contains(SecretMask.MASK), prefix + ": " + shown);
            assertFalse(shown.length() > encoded.length() - 8, "most of the encoding is hidden: " + shown);
        }
    }

    @Test
    void aLineStillBeingWrittenIsCutBeforeWhereASecretCouldBegin() {
        SecretMask mask = new SecretMask(List.of(SECRET));
        String text = "progress 10% ... " + SECRET.substring(0, 5);
        int cut = mask.safeCut(text);
        assertTrue(cut <= text.length() - 5, "the secret's start waits: " + cut);
        assertEquals(text.length(), new SecretMask(List.of()).safeCut(text));
    }

    @Test
    void aSecretWrittenInPiecesNeverReachesTheLogOrTheStreamByHalves() throws Exception {
        SecretMask mask = new SecretMask(List.of(SECRET));
        try (JobLog log = new JobLog(tmp.resolve("job.log"), mask, 1 << 20)) {
            StringBuilder streamed = new StringBuilder();
            byte[] first = ("token: " + SECRET.substring(0, 6)).getBytes(StandardCharsets.UTF_8);
            log.write(first, 0, first.length);
            Thread.sleep(JobLog.PARTIAL_AFTER_NANOS / 1_000_000 + 50);
            streamed.append(log.drain(false)); // an unfinished line goes out after a while, but not the secret's start
            byte[] rest = (SECRET.substring(6) + " done\n").getBytes(StandardCharsets.UTF_8);
            log.write(rest, 0, rest.length);
            streamed.append(log.drain(true));
            assertEquals("token: *** done\n", streamed.toString());
            assertFalse(streamed.toString().contains(SECRET.substring(0, 4)));
            assertEquals("token: *** done\n", Files.readString(log.file()));
        }
    }

    @Test
    void outputsAndEnvironmentFilesAreReadAsGitHubWritesThem() {
        assertEquals(
                java.util.Map.of("a", "1", "multi", "line one\nline two", "b", "x=y"),
                KeyValueFile.parse("a=1\nmulti<<EOF\nline one\nline two\nEOF\nb=x=y\n"));
    }
}
