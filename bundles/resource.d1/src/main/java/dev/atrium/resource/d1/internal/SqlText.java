package dev.atrium.resource.d1.internal;

import dev.atrium.resource.api.ResourceException;
import java.util.Locale;

/**
 * The two checks on SQL text that SQLite cannot make for us through xerial's driver (it has no authorizer and silently
 * runs only the first of several statements). A lexer of SQLite's tokens, not a parser: it only finds where a
 * statement ends (a ';' outside strings, quoted identifiers and comments) and the first keyword.
 */
final class SqlText {

    private SqlText() {}

    /** 400 when {@code sql} holds more than one statement (anything but blanks and comments after the first ';'). */
    static void requireOneStatement(String sql) throws ResourceException {
        int end = endOfFirst(sql);
        if (end < sql.length() && !blank(sql, end + 1)) {
            throw ResourceException.badInput("one statement per query: the text continues after its first ';'");
        }
    }

    /**
     * The PRAGMA's name, lower-case, when the statement is a PRAGMA; else null. It follows SQLite's grammar for a
     * statement's head, {@code ecmd ::= explain cmdx} with {@code explain ::= EXPLAIN | EXPLAIN QUERY PLAN}: a PRAGMA
     * behind EXPLAIN is still compiled, and SQLite applies many PRAGMAs while compiling them (measured with xerial
     * 3.53.4.0: preparing {@code EXPLAIN PRAGMA query_only = OFF} turns query_only off, {@code EXPLAIN PRAGMA
     * hard_heap_limit = …} and {@code … temp_store_directory = …} change the whole process), so the kind of a statement
     * must be known before SQLite sees it. Where this lexer and SQLite's differ (Java skips a few more blank characters)
     * it errs toward seeing a PRAGMA: the statement is refused, never run unchecked. A name this lexer cannot read (a
     * quoted one) comes back as "" (no allowed PRAGMA has it).
     */
    static String pragmaName(String sql) {
        int i = skipBlank(sql, 0);
        int explain = keyword(sql, i, "explain");
        if (explain >= 0) {
            i = skipBlank(sql, explain);
            int query = keyword(sql, i, "query");
            if (query >= 0) {
                int plan = keyword(sql, skipBlank(sql, query), "plan");
                if (plan >= 0) {
                    i = skipBlank(sql, plan);
                }
            }
        }
        int pragma = keyword(sql, i, "pragma");
        if (pragma < 0) {
            return null;
        }
        // PRAGMA [schema.]name: the last part is the PRAGMA, blanks and comments may stand around the dot
        String name;
        int j = skipBlank(sql, pragma);
        while (true) {
            int k = j;
            while (k < sql.length() && idChar(sql.charAt(k))) {
                k++;
            }
            name = sql.substring(j, k).toLowerCase(Locale.ROOT);
            int next = skipBlank(sql, k);
            if (name.isEmpty() || next >= sql.length() || sql.charAt(next) != '.') {
                return name;
            }
            j = skipBlank(sql, next + 1);
        }
    }

    /** The index after {@code word} when it is the keyword at {@code i} (not the start of a longer identifier); else -1. */
    private static int keyword(String s, int i, String word) {
        if (!s.regionMatches(true, i, word, 0, word.length())) {
            return -1;
        }
        int end = i + word.length();
        return end < s.length() && idChar(s.charAt(end)) ? -1 : end;
    }

    /** A character SQLite's tokenizer lets continue an identifier: letters, digits, '_', '$' and every non-ASCII one. */
    private static boolean idChar(char c) {
        return c >= 0x80 || Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }

    private static int endOfFirst(String s) {
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = closing(s, i + 1, c);
            } else if (c == '[') {
                i = closing(s, i + 1, ']');
            } else if (c == '-' && i + 1 < s.length() && s.charAt(i + 1) == '-') {
                int nl = s.indexOf('\n', i);
                i = nl < 0 ? s.length() : nl + 1;
            } else if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '*') {
                int close = s.indexOf("*/", i + 2);
                i = close < 0 ? s.length() : close + 2;
            } else if (c == ';') {
                return i;
            } else {
                i++;
            }
        }
        return s.length();
    }

    /** The index after the quote closing at or after {@code i} (a doubled quote is an escaped one). */
    private static int closing(String s, int i, char quote) {
        while (i < s.length()) {
            if (s.charAt(i) == quote) {
                if (quote != ']' && i + 1 < s.length() && s.charAt(i + 1) == quote) {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            i++;
        }
        return s.length();
    }

    private static boolean blank(String s, int from) {
        int i = skipBlank(s, from);
        while (i < s.length() && s.charAt(i) == ';') {
            i = skipBlank(s, i + 1);
        }
        return i >= s.length();
    }

    private static int skipBlank(String s, int i) {
        while (i < s.length()) {
            char c = s.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '-' && i + 1 < s.length() && s.charAt(i + 1) == '-') {
                int nl = s.indexOf('\n', i);
                i = nl < 0 ? s.length() : nl + 1;
            } else if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '*') {
                int close = s.indexOf("*/", i + 2);
                i = close < 0 ? s.length() : close + 2;
            } else {
                break;
            }
        }
        return i;
    }
}
