package dev.atrium.apps.internal.manifest;

/**
 * One thing wrong with a manifest: where (a JSON-pointer-like path such as {@code spec.workers.web.routes[0].target},
 * and the line in the file, 0 when unknown) and what.
 */
public record ManifestProblem(String path, int line, String message) {
    @Override
    public String toString() {
        return (line > 0 ? "line " + line + ": " : "") + (path.isEmpty() ? "" : path + ": ") + message;
    }
}
