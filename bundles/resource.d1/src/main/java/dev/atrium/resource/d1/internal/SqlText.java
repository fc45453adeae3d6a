package dev.atrium.resource.d1.internal;

import java.util.Locale;

import dev.atrium.resource.api.ResourceException;

/**
 * The two checks on SQL text that SQLite cannot make for us through xerial's driver (it has no authorizer and silently
 * runs only the first of several statements). A lexer of SQLite's tokens, not a parser: it only finds where a
 * statement ends (a ';' outside strings, quoted identifiers and comments) and the first keyword.
 */
final class SqlText {

    private SqlText() {
    }

    /** 400 when {@code sql} holds more than one statement (anything but blanks and comments after the first ';'). */
    static void requireOneStatement(String sql) throws ResourceException {
        int end = endOfFirst(sql);
        if (end < sql.length() && !blank(sql, end + 1)) {
            throw ResourceException.badInput("one statement per query: the text continues after its first ';'");
        }
    }

    /** The PRAGMA's name, lower-case, when the statement is a PRAGMA; else null. */
    static String pragmaName(String sql) {
        int i = skipBlank(sql, 0);
        if (!sql.regionMatches(true, i, "pragma", 0, 6)) {
            return null;
        }
        int j = skipBlank(sql, i + 6);
        int k = j;
        while (k < sql.length() && (Character.isLetterOrDigit(sql.charAt(k)) || sql.charAt(k) == '_' || sql.charAt(k) == '.')) {
            k++;
        }
        String name = sql.substring(j, k).toLowerCase(Locale.ROOT);
        int dot = name.lastIndexOf('.');
        return dot >= 0 ? name.substring(dot + 1) : name;
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
