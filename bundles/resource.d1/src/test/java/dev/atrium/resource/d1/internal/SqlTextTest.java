package dev.atrium.resource.d1.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import dev.atrium.resource.api.ResourceException;

class SqlTextTest {

    @Test
    void aSemicolonEndsAStatementOnlyOutsideStringsIdentifiersAndComments() {
        for (String one : new String[] { "SELECT 1", "SELECT 1;", "SELECT 1 ;  -- done", "SELECT 1; /* done */ ;", "SELECT 'a;b'",
                "SELECT \"x;y\" FROM t", "SELECT [a;b] FROM t", "SELECT `a;b`", "SELECT 'it''s; fine'", "SELECT 1 -- ; DROP TABLE t",
                "SELECT /* ; */ 1" }) {
            assertDoesNotThrow(() -> SqlText.requireOneStatement(one), one);
        }
        for (String two : new String[] { "SELECT 1; SELECT 2", "SELECT 'a'; DROP TABLE t", "SELECT 1;-- x\nDELETE FROM t",
                "SELECT 'it''s'; DELETE FROM t", "SELECT 1 /* c */; VACUUM" }) {
            ResourceException e = assertThrows(ResourceException.class, () -> SqlText.requireOneStatement(two), two);
            assertEquals(ResourceException.Kind.BAD_INPUT, e.kind());
        }
    }

    @Test
    void thePragmaNameIsFoundPastBlanksCommentsAndASchemaName() {
        assertEquals("table_info", SqlText.pragmaName("  pragma table_info(t)"));
        assertEquals("journal_mode", SqlText.pragmaName("/* x */ PRAGMA main.journal_mode = WAL"));
        assertNull(SqlText.pragmaName("SELECT 'pragma'"));
    }
}
