package dev.atrium.actions.internal.workflow;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * GitHub's filter patterns (branches, tags, paths): {@code *} any characters but {@code /}, {@code **} any
 * characters, {@code ?} zero or one of the preceding character, {@code +} one or more of it, {@code [a-z]} one of a
 * set, {@code \} escapes; a leading {@code !} negates. A list decides by its last matching pattern.
 */
final class Glob {

    private record Entry(String source, Pattern regex, boolean negated) {}

    private final List<Entry> entries;

    private Glob(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    /** Compiles the patterns; an invalid one throws IllegalArgumentException naming it. */
    static Glob of(List<String> patterns) {
        List<Entry> entries = new ArrayList<>();
        for (String p : patterns) {
            boolean negated = p.startsWith("!");
            String body = negated ? p.substring(1) : p;
            if (body.isEmpty()) {
                throw new IllegalArgumentException("empty pattern '" + p + "'");
            }
            entries.add(new Entry(p, Pattern.compile(regex(body)), negated));
        }
        return new Glob(entries);
    }

    List<String> patterns() {
        return entries.stream().map(Entry::source).toList();
    }

    /** Whether the list includes the name: the last pattern that matches it decides; none matching excludes it. */
    boolean matches(String name) {
        boolean included = false;
        for (Entry e : entries) {
            if (e.regex().matcher(name).matches()) {
                included = !e.negated();
            }
        }
        return included;
    }

    static String regex(String glob) {
        StringBuilder out = new StringBuilder();
        boolean quantifiable = false; // the last emitted unit is one character (or a class) ? and + may follow
        int i = 0;
        while (i < glob.length()) {
            char c = glob.charAt(i);
            if (c == '*') {
                if (i + 1 < glob.length() && glob.charAt(i + 1) == '*') {
                    out.append(".*");
                    i += 2;
                } else {
                    out.append("[^/]*");
                    i++;
                }
                quantifiable = false;
            } else if ((c == '?' || c == '+') && quantifiable) {
                out.append(c);
                quantifiable = false;
                i++;
            } else if (c == '[') {
                int close = glob.indexOf(']', i + 1);
                if (close < 0 || close == i + 1) {
                    throw new IllegalArgumentException("unclosed or empty '[' in pattern '" + glob + "'");
                }
                String set = glob.substring(i + 1, close);
                if (!set.matches("([A-Za-z0-9](-[A-Za-z0-9])?)+")) {
                    throw new IllegalArgumentException(
                            "a '[]' set holds letters, digits and ranges a-z, A-Z, 0-9: '" + glob + "'");
                }
                out.append('[').append(set).append(']');
                quantifiable = true;
                i = close + 1;
            } else if (c == '\\' && i + 1 < glob.length()) {
                literal(glob.charAt(i + 1), out);
                quantifiable = true;
                i += 2;
            } else {
                literal(c, out);
                quantifiable = true;
                i++;
            }
        }
        return out.toString();
    }

    private static void literal(char c, StringBuilder out) {
        if (Character.isLetterOrDigit(c)) {
            out.append(c);
        } else {
            // one regex unit, so a following ? or + quantifies exactly this character
            out.append(String.format(Locale.ROOT, "\\x{%x}", (int) c));
        }
    }
}
