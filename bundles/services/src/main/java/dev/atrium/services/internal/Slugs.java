package dev.atrium.services.internal;

import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Service slugs: the workspace-slug rules (the kernel's {@code Names}): 1 to 63 lowercase letters, digits and single
 * hyphens, starting and ending with a letter or digit, not a reserved word. A slug is one DNS label, so
 * {@code <slug>.<apps domain>} is a host name. Unique per instance (a unique index).
 */
final class Slugs {

    private static final Pattern HANDLE = Pattern.compile("[a-z0-9](?:[a-z0-9-]*[a-z0-9])?");
    private static final Set<String> RESERVED = Set.of(
            "admin",
            "api",
            "ap",
            "auth",
            "git",
            "healthz",
            "me",
            "new",
            "ns",
            "oauth",
            "settings",
            "setup",
            "spaces",
            "well-known",
            "www",
            "root",
            "system",
            "operator");

    private Slugs() {}

    /** Why {@code slug} cannot be a slug, or null. */
    static String problem(String slug) {
        if (slug.isEmpty() || slug.length() > 63) {
            return "slug must be 1 to 63 characters";
        }
        if (!HANDLE.matcher(slug).matches() || slug.contains("--")) {
            return "slug may hold only lowercase letters, digits and single hyphens, and must start and end with a letter or digit";
        }
        if (RESERVED.contains(slug)) {
            return "slug '" + slug + "' is reserved";
        }
        return null;
    }

    /** A slug made from a display name: {@code My API} becomes {@code my-api}. */
    static String from(String name) {
        String base =
                name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
        if (base.length() > 40) {
            base = base.substring(0, 40).replaceAll("-+$", "");
        }
        if (base.isEmpty() || problem(base) != null) {
            base = "service" + (base.isEmpty() ? "" : "-" + base);
        }
        return base;
    }
}
