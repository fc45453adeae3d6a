package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The page a person lands on after signing in (issue 41): in headless Chromium ({@code itests/browser/account.test.mjs})
 * {@code /} sends a browser without a session to sign in and back; the page names the user and lists the workspaces;
 * a personal access token created there works with curl, and one revoked there no longer does.
 */
@SharedServer
class AccountPageTest {

    @Test
    void signingInLandsOnTheAccountPageWhoseNewTokenWorksWithCurl(AtriumServer server) throws Exception {
        BrowserScripts.require("playwright-core");
        String name = "acct" + Long.toString(System.nanoTime() % 1_000_000, 36);
        Http.Reply user = server.operator()
                .post("/admin/identity/local-users", Map.of("username", name, "password", "a long password 1"));
        assertEquals(201, user.status(), user.body());

        Path out = AtriumServer.ROOT.resolve("itests/target/account-page.out");
        Files.deleteIfExists(out);
        int exit = BrowserScripts.run(
                out,
                "node",
                "account.test.mjs",
                server.base(),
                name,
                "a long password 1",
                AtriumServer.ROOT.resolve("itests/target/account-page.png").toString());
        String printed = Files.readString(out);
        assertEquals(0, exit, printed);
        String token = line(printed, "token ");
        String revoked = line(printed, "revoked ");

        assertTrue(
                curl(server, token).contains("\"username\":\"" + name + "\""),
                "the token made on the page works with curl");
        assertTrue(
                curl(server, revoked).contains("\"code\":\"UNAUTHORIZED\""), "the token revoked on the page does not");
    }

    private static String line(String printed, String prefix) {
        for (String l : printed.split("\n")) {
            if (l.startsWith(prefix)) {
                return l.substring(prefix.length()).trim();
            }
        }
        throw new AssertionError("no '" + prefix + "' line in:\n" + printed);
    }

    private static String curl(AtriumServer server, String token) throws Exception {
        Process p = new ProcessBuilder("curl", "-sS", "-H", "Authorization: Bearer " + token, server.base() + "/api/me")
                .redirectErrorStream(true)
                .start();
        String body = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "curl finished");
        return body;
    }
}
