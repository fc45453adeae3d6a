package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.internal.auth.AccessCache;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** Principals: one per (identity provider, subject), each with exactly one default workspace. */
@Component(service = Principals.class)
public class Principals {

    public static final String LOCAL_PROVIDER = "local";

    private final Sql sql;
    private final AccessCache access;

    @Activate
    public Principals(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrated, @Reference AccessCache access) {
        this.sql = new Sql(dataSource);
        this.access = access;
    }

    public Optional<PrincipalRecord> get(String id) {
        return sql.one("SELECT " + PrincipalRecord.COLUMNS + " FROM principals WHERE id = ?", PrincipalRecord::of, id);
    }

    public Optional<PrincipalRecord> byUsername(String username) {
        return sql.one(
                "SELECT " + PrincipalRecord.COLUMNS + " FROM principals WHERE username = ?",
                PrincipalRecord::of,
                username);
    }

    public record Ensured(PrincipalRecord principal, boolean created) {}

    /**
     * The Principal of {@code (provider, subject)}, created with its default workspace when it does not
     * exist yet. A new local Principal takes {@code username}, which must then be free (409 otherwise).
     */
    public Ensured ensure(String provider, String subject, String username) {
        return sql.tx(c -> {
            Names.lock(c);
            Optional<PrincipalRecord> existing = Sql.one(
                    c,
                    "SELECT " + PrincipalRecord.COLUMNS + " FROM principals WHERE provider = ? AND subject = ?",
                    PrincipalRecord::of,
                    provider,
                    subject);
            if (existing.isPresent()) {
                return new Ensured(existing.get(), false);
            }
            String id = Ids.id("pr");
            if (username != null && Names.usernameTaken(c, username, id)) {
                throw ApiException.conflict("username '" + username + "' is already taken");
            }
            Sql.update(
                    c,
                    "INSERT INTO principals (id, provider, subject, username, name, setup_completed) VALUES (?, ?, ?, ?, ?, ?)",
                    id,
                    provider,
                    subject,
                    username,
                    username,
                    username != null);
            String slug = username != null && !Names.slugTaken(c, username, id, null) ? username : null;
            Workspaces.create(c, id, username == null ? "Personal" : username, slug, "", "standard", true);
            return new Ensured(
                    Sql.one(
                                    c,
                                    "SELECT " + PrincipalRecord.COLUMNS + " FROM principals WHERE id = ?",
                                    PrincipalRecord::of,
                                    id)
                            .orElseThrow(),
                    true);
        });
    }

    public record SettingsChange(
            Boolean setupCompleted, Boolean autoUpdateEnabled, Boolean privateAccount, String activityVisibility) {}

    public PrincipalRecord updateSettings(String id, SettingsChange s) {
        sql.update(
                "UPDATE principals SET setup_completed = coalesce(?, setup_completed), "
                        + "auto_update_enabled = coalesce(?, auto_update_enabled), private_account = coalesce(?, private_account), "
                        + "activity_visibility = coalesce(?, activity_visibility), updated_at = now() WHERE id = ?",
                s.setupCompleted(),
                s.autoUpdateEnabled(),
                s.privateAccount(),
                s.activityVisibility(),
                id);
        return get(id).orElseThrow(() -> ApiException.unauthorized("authentication required"));
    }

    /** Sets the username (409 when another Principal or workspace holds it); optionally completes setup. */
    public PrincipalRecord rename(String id, String username, boolean completeSetup) {
        sql.tx(c -> {
            Names.lock(c);
            if (Names.usernameTaken(c, username, id)) {
                throw ApiException.conflict("username '" + username + "' is already taken");
            }
            return Sql.update(
                    c,
                    "UPDATE principals SET username = ?, setup_completed = setup_completed OR ?, updated_at = now() "
                            + "WHERE id = ?",
                    username,
                    completeSetup,
                    id);
        });
        return get(id).orElseThrow(() -> ApiException.unauthorized("authentication required"));
    }

    public boolean usernameAvailable(String username, String askingPrincipalId) {
        return !sql.run(c -> Names.usernameTaken(c, username, askingPrincipalId));
    }

    public boolean setStatus(String username, String status) {
        boolean changed =
                sql.update("UPDATE principals SET status = ?, updated_at = now() WHERE username = ?", status, username)
                        == 1;
        access.forgetAll();
        return changed;
    }
}
