package dev.atrium.search.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A file cut into the pieces repository search embeds, by its structure where that is cheap to see: in source code a
 * piece starts at each top-level-looking declaration (function, method, class, …, by one regular expression per
 * line, not a parser) and runs to the next; in any other text at paragraph breaks. Pieces longer than
 * {@link #MAX_LINES} are cut, short neighbours merged, so each piece is a few dozen lines with its line range.
 */
final class SourceChunks {

    static final int MAX_LINES = 80;
    static final int MIN_LINES = 4;
    private static final Set<String> CODE = Set.of(
            "java", "kt", "scala", "groovy", "js", "mjs", "cjs", "ts", "tsx", "jsx", "py", "go", "rs", "c", "h", "cc",
            "cpp", "hpp", "cs", "rb", "php", "swift", "sh");
    /** A line that starts a declaration; group 1..n hold its name where the form names one. */
    private static final Pattern DECLARATION = Pattern.compile(
            "^\\s*(?:export\\s+)?(?:default\\s+)?(?:public\\s+|private\\s+|protected\\s+|internal\\s+|static\\s+|final\\s+"
                    + "|abstract\\s+|async\\s+|override\\s+|pub(?:\\([a-z]+\\))?\\s+|inline\\s+|virtual\\s+)*"
                    + "(?:(?:function\\*?|def|func|fn|fun|class|interface|enum|record|struct|trait|impl|object|module"
                    + "|type)\\s+([A-Za-z_$][\\w$]*)"
                    + "|(?:[\\w$<>\\[\\],.?]+\\s+)+([A-Za-z_$][\\w$]*)\\s*\\([^;]*\\)\\s*(?:throws\\s+[\\w.,\\s]+)?\\{?\\s*$"
                    + "|(?:const|let|var)\\s+([A-Za-z_$][\\w$]*)\\s*=\\s*(?:async\\s*)?(?:\\([^)]*\\)|[A-Za-z_$][\\w$]*)"
                    + "\\s*=>)");

    private static final Set<String> NOT_NAMES =
            Set.of("if", "for", "while", "switch", "catch", "return", "new", "else", "do", "try", "synchronized");

    private SourceChunks() {}

    /** A piece: its 1-based line range (inclusive), the declaration's name or null, and its text. */
    record Chunk(int startLine, int endLine, String symbol, String text) {}

    static List<Chunk> of(String path, String text) {
        String[] lines = text.split("\n", -1);
        int count = lines.length;
        if (count > 0 && lines[count - 1].isEmpty()) {
            count--; // the final line break ends the last line, it does not start one
        }
        List<int[]> starts = new ArrayList<>(); // {line index, symbol index into names}
        List<String> names = new ArrayList<>();
        boolean code = CODE.contains(extension(path));
        for (int i = 0; i < count; i++) {
            String name = null;
            boolean start;
            if (code) {
                Matcher m = DECLARATION.matcher(lines[i]);
                start = m.find()
                        && !lines[i].strip().startsWith("//")
                        && !lines[i].strip().startsWith("*");
                if (start) {
                    for (int g = 1; g <= m.groupCount(); g++) {
                        if (m.group(g) != null) {
                            name = m.group(g);
                        }
                    }
                    if (name != null && NOT_NAMES.contains(name)) {
                        start = false;
                        name = null;
                    }
                }
            } else {
                start = i > 0 && lines[i - 1].isBlank() && !lines[i].isBlank();
            }
            if (start || i == 0) {
                starts.add(new int[] {i, names.size()});
                names.add(name);
            }
        }
        List<Chunk> raw = new ArrayList<>();
        for (int s = 0; s < starts.size(); s++) {
            int from = starts.get(s)[0];
            int to = s + 1 < starts.size() ? starts.get(s + 1)[0] : count; // exclusive
            String symbol = names.get(starts.get(s)[1]);
            for (int a = from; a < to; a += MAX_LINES) {
                int b = Math.min(to, a + MAX_LINES);
                raw.add(new Chunk(a + 1, b, symbol, join(lines, a, b)));
            }
        }
        List<Chunk> merged = new ArrayList<>();
        for (Chunk c : raw) {
            if (c.text().isBlank()) {
                continue;
            }
            Chunk last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            int lastLines = last == null ? 0 : last.endLine() - last.startLine() + 1;
            int lines2 = c.endLine() - c.startLine() + 1;
            if (last != null
                    && last.endLine() + 1 == c.startLine()
                    && (lastLines < MIN_LINES || (lines2 < MIN_LINES && c.symbol() == null))
                    && lastLines + lines2 <= MAX_LINES) {
                merged.set(
                        merged.size() - 1,
                        new Chunk(
                                last.startLine(),
                                c.endLine(),
                                last.symbol() != null ? last.symbol() : c.symbol(),
                                join(lines, last.startLine() - 1, c.endLine())));
            } else {
                merged.add(c);
            }
        }
        return merged;
    }

    private static String join(String[] lines, int from, int to) {
        return String.join("\n", java.util.Arrays.asList(lines).subList(from, to));
    }

    static String extension(String path) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        int dot = name.lastIndexOf('.');
        return dot < 0 ? "" : name.substring(dot + 1).toLowerCase(Locale.ROOT);
    }
}
