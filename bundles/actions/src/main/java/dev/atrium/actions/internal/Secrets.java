package dev.atrium.actions.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Sealer;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Secrets of repositories' workflows, sealed at rest with a key of this bundle's (AES-256-GCM, the kernel's
 * {@link Sealer}; the repository and name are the associated data, so a sealed value moved to another row does not
 * open). Their values leave only into the jobs of their own repository's runs, never into runs from forks.
 */
@Component(service = Secrets.class)
public class Secrets {

    /** GitHub's rule: letters, digits and underscores, not starting with a digit or {@code GITHUB_}. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,99}");

    static final int MAX_VALUE = 48 * 1024;

    private final Sql sql;
    private final Sealer sealer;

    @Activate
    public Secrets(@Reference ActionStore store, @Reference ActionsSettings settings) throws IOException {
        this.sql = store.sql();
        this.sealer = Sealer.withKeyFile(
                settings.workDirectory
                        .getParent()
                        .resolve("keys")
                        .resolve("actions")
                        .resolve("secrets.key"),
                "actions-secrets1");
    }

    record Listed(String name, Instant createdAt, Instant updatedAt) {}

    static String checkName(String name) {
        if (name == null
                || !NAME.matcher(name).matches()
                || name.toUpperCase(java.util.Locale.ROOT).startsWith("GITHUB_")) {
            throw ApiException.badRequest(
                    "a secret's name is letters, digits and underscores, at most 100, not starting with a digit or GITHUB_");
        }
        return name.toUpperCase(java.util.Locale.ROOT);
    }

    List<Listed> list(String repoId) {
        return sql.list(
                "SELECT name, created_at, updated_at FROM action_secrets WHERE repo_id = ? ORDER BY name",
                rs -> new Listed(rs.getString(1), Sql.instant(rs, "created_at"), Sql.instant(rs, "updated_at")),
                repoId);
    }

    /** Stores the value; true when the secret is new. */
    boolean put(String repoId, String name, String value) {
        Sealer.Sealed s = sealer.seal(value, aad(repoId, name));
        return sql.one(
                        "INSERT INTO action_secrets (repo_id, name, key_id, nonce, ciphertext) VALUES (?, ?, ?, ?, ?)"
                                + " ON CONFLICT (repo_id, name) DO UPDATE SET key_id = excluded.key_id, nonce = excluded.nonce,"
                                + " ciphertext = excluded.ciphertext, updated_at = now() RETURNING (xmax = 0)",
                        rs -> rs.getBoolean(1),
                        repoId,
                        name,
                        s.keyId(),
                        s.nonce(),
                        s.ciphertext())
                .orElse(false);
    }

    boolean delete(String repoId, String name) {
        return sql.update("DELETE FROM action_secrets WHERE repo_id = ? AND name = ?", repoId, name) > 0;
    }

    void forgetRepository(String repoId) {
        sql.update("DELETE FROM action_secrets WHERE repo_id = ?", repoId);
    }

    /** The repository's secrets in the clear, for a job of one of its own runs. */
    Map<String, String> open(String repoId) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, Sealer.Sealed> e : sql.list(
                "SELECT name, key_id, nonce, ciphertext FROM action_secrets WHERE repo_id = ? ORDER BY name",
                rs -> Map.entry(rs.getString(1), new Sealer.Sealed(rs.getString(2), rs.getBytes(3), rs.getBytes(4))),
                repoId)) {
            out.put(e.getKey(), sealer.open(e.getValue(), aad(repoId, e.getKey())));
        }
        return out;
    }

    private static String aad(String repoId, String name) {
        return "actions-secret\n" + repoId + "\n" + name;
    }
}
