package dev.atrium.skills.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The skills table, which this bundle owns. It knows workspaces only by id; ownership is the kernel's. */
@Component(service = SkillStore.class)
public class SkillStore {

    static final int MAX_PER_SPACE = 100;
    private static final String COLUMNS =
            "id, space_id, name, description, instructions, tools, enabled, source, created_at, updated_at";

    private final Sql sql;

    @Activate
    public SkillStore(@Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    public record Skill(
            String id,
            String spaceId,
            String name,
            String description,
            String instructions,
            List<String> tools,
            boolean enabled,
            String source,
            String createdAt,
            String updatedAt) {
        static Skill of(ResultSet rs) throws SQLException {
            String tools = rs.getString("tools");
            return new Skill(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("name"),
                    rs.getString("description"),
                    rs.getString("instructions"),
                    tools.isEmpty() ? List.of() : Arrays.asList(tools.split(",")),
                    rs.getBoolean("enabled"),
                    rs.getString("source"),
                    Sql.instant(rs, "created_at").toString(),
                    Sql.instant(rs, "updated_at").toString());
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("space_id", spaceId);
            m.put("name", name);
            m.put("description", description);
            m.put("instructions", instructions);
            m.put("tools", tools);
            m.put("enabled", enabled);
            m.put("source", source);
            m.put("official", false);
            m.put("created_at", createdAt);
            m.put("updated_at", updatedAt);
            return m;
        }
    }

    /** 409 when the workspace has a skill of that name, or has its fill of skills. */
    public Skill create(String spaceId, SkillInput in) {
        return named(
                in,
                () -> sql.tx(c -> {
                    Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext('skills:' || ?))", spaceId);
                    if (Sql.count(c, "SELECT count(*) FROM skills WHERE space_id = ?", spaceId) >= MAX_PER_SPACE) {
                        throw ApiException.conflict("a workspace has at most " + MAX_PER_SPACE + " custom skills");
                    }
                    return insert(c, spaceId, in);
                }));
    }

    /** Creates or replaces the skill named {@code in.name()}; answers it and whether it was created. */
    public Map.Entry<Skill, Boolean> upsertByName(String spaceId, SkillInput in) {
        return named(
                in,
                () -> sql.tx(c -> {
                    Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext('skills:' || ?))", spaceId);
                    Optional<Skill> current = Sql.one(
                            c,
                            "SELECT " + COLUMNS + " FROM skills WHERE space_id = ? AND name = ? FOR UPDATE",
                            Skill::of,
                            spaceId,
                            in.name());
                    if (current.isPresent()) {
                        return Map.entry(replace(c, current.get().id(), in), false);
                    }
                    if (Sql.count(c, "SELECT count(*) FROM skills WHERE space_id = ?", spaceId) >= MAX_PER_SPACE) {
                        throw ApiException.conflict("a workspace has at most " + MAX_PER_SPACE + " custom skills");
                    }
                    return Map.entry(insert(c, spaceId, in), true);
                }));
    }

    /** The database's unique (space_id, name) is the last word on a duplicate name (two creations racing): 409 saying so. */
    private static <T> T named(SkillInput in, java.util.function.Supplier<T> work) {
        try {
            return work.get();
        } catch (Sql.Conflict e) {
            throw ApiException.conflict("a skill named " + in.name() + " already exists in this workspace");
        }
    }

    private static Skill insert(java.sql.Connection c, String spaceId, SkillInput in) throws SQLException {
        return Sql.one(
                        c,
                        "INSERT INTO skills (id, space_id, name, description, instructions, tools, enabled, source) "
                                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + COLUMNS,
                        Skill::of,
                        Ids.id("skl"),
                        spaceId,
                        in.name(),
                        in.description(),
                        in.instructions(),
                        String.join(",", in.tools()),
                        in.enabled(),
                        in.source())
                .orElseThrow();
    }

    private static Skill replace(java.sql.Connection c, String id, SkillInput in) throws SQLException {
        return Sql.one(
                        c,
                        "UPDATE skills SET name = ?, description = ?, instructions = ?, tools = ?, enabled = ?, source = ?, "
                                + "updated_at = now() WHERE id = ? RETURNING " + COLUMNS,
                        Skill::of,
                        in.name(),
                        in.description(),
                        in.instructions(),
                        String.join(",", in.tools()),
                        in.enabled(),
                        in.source(),
                        id)
                .orElseThrow(() -> ApiException.notFound("skill not found"));
    }

    public Skill replace(String id, SkillInput in) {
        return named(in, () -> sql.tx(c -> replace(c, id, in)));
    }

    public Optional<Skill> byId(String spaceId, String id) {
        return sql.one("SELECT " + COLUMNS + " FROM skills WHERE space_id = ? AND id = ?", Skill::of, spaceId, id);
    }

    public Optional<Skill> byName(String spaceId, String name) {
        return sql.one("SELECT " + COLUMNS + " FROM skills WHERE space_id = ? AND name = ?", Skill::of, spaceId, name);
    }

    public List<Skill> list(String spaceId, int limit, int offset) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM skills WHERE space_id = ? ORDER BY name LIMIT ? OFFSET ?",
                Skill::of,
                spaceId,
                limit,
                offset);
    }

    public long count(String spaceId) {
        return sql.count("SELECT count(*) FROM skills WHERE space_id = ?", spaceId);
    }

    /** The enabled skills, by name, as a run's context takes them. */
    public List<Skill> enabled(String spaceId, int limit) {
        return sql.list(
                "SELECT " + COLUMNS + " FROM skills WHERE space_id = ? AND enabled ORDER BY name LIMIT ?",
                Skill::of,
                spaceId,
                limit);
    }

    public Optional<Skill> setEnabled(String id, boolean enabled) {
        return sql.one(
                "UPDATE skills SET enabled = ?, updated_at = now() WHERE id = ? RETURNING " + COLUMNS,
                Skill::of,
                enabled,
                id);
    }

    public boolean delete(String id) {
        return sql.update("DELETE FROM skills WHERE id = ?", id) == 1;
    }

    /** Every skill of a workspace, by name, in one read (a workspace has at most {@value #MAX_PER_SPACE}). */
    public List<Skill> all(String spaceId) {
        return list(spaceId, Integer.MAX_VALUE, 0);
    }

    /** Removes every skill of a workspace (an import that failed after this part). */
    public int deleteAll(String spaceId) {
        return sql.update("DELETE FROM skills WHERE space_id = ?", spaceId);
    }
}
