package dev.atrium.kernel.internal.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ScopesTest {

    @Test
    void scopesAreSpaceOrCommaSeparatedAndKnown() {
        assertEquals(Set.of("threads:read", "repos:write"), Scopes.parse(" threads:read,repos:write "));
        assertEquals(
                400,
                assertThrows(ApiException.class, () -> Scopes.parse("threads:read admin"))
                        .status());
        assertEquals(
                400, assertThrows(ApiException.class, () -> Scopes.parse("  ")).status());
    }

    @Test
    void theWildcardGrantsEveryScope() {
        Caller all = Mint.KERNEL.pat("pr_x", Scopes.fromColumn("*"));
        Caller reader = Mint.KERNEL.pat("pr_x", Scopes.fromColumn("threads:read"));
        assertTrue(all.hasScope("repos:write"));
        assertTrue(reader.hasScope("threads:read"));
        assertFalse(reader.hasScope("threads:write"));
    }

    @Test
    void aCapabilityTokenNeverHoldsEveryScope() {
        Caller oauth = Mint.KERNEL.verified("pr_x", "oauth", Set.of("*", "threads:read"));
        assertFalse(oauth.hasScope("repos:write"));
        assertFalse(oauth.hasScope(Caller.ALL_SCOPES));
        assertTrue(oauth.hasScope("threads:read"));
    }
}
