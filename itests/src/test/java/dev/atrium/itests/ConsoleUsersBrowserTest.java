package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The console's Users and Audit views in a real browser ({@code itests/browser/users.test.mjs}): a user suspended
 * there is refused on the API at once, reactivated accepted again, and their tokens revoked there are unknown.
 */
@SharedServer
class ConsoleUsersBrowserTest {

    @Test
    void aUserSuspendedInTheConsoleIsRefusedOnTheApiAtOnce(AtriumServer server) throws Exception {
        BrowserScripts.require("playwright-core");
        User u = server.newUser();
        String added = "added-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        Path screenshot = AtriumServer.ROOT.resolve("itests/target/console-users.png");
        int exit = BrowserScripts.run(
                AtriumServer.ROOT.resolve("itests/target/browser.log"),
                "node",
                "users.test.mjs",
                server.base(),
                server.operatorToken(),
                u.username(),
                u.http().token(),
                added,
                screenshot.toString());
        assertEquals(
                0,
                exit,
                () -> "the browser test failed; its output is in itests/target/browser.log, ending:\n"
                        + BrowserScripts.tail(AtriumServer.ROOT.resolve("itests/target/browser.log")));
        assertTrue(Files.size(screenshot) > 1000, "a screenshot was taken");
        assertEquals(401, u.http().get("/api/spaces/me").status());
        assertEquals(
                "local",
                server.operator()
                        .get("/admin/users/" + added)
                        .get("user")
                        .path("provider")
                        .asText());
    }
}
