package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The one namespace shared by usernames and workspace slugs (a Git {@code :owner} is either). A name is
 * taken when another Principal uses it as username, or any workspace not owned by the asker uses it as slug
 * (slugs are unique across all workspaces). Callers hold {@link #lock} in their transaction.
 */
public final class Names {

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
    private static final long LOCK_KEY = 0x41746e616d6573L;

    private Names() {}

    /** Why {@code name} cannot be a username or slug, or null when its form is fine. */
    public static String formProblem(String what, String name, int min, int max) {
        if (name.length() < min || name.length() > max) {
            return what + " must be " + min + " to " + max + " characters";
        }
        if (!HANDLE.matcher(name).matches() || name.contains("--")) {
            return what
                    + " may hold only lowercase letters, digits and single hyphens, and must start and end with a letter or digit";
        }
        if (RESERVED.contains(name)) {
            return what + " '" + name + "' is reserved";
        }
        return null;
    }

    public static void lock(Connection c) throws SQLException {
        Sql.one(c, "SELECT pg_advisory_xact_lock(?)", rs -> 1, LOCK_KEY);
    }

    public static boolean usernameTaken(Connection c, String username, String principalId) throws SQLException {
        return Sql.one(
                        c,
                        "SELECT 1 FROM principals WHERE username = ? AND id <> ? "
                                + "UNION ALL SELECT 1 FROM workspaces WHERE slug = ? AND owner_principal_id <> ? LIMIT 1",
                        rs -> 1,
                        username,
                        principalId,
                        username,
                        principalId)
                .isPresent();
    }

    public static boolean slugTaken(Connection c, String slug, String ownerId, String exceptWorkspaceId)
            throws SQLException {
        return Sql.one(
                        c,
                        "SELECT 1 FROM workspaces WHERE slug = ? AND id <> ? "
                                + "UNION ALL SELECT 1 FROM principals WHERE username = ? AND id <> ? LIMIT 1",
                        rs -> 1,
                        slug,
                        exceptWorkspaceId == null ? "" : exceptWorkspaceId,
                        slug,
                        ownerId)
                .isPresent();
    }

    /** A free slug made from a display name: {@code My Notes} becomes {@code my-notes}, then {@code my-notes-2}. */
    public static String freeSlug(Connection c, String name, String ownerId) throws SQLException {
        String base =
                name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
        if (base.length() > 40) {
            base = base.substring(0, 40).replaceAll("-+$", "");
        }
        if (base.isEmpty() || formProblem("slug", base, 1, 63) != null) {
            base = "space" + (base.isEmpty() ? "" : "-" + base);
        }
        String candidate = base;
        for (int n = 2; slugTaken(c, candidate, ownerId, null); n++) {
            candidate = base + "-" + n;
        }
        return candidate;
    }
}
