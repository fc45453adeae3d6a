package dev.atrium.apps.internal.manifest;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads {@code app.yml}: YAML to {@link Manifest}, checked against the published JSON Schema
 * ({@code app-manifest.schema.json}) and the rules the schema cannot say (references among workers, containers,
 * resources and routes; workflow paths under the workflows directory). Pure and thread-safe: the server and the
 * {@code atrium deploy validate} CLI use the same code.
 *
 * <p>The YAML is only composed into nodes (SnakeYAML's node API, for lines), never constructed into objects: no tag
 * can make a class, explicit tags are refused, and the size, depth and alias expansion are bounded.
 */
public final class ManifestParser {

    /** A manifest larger than this (UTF-8 bytes) is refused before parsing. */
    public static final int MAX_BYTES = 256 * 1024;

    /** The schema's {@code $id}: where it is published. */
    public static final String SCHEMA_ID = "https://atrium.dev/schemas/app-manifest/v1alpha1.json";

    /** The result: the manifest when there are no problems, else null with every problem found, in file order. */
    public record Result(Manifest manifest, List<ManifestProblem> problems) {
        public Result {
            problems = List.copyOf(problems);
        }

        public boolean valid() {
            return problems.isEmpty();
        }
    }

    /** Loaded once, when first used. */
    private static final class Schema {
        static final String TEXT = load();
        static final SchemaValidator VALIDATOR = new SchemaValidator(TEXT);

        private static String load() {
            try (InputStream in = ManifestParser.class.getResourceAsStream("/app-manifest.schema.json")) {
                if (in == null) {
                    throw new IllegalStateException("app-manifest.schema.json is missing from the bundle");
                }
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Parses and checks {@code yaml}; never throws for bad input. */
    public static Result parse(String yaml) {
        try {
            return parseChecked(yaml);
        } catch (RuntimeException e) {
            // A bug here must not turn a user's bad file into a 500; the fuzz tests assert this never happens.
            return refused("", 0, INTERNAL + e);
        }
    }

    static final String INTERNAL = "internal error while reading the manifest: ";

    private static Result parseChecked(String yaml) {
        if (yaml == null) {
            return refused("", 0, "there is no manifest");
        }
        if (yaml.length() > MAX_BYTES || yaml.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            return refused("", 0, "the manifest is larger than " + MAX_BYTES / 1024 + " KiB");
        }
        Node root;
        try {
            root = compose(yaml);
        } catch (MarkedYAMLException e) {
            Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            String problem = e.getProblem() != null ? e.getProblem() : e.getMessage();
            return refused("", mark == null ? 0 : mark.getLine() + 1, "invalid YAML: " + problem.strip());
        } catch (YAMLException e) {
            return refused("", 0, "invalid YAML: " + e.getMessage());
        }
        if (root == null) {
            return refused("", 0, "the manifest is empty");
        }
        Problems problems = new Problems();
        if (!YamlTree.check(root, problems)) {
            return new Result(null, problems.sorted());
        }
        Schema.VALIDATOR.validate(root, problems);
        ManifestRules.check(root, problems);
        if (!problems.isEmpty()) {
            return new Result(null, problems.sorted());
        }
        return new Result(ManifestReader.read(root), List.of());
    }

    private static Node compose(String yaml) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(20);
        options.setNestingDepthLimit(YamlTree.MAX_DEPTH + 10);
        options.setCodePointLimit(MAX_BYTES);
        options.setAllowRecursiveKeys(false);
        return new Yaml(new SafeConstructor(options)).compose(new StringReader(yaml));
    }

    private static Result refused(String path, int line, String message) {
        return new Result(null, List.of(new ManifestProblem(path, line, message)));
    }

    /** The JSON Schema document, as served at {@code /schemas/app-manifest/v1alpha1.json}. */
    public static String schema() {
        return Schema.TEXT;
    }

    private ManifestParser() {}
}
