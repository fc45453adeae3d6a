package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.oauth2.sdk.util.URLUtils;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The sign-in form, the consent page and the device verification page in a real browser (headless Chromium,
 * {@code itests/browser/oauth.test.mjs}): the pages' scripts send the session's CSRF token and follow the redirect.
 */
@SharedServer
class OAuthBrowserTest {

    @Test
    void aSignedInUserApprovesAnAppAndADeviceByClicking(AtriumServer server) throws Exception {
        BrowserScripts.require("playwright-core");
        String name = "browser" + Long.toString(System.nanoTime() % 1_000_000, 36);
        Http.Reply user = server.operator()
                .post("/admin/identity/local-users", Map.of("username", name, "password", "a long password 1"));
        assertEquals(201, user.status(), user.body());

        AtriumServer.User owner = server.newUser("*");
        String redirect = server.base() + "/landing";
        JsonNode client = owner.http()
                .post("/api/me/oauth/clients", Map.of("client_name", "Browser app", "redirect_uris", List.of(redirect)))
                .json()
                .path("client");
        String clientId = client.path("client_id").asText();
        String secret = client.path("client_secret").asText();
        String authorize = "/oauth/authorize?response_type=code&client_id=" + clientId + "&redirect_uri=" + redirect
                + "&scope=threads:read&state=st-1";
        String auth = "Basic "
                + java.util.Base64.getEncoder()
                        .encodeToString((clientId + ":" + secret).getBytes(StandardCharsets.UTF_8));
        JsonNode device = form(server, "/oauth/device_authorization", auth, "scope=threads:read")
                .json();

        Path out = AtriumServer.ROOT.resolve("itests/target/oauth-browser.out");
        Files.deleteIfExists(out);
        int exit = BrowserScripts.run(
                out,
                "node",
                "oauth.test.mjs",
                server.base(),
                name,
                "a long password 1",
                authorize,
                device.path("user_code").asText(),
                AtriumServer.ROOT.resolve("itests/target/consent.png").toString());
        String printed = Files.readString(out);
        assertEquals(0, exit, printed);
        String[] lines = printed.strip().split("\n");
        URI back = URI.create(lines[lines.length - 1]);
        assertTrue(back.toString().startsWith(redirect + "?"), printed);
        Map<String, List<String>> q = URLUtils.parseParameters(back.getRawQuery());
        assertEquals("st-1", q.get("state").get(0));

        Http.Reply token = form(
                server,
                "/oauth/token",
                auth,
                "grant_type=authorization_code&code=" + q.get("code").get(0) + "&redirect_uri=" + redirect);
        assertEquals(200, token.status(), token.body());
        Http me = new Http(server.base(), token.json().path("access_token").asText());
        assertEquals(name, me.get("/api/me").json().path("username").asText());

        Thread.sleep(2100);
        Http.Reply deviceToken = form(
                server,
                "/oauth/token",
                auth,
                "grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code="
                        + device.path("device_code").asText());
        assertEquals(200, deviceToken.status(), deviceToken.body());
    }

    private static Http.Reply form(AtriumServer server, String path, String authorization, String body)
            throws Exception {
        var r = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(URI.create(server.base() + path))
                                .header("Content-Type", "application/x-www-form-urlencoded")
                                .header("Authorization", authorization)
                                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        return new Http.Reply(r.statusCode(), Http.JSON.readTree(r.body()), r.body(), r);
    }
}
