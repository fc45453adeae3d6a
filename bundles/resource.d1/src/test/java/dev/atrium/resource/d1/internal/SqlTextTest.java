package dev.atrium.resource.d1.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.atrium.resource.api.ResourceException;
import org.junit.jupiter.api.Test;

class SqlTextTest {

    @Test
    void aSemicolonEndsAStatementOnlyOutsideStringsIdentifiersAndComments() {
        for (String one : new String[] {
            "SELECT 1",
            "SELECT 1;",
            "SELECT 1 ;  -- done",
            "SELECT 1; /* done */ ;",
            "SELECT 'a;b'",
            "SELECT \"x;y\" FROM t",
            "SELECT [a;b] FROM t",
            "SELECT `a;b`",
            "SELECT 'it''s; fine'",
            "SELECT 1 -- ; DROP TABLE t",
            "SELECT /* ; */ 1"
        }) {
            assertDoesNotThrow(() -> SqlText.requireOneStatement(one), one);
        }
        for (String two : new String[] {
            "SELECT 1; SELECT 2",
            "SELECT 'a'; DROP TABLE t",
            "SELECT 1;-- x\nDELETE FROM t",
            "SELECT 'it''s'; DELETE FROM t",
            "SELECT 1 /* c */; VACUUM"
        }) {
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

    @Test
    void aPragmaBehindExplainOrExplainQueryPlanIsStillAPragma() {
        assertEquals("query_only", SqlText.pragmaName("EXPLAIN PRAGMA query_only = OFF"));
        assertEquals("hard_heap_limit", SqlText.pragmaName("explain/* c */pragma hard_heap_limit = 1"));
        assertEquals(
                "temp_store_directory",
                SqlText.pragmaName("EXPLAIN QUERY PLAN\n-- c\n PRAGMA temp_store_directory = '/tmp'"));
        assertEquals("writable_schema", SqlText.pragmaName("Explain Query Plan pragma main . writable_schema = ON"));
        // the last part of a dotted name is the PRAGMA, as SQLite reads it, wherever the comments are
        assertEquals("hard_heap_limit", SqlText.pragmaName("PRAGMA table_info/**/.hard_heap_limit = 1"));
        // a quoted name is not read: it matches no allowed PRAGMA
        assertEquals("", SqlText.pragmaName("PRAGMA \"hard_heap_limit\" = 1"));
        assertEquals("table_info", SqlText.pragmaName("EXPLAIN PRAGMA table_info(t)"));
        // identifiers that merely start with the keywords are not them
        assertNull(SqlText.pragmaName("EXPLAINED"));
        assertNull(SqlText.pragmaName("SELECT * FROM pragmatic"));
        assertNull(SqlText.pragmaName("EXPLAIN SELECT 1"));
        assertNull(SqlText.pragmaName("EXPLAIN QUERY PLAN SELECT * FROM pragma_table_info('t')"));
    }
}
