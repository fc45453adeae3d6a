package dev.atrium.kernel.internal.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;

import org.junit.jupiter.api.Test;

import dev.atrium.kernel.api.ApiException;

class ScopesTest {

    @Test
    void scopesAreSpaceOrCommaSeparatedAndKnown() {
        assertEquals(Set.of("threads:read", "repos:write"), Scopes.parse(" threads:read,repos:write "));
        assertEquals(400, assertThrows(ApiException.class, () -> Scopes.parse("threads:read admin")).status());
        assertEquals(400, assertThrows(ApiException.class, () -> Scopes.parse("  ")).status());
    }

    @Test
    void theWildcardGrantsEveryScope() {
        AuthenticatedCaller all = new AuthenticatedCaller("pr_x", "pat", Scopes.fromColumn("*"), "pat_x");
        AuthenticatedCaller reader = new AuthenticatedCaller("pr_x", "pat", Scopes.fromColumn("threads:read"), "pat_y");
        assertTrue(all.hasScope("repos:write"));
        assertTrue(reader.hasScope("threads:read"));
        assertFalse(reader.hasScope("threads:write"));
    }
}
