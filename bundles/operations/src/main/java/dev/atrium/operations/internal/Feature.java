package dev.atrium.operations.internal;

import java.util.List;

/**
 * A capability as an operator sees it: one OSGi Feature file ({@code features/<name>.json}) naming its bundles by
 * their Maven ids. The request paths it owns are not here: each bundle declares them in its
 * {@code atrium.capability} capability, read from the installed bundles (see {@link FeatureSwitch#routes}).
 *
 * @param name        the file name without {@code .json}
 * @param description the feature's description
 * @param members     its bundles, by Maven {@code groupId:artifactId}
 * @param conflicts   the features that may not be enabled while this one is (the file's {@code "atrium-conflicts"}:
 *                    both serve the same paths); the relation holds both ways, whichever file names it
 * @param enabledByDefault the file's {@code "atrium-enabled-by-default"} (default true): false for a feature that
 *                    stays off until the operator enables it, such as the alternative of a conflicting pair
 */
record Feature(
        String name, String description, List<Member> members, List<String> conflicts, boolean enabledByDefault) {

    Feature(String name, String description, List<Member> members) {
        this(name, description, members, List.of(), true);
    }

    /** Whether this feature and {@code other} may not be enabled together (either names the other). */
    boolean conflictsWith(Feature other) {
        return !name.equals(other.name) && (conflicts.contains(other.name) || other.conflicts.contains(name));
    }

    /**
     * One bundle of a feature.
     *
     * @param groupId    its Maven groupId
     * @param artifactId its Maven artifactId
     * @param api        marked {@code "atrium-api": true}: an API bundle, which stays active while the feature is
     *                   disabled (other features' bundles are wired to it)
     */
    record Member(String groupId, String artifactId, boolean api) {

        /** Where Maven's jar plugin puts the descriptor of the artifact a bundle was built as. */
        String pomProperties() {
            return "META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
        }

        String id() {
            return groupId + ":" + artifactId;
        }
    }

    /** Whether one of {@code routes} matches {@code path}; {@code *} matches one path segment, a route its sub-paths too. */
    static boolean owns(List<String> routes, String path) {
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
