package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Atrium as an OpenID Connect provider to a strict relying party: openid-client, which checks what the specifications
 * ask of a provider, with headless Chromium as the user's browser ({@code itests/browser/oidc-rp.test.mjs}). It proves
 * that a client discovers the provider and registers itself (RFC 7591, loopback redirect URIs without a port as in
 * RFC 8252 §7.3); that the code flow with PKCE, state and nonce gives an RS256 ID token, verified against the JWKS, with
 * {@code auth_time} of the sign-in, {@code amr} pwd, {@code at_hash} and {@code azp}, and UserInfo for its subject;
 * that {@code prompt=none} answers at once while signed in and {@code login_required} after logging out, and that
 * {@code max_age} and {@code prompt=login} make the user sign in again; that a refresh keeps the original
 * {@code auth_time} (OpenID Connect Core §12.2); that sign-in and consent work with JavaScript disabled; that
 * RP-initiated logout asks, ends the session and returns with the state, and refuses an unregistered return address;
 * and that a single-page app does the public-client flow over CORS while {@code /api/me} stays closed to its origin.
 */
@SharedServer
class OidcRelyingPartyTest {

    @Test
    void aStrictRelyingPartySignsInRefreshesAndSignsOut(AtriumServer server) throws Exception {
        BrowserScripts.require("openid-client");
        String name = "oidc" + Long.toString(System.nanoTime() % 1_000_000, 36);
        String password = "a long password 1";
        Http.Reply user =
                server.operator().post("/admin/identity/local-users", Map.of("username", name, "password", password));
        assertEquals(201, user.status(), user.body());

        Path out = AtriumServer.ROOT.resolve("itests/target/oidc-rp.out");
        Files.deleteIfExists(out);
        int exit = BrowserScripts.run(
                out,
                "node",
                "oidc-rp.test.mjs",
                server.base(),
                name,
                password,
                AtriumServer.ROOT.resolve("itests/target").toString());
        String printed = Files.readString(out);
        assertEquals(0, exit, printed);
        assertTrue(printed.contains("oidc relying party test passed"), printed);
    }
}
