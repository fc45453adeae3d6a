package dev.atrium.repos.internal;

import java.io.IOException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.TreeWalk;

/**
 * A repository's language: the one whose files (known by extension) take the most bytes in a commit's tree, as
 * GitHub's summary does. Prose, data and vendored directories do not count; a tree is read up to
 * {@value #MOST_FILES} files, so a huge push costs a bounded walk.
 */
final class Languages {

    static final int MOST_FILES = 20_000;

    private static final Map<String, String> BY_EXTENSION = Map.ofEntries(
            Map.entry("java", "Java"),
            Map.entry("kt", "Kotlin"),
            Map.entry("kts", "Kotlin"),
            Map.entry("scala", "Scala"),
            Map.entry("groovy", "Groovy"),
            Map.entry("py", "Python"),
            Map.entry("js", "JavaScript"),
            Map.entry("mjs", "JavaScript"),
            Map.entry("cjs", "JavaScript"),
            Map.entry("jsx", "JavaScript"),
            Map.entry("ts", "TypeScript"),
            Map.entry("tsx", "TypeScript"),
            Map.entry("go", "Go"),
            Map.entry("rs", "Rust"),
            Map.entry("c", "C"),
            Map.entry("h", "C"),
            Map.entry("cc", "C++"),
            Map.entry("cpp", "C++"),
            Map.entry("cxx", "C++"),
            Map.entry("hpp", "C++"),
            Map.entry("cs", "C#"),
            Map.entry("rb", "Ruby"),
            Map.entry("php", "PHP"),
            Map.entry("swift", "Swift"),
            Map.entry("m", "Objective-C"),
            Map.entry("dart", "Dart"),
            Map.entry("lua", "Lua"),
            Map.entry("pl", "Perl"),
            Map.entry("r", "R"),
            Map.entry("jl", "Julia"),
            Map.entry("hs", "Haskell"),
            Map.entry("ex", "Elixir"),
            Map.entry("exs", "Elixir"),
            Map.entry("erl", "Erlang"),
            Map.entry("clj", "Clojure"),
            Map.entry("ml", "OCaml"),
            Map.entry("zig", "Zig"),
            Map.entry("sh", "Shell"),
            Map.entry("bash", "Shell"),
            Map.entry("ps1", "PowerShell"),
            Map.entry("sql", "SQL"),
            Map.entry("html", "HTML"),
            Map.entry("htm", "HTML"),
            Map.entry("css", "CSS"),
            Map.entry("scss", "SCSS"),
            Map.entry("vue", "Vue"),
            Map.entry("svelte", "Svelte"));

    private Languages() {}

    /** The language with the most bytes in {@code commit}'s tree, or null when no file is of a known language. */
    static String detect(org.eclipse.jgit.lib.Repository git, ObjectId commit) throws IOException {
        Map<String, Long> bytes = new HashMap<>();
        try (RevWalk walk = new RevWalk(git);
                ObjectReader reader = git.newObjectReader();
                TreeWalk tree = new TreeWalk(reader)) {
            tree.addTree(walk.parseCommit(commit).getTree());
            tree.setRecursive(true);
            int files = 0;
            while (tree.next() && files++ < MOST_FILES) {
                if (tree.getFileMode(0) != FileMode.REGULAR_FILE && tree.getFileMode(0) != FileMode.EXECUTABLE_FILE) {
                    continue;
                }
                String path = tree.getPathString();
                if (vendored(path)) {
                    continue;
                }
                String language = language(path);
                if (language != null) {
                    bytes.merge(language, reader.getObjectSize(tree.getObjectId(0), Constants.OBJ_BLOB), Long::sum);
                }
            }
        }
        return bytes.entrySet().stream()
                .max(Map.Entry.<String, Long>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey)
                .orElse(null);
    }

    static String language(String path) {
        int slash = path.lastIndexOf('/');
        int dot = path.lastIndexOf('.');
        if (dot <= slash + 1) {
            return null;
        }
        return BY_EXTENSION.get(path.substring(dot + 1).toLowerCase(Locale.ROOT));
    }

    private static boolean vendored(String path) {
        return path.startsWith("node_modules/")
                || path.contains("/node_modules/")
                || path.startsWith("vendor/")
                || path.startsWith("third_party/")
                || path.endsWith(".min.js");
    }
}
