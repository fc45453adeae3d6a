package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@link PrincipalDirectory} over the kernel's principals table: identity bundles create Principals through it. */
@Component(service = PrincipalDirectory.class)
public class KernelPrincipalDirectory implements PrincipalDirectory {

    private final Sql sql;
    private final Principals principals;
    private final dev.atrium.kernel.internal.auth.PersonalAccessTokens tokens;

    @Activate
    public KernelPrincipalDirectory(
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrated,
            @Reference Principals principals,
            @Reference dev.atrium.kernel.internal.auth.PersonalAccessTokens tokens) {
        this.sql = new Sql(dataSource);
        this.principals = principals;
        this.tokens = tokens;
    }

    @Override
    public String createPersonalAccessToken(String principalId, String name) {
        return tokens.create(principalId, name, java.util.Set.of(dev.atrium.kernel.api.Caller.ALL_SCOPES), null)
                .secret();
    }

    @Override
    public Entry findOrCreate(String provider, String subject, String preferredUsername, String name, String email) {
        if (provider == null || provider.isBlank() || subject == null || subject.isBlank()) {
            throw ApiException.badRequest("provider and subject are required");
        }
        return sql.tx(c -> {
            Names.lock(c);
            Optional<PrincipalRecord> existing = Sql.one(
                    c,
                    "SELECT " + PrincipalRecord.COLUMNS + " FROM principals WHERE provider = ? AND subject = ?",
                    PrincipalRecord::of,
                    provider,
                    subject);
            if (existing.isPresent()) {
                return entry(existing.get(), false);
            }
            String id = Ids.id("pr");
            String username =
                    preferredUsername == null ? null : preferredUsername.trim().toLowerCase(java.util.Locale.ROOT);
            if (username != null
                    && (Names.formProblem("username", username, 3, 39) != null
                            || Names.usernameTaken(c, username, id))) {
                username = null;
            }
            String display = name == null || name.isBlank() ? username : name.trim();
            Sql.update(
                    c,
                    "INSERT INTO principals (id, provider, subject, username, name, email, setup_completed) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    id,
                    provider,
                    subject,
                    username,
                    display,
                    email,
                    username != null);
            String slug = username != null && !Names.slugTaken(c, username, id, null) ? username : null;
            Workspaces.create(c, id, username == null ? "Personal" : username, slug, "", "standard", true);
            return entry(
                    Sql.one(
                                    c,
                                    "SELECT " + PrincipalRecord.COLUMNS + " FROM principals WHERE id = ?",
                                    PrincipalRecord::of,
                                    id)
                            .orElseThrow(),
                    true);
        });
    }

    @Override
    public Optional<Entry> find(String provider, String subject) {
        return sql.one(
                        "SELECT " + PrincipalRecord.COLUMNS + " FROM principals WHERE provider = ? AND subject = ?",
                        PrincipalRecord::of,
                        provider,
                        subject)
                .map(p -> entry(p, false));
    }

    @Override
    public Optional<Entry> get(String principalId) {
        return principals.get(principalId).map(p -> entry(p, false));
    }

    @Override
    public Entry setUsername(String principalId, String username) {
        String u = username == null ? "" : username.trim();
        String problem = Names.formProblem("username", u, 3, 39);
        if (problem != null) {
            throw ApiException.badRequest(problem);
        }
        return entry(principals.rename(principalId, u, true), false);
    }

    @Override
    public Entry updateProfile(String principalId, String name, String picture) {
        sql.update(
                "UPDATE principals SET name = coalesce(?, name), picture = coalesce(?, picture), updated_at = now() WHERE id = ?",
                name,
                picture,
                principalId);
        return get(principalId).orElseThrow(() -> ApiException.unauthorized("authentication required"));
    }

    private static Entry entry(PrincipalRecord p, boolean created) {
        return new Entry(
                p.id(),
                p.provider(),
                p.subject(),
                p.username(),
                p.name(),
                p.email(),
                p.picture(),
                p.status(),
                p.setupCompleted(),
                created);
    }
}
