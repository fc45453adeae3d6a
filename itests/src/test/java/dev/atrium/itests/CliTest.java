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
        Commands.Result first = Commands.atrium(
                "token", "create", "--user", "cli-user", "--url", server.base(), "--data", server.data.toString());
        assertEquals(0, first.exit(), first.stderr());
        String token = first.lastLine();
        assertTrue(token.matches("atp_[A-Za-z0-9]{40}"), first.stdout());
        Http cli = new Http(server.base(), token);
        assertEquals("cli-user", cli.get("/api/me").get("username").asText());
        assertEquals(200, cli.get("/api/spaces/cli-user").status());

        Commands.Result again = Commands.atrium(
                "token",
                "create",
                "--user",
                "cli-user",
                "--scopes",
                "threads:read",
                "--url",
                server.base(),
                "--data",
                server.data.toString());
        assertEquals(0, again.exit(), again.stderr());
        assertNotEquals(token, again.lastLine());
        Http reader = new Http(server.base(), again.lastLine());
        assertEquals(cli.get("/api/me").body(), reader.get("/api/me").body());
        assertEquals(1, reader.get("/api/spaces").get("total").asInt());
        assertEquals(
                403,
                reader.post("/api/spaces/cli-user/memories", java.util.Map.of("content", "x"))
                        .status());
    }

    /**
     * atrium login remembers the server and its operator token in a profile only its user can read; from anywhere,
     * later commands then need no flag, against a server that is not the default one (issue 41).
     */
    @Test
    void aLoginProfileLetsCommandsRunWithoutFlags(AtriumServer server) throws Exception {
        Path home = Files.createTempDirectory("cli-home");
        Path elsewhere = Files.createTempDirectory("cli-cwd");
        java.util.Map<String, String> env =
                java.util.Map.of("XDG_CONFIG_HOME", home.resolve("config").toString());
        try {
            Commands.Result noProfile = Commands.atriumIn(elsewhere, env, "token", "create", "--user", "profile-user");
            assertEquals(1, noProfile.exit(), "without a profile the local default is asked: " + noProfile.stdout());

            Commands.Result login = Commands.atriumIn(
                    elsewhere, env, "login", "--url", server.base(), "--data", server.data.toString());
            assertEquals(0, login.exit(), login.stderr());
            Path profile = home.resolve("config/atrium/profile");
            assertEquals(
                    "rw-------",
                    java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(profile)));
            assertEquals(
                    "rwx------",
                    java.nio.file.attribute.PosixFilePermissions.toString(
                            Files.getPosixFilePermissions(profile.getParent())));

            Commands.Result token = Commands.atriumIn(elsewhere, env, "token", "create", "--user", "profile-user");
            assertEquals(0, token.exit(), token.stderr());
            assertEquals(
                    "profile-user",
                    new Http(server.base(), token.lastLine())
                            .get("/api/me")
                            .get("username")
                            .asText());
            Commands.Result features = Commands.atriumIn(elsewhere, env, "features");
            assertEquals(0, features.exit(), features.stderr());

            // a flag still wins, and the profile's operator token is not sent to another server
            Commands.Result other = Commands.atriumIn(
                    elsewhere, env, "features", "--url", "http://127.0.0.1:" + AtriumServer.freePort());
            assertEquals(1, other.exit());
            assertTrue(other.stderr().contains("operator token"), other.stderr());

            Commands.Result logout = Commands.atriumIn(elsewhere, env, "logout");
            assertEquals(0, logout.exit(), logout.stderr());
            assertTrue(Files.notExists(profile));
        } finally {
            AtriumServer.deleteTree(home.toFile());
            AtriumServer.deleteTree(elsewhere.toFile());
        }
    }

    @Test
    void tokenCreateFailsClearly(AtriumServer server) throws Exception {
        Commands.Result noUser =
                Commands.atrium("token", "create", "--url", server.base(), "--data", server.data.toString());
        assertEquals(2, noUser.exit());
        assertTrue(noUser.stderr().contains("--user"), noUser.stderr());

        Commands.Result badName = Commands.atrium(
                "token", "create", "--user", "Bad Name", "--url", server.base(), "--data", server.data.toString());
        assertEquals(1, badName.exit());
        assertTrue(badName.stderr().contains("username"), badName.stderr());

        Commands.Result noServer = Commands.atrium(
                "token",
                "create",
                "--user",
                "x-user",
                "--url",
                "http://127.0.0.1:" + AtriumServer.freePort(),
                "--data",
                server.data.toString());
        assertEquals(1, noServer.exit());
        assertTrue(noServer.stderr().contains("no server answers"), noServer.stderr());

        Path empty = Files.createTempDirectory("empty");
        empty.toFile().deleteOnExit();
        Commands.Result noToken = Commands.atrium(
                "token", "create", "--user", "x-user", "--url", server.base(), "--data", empty.toString());
        assertEquals(1, noToken.exit());
        assertTrue(noToken.stderr().contains("operator token"), noToken.stderr());

        Commands.Result unknown = Commands.atrium("frobnicate");
        assertEquals(2, unknown.exit());
    }
}
