package dev.atrium.actions.internal.workflow;

import java.util.Locale;
import java.util.Set;

/** The actions a step may use: Atrium's built-in equivalents of these GitHub actions, at any version. */
public enum Uses {
    CHECKOUT("actions/checkout", Set.of("ref", "path", "fetch-depth", "clean", "persist-credentials")),
    UPLOAD_ARTIFACT(
            "actions/upload-artifact", Set.of("name", "path", "if-no-files-found", "retention-days", "overwrite")),
    DOWNLOAD_ARTIFACT("actions/download-artifact", Set.of("name", "path", "pattern", "merge-multiple")),
    CACHE("actions/cache", Set.of("key", "path", "restore-keys"));

    private final String action;

    @SuppressWarnings("ImmutableEnumChecker") // Set.of is immutable
    private final Set<String> withKeys;

    Uses(String action, Set<String> withKeys) {
        this.action = action;
        this.withKeys = withKeys;
    }

    /** The GitHub action it stands for, e.g. {@code actions/checkout}. */
    public String action() {
        return action;
    }

    /** The {@code with} keys it takes. */
    public Set<String> withKeys() {
        return withKeys;
    }

    /** The built-in for {@code owner/name@ref} (owner and name ignore case), or null. */
    public static Uses of(String uses) {
        int at = uses.indexOf('@');
        if (at <= 0 || at == uses.length() - 1) {
            return null;
        }
        String name = uses.substring(0, at).toLowerCase(Locale.ROOT);
        for (Uses u : values()) {
            if (u.action.equals(name)) {
                return u;
            }
        }
        return null;
    }
}
