package dev.atrium.operations.internal;

import java.util.List;

/**
 * A capability as an operator sees it: one OSGi Feature file ({@code features/<name>.json}) naming its bundles,
 * and the request paths it owns (the feature's {@code atrium-routes} extension), so a disabled capability can
 * be named in the 404 its routes answer.
 *
 * @param name          the file name without {@code .json}
 * @param description   the feature's description
 * @param symbolicNames bundle symbolic names ({@code <groupId>.<artifactId>} of each bundle id)
 * @param apiSymbolicNames those of its bundles marked {@code "atrium-api": true}: API bundles, which stay active while
 *                      the feature is disabled
 * @param routes        path patterns; {@code *} matches one path segment, a pattern matches its sub-paths too
 */
record Feature(String name, String description, List<String> symbolicNames, List<String> apiSymbolicNames, List<String> routes) {

    boolean owns(String path) {
        String[] p = path.split("/");
        for (String route : routes) {
            String[] r = route.split("/");
            if (r.length > p.length) {
                continue;
            }
            boolean match = true;
            for (int i = 0; i < r.length && match; i++) {
                match = r[i].equals("*") ? !p[i].isEmpty() : r[i].equals(p[i]);
            }
            if (match) {
                return true;
            }
        }
        return false;
    }
}
