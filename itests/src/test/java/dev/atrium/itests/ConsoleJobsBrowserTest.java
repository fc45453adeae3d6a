package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console's Jobs view in Chromium ({@code itests/browser/console-jobs.test.mjs}): "Run repository maintenance now"
 * runs maintenance of every repository, and the view follows it to a full progress bar and "succeeded".
 */
@SharedServer
class ConsoleJobsBrowserTest {

    @TempDir
    Path tmp;

    @Test
    void runningRepositoryMaintenanceFromTheConsoleShowsItsProgressToSucceeded(AtriumServer server) throws Exception {
        BrowserScripts.require("playwright-core");
        // at least one repository with a push to collect
        User u = server.newUser();
        Http.Reply created = u.http()
                .post(
                        "/api/spaces/" + u.defaultSpaceId() + "/repos",
                        Map.of("name", "jobs-console", "visibility", "private"));
        assertEquals(201, created.status(), created.body());
        GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
        Path work = git.newWorkingCopy(tmp.resolve("work"), "README.md", "console\n");
        git.ok(work, "push", "-q", server.base() + "/git/" + u.username() + "/jobs-console.git", "main");

        // a maintenance of every repository another test started before this repository was made would be what the
        // button answers while it runs, without this repository
        JsonNode running = server.operator().get("/admin/repos/maintenance").get("job");
        if (running != null && !running.isNull()) {
            JobsApiTest.awaitEnd(server, running.path("id").asText());
        }
        Path screenshot = AtriumServer.ROOT.resolve("itests/target/console-jobs.png");
        int exit = BrowserScripts.run(
                AtriumServer.ROOT.resolve("itests/target/browser.log"),
                "node",
                "console-jobs.test.mjs",
                server.base(),
                server.operatorToken(),
                screenshot.toString());
        assertEquals(
                0,
                exit,
                () -> "the browser test failed; its output is in itests/target/browser.log, ending:\n"
                        + BrowserScripts.tail(AtriumServer.ROOT.resolve("itests/target/browser.log")));
        assertTrue(Files.size(screenshot) > 1000, "a screenshot was taken");
        String repoId = created.get("repository").get("id").asText();
        assertEquals(
                "operator: every repository",
                server.operator()
                        .get("/admin/repos/" + repoId + "/gc")
                        .get("gc")
                        .path("reason")
                        .asText());
    }
}
