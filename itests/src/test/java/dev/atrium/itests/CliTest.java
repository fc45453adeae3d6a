package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

@SharedServer
class CliTest {

    @Test
    void tokenCreatePrintsAWorkingPatAloneOnTheLastLineAndReusesTheUser(AtriumServer server) throws Exception {
        Commands.Result first = Commands.atrium("token", "create", "--user", "cli-user", "--url", server.base(), "--data",
                server.data.toString());
        assertEquals(0, first.exit(), first.stderr());
        String token = first.lastLine();
        assertTrue(token.matches("atp_[A-Za-z0-9]{40}"), first.stdout());
        Http cli = new Http(server.base(), token);
        assertEquals("cli-user", cli.get("/api/me").get("username").asText());
        assertEquals(200, cli.get("/api/spaces/cli-user").status());

        Commands.Result again = Commands.atrium("token", "create", "--user", "cli-user", "--scopes", "threads:read", "--url",
                server.base(), "--data", server.data.toString());
        assertEquals(0, again.exit(), again.stderr());
        assertNotEquals(token, again.lastLine());
        Http reader = new Http(server.base(), again.lastLine());
        assertEquals(cli.get("/api/me").body(), reader.get("/api/me").body());
        assertEquals(1, reader.get("/api/spaces").get("total").asInt());
        assertEquals(403, reader.post("/api/spaces/cli-user/memories", java.util.Map.of("content", "x")).status());
    }

    @Test
    void tokenCreateFailsClearly(AtriumServer server) throws Exception {
        Commands.Result noUser = Commands.atrium("token", "create", "--url", server.base(), "--data", server.data.toString());
        assertEquals(2, noUser.exit());
        assertTrue(noUser.stderr().contains("--user"), noUser.stderr());

        Commands.Result badName = Commands.atrium("token", "create", "--user", "Bad Name", "--url", server.base(), "--data",
                server.data.toString());
        assertEquals(1, badName.exit());
        assertTrue(badName.stderr().contains("username"), badName.stderr());

        Commands.Result noServer = Commands.atrium("token", "create", "--user", "x-user", "--url",
                "http://127.0.0.1:" + AtriumServer.freePort(), "--data", server.data.toString());
        assertEquals(1, noServer.exit());
        assertTrue(noServer.stderr().contains("no server answers"), noServer.stderr());

        Path empty = Files.createTempDirectory("empty");
        empty.toFile().deleteOnExit();
        Commands.Result noToken = Commands.atrium("token", "create", "--user", "x-user", "--url", server.base(), "--data", empty.toString());
        assertEquals(1, noToken.exit());
        assertTrue(noToken.stderr().contains("operator token"), noToken.stderr());

        Commands.Result unknown = Commands.atrium("frobnicate");
        assertEquals(2, unknown.exit());
    }
}
