package dev.atrium.oauth.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.Digests;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ProtocolPartsTest {

    @Test
    void pkceS256MatchesTheRfc7636Example() {
        assertEquals(
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                Digests.sha256Base64Url("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
    }

    @Test
    void formBodiesDecodeAndRefuseRepeatedParameters() {
        assertEquals("a b", Requests.form("scope=a+b&x=1").get("scope"));
        assertEquals(
                "https://x/cb?y=1",
                Requests.form("redirect_uri=https%3A%2F%2Fx%2Fcb%3Fy%3D1").get("redirect_uri"));
        OAuthError e = assertThrows(OAuthError.class, () -> Requests.form("grant_type=a&grant_type=b"));
        assertEquals("invalid_request", e.error);
    }

    @Test
    void scopesAreKnownOrRefused() {
        assertEquals(Set.of("openid", "threads:read"), ScopeSet.parse(" openid  threads:read "));
        assertNull(ScopeSet.parse("threads:read admin"));
        assertTrue(ScopeSet.parse("").isEmpty());
    }

    @Test
    void userCodesAreEightConsonantsAndNormalize() {
        String code = UserCodes.generate();
        assertTrue(code.matches("[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}"), code);
        assertEquals(code, UserCodes.normalize(code.toLowerCase().replace("-", " ")));
    }

    @Test
    void redirectsKeepTheirQuery() {
        assertEquals(
                "https://app/cb?x=1&code=c&state=s+t",
                OAuthServer.withQuery("https://app/cb?x=1", "code", "c", "state", "s t", "nonce", null));
    }
}
