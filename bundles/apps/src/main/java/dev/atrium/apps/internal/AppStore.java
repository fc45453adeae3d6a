package dev.atrium.apps.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The app platform's tables: groups, their inventories, app deployments and the launcher's apps. */
@Component(service = AppStore.class)
public class AppStore {

    static final ObjectMapper JSON = new ObjectMapper();

    private static final String GROUP =
            "id, space_id, name, desired, metadata::text AS metadata, source::text AS source,"
                    + " provider, env::text AS env, current_app_deployment_id, applied_at, created_at, updated_at";
    private static final String DEPLOYMENT = "id, space_id, group_id, group_name, status, manifest_version,"
            + " hostnames::text AS hostnames, rollback_of, source::text AS source, snapshot::text AS snapshot,"
            + " rollout::text AS rollout, created_at, updated_at";
    private static final String APP = "id, space_id, group_id, name, display_name, description, icon, version,"
            + " client_id, client_secret, created_at, updated_at";

    private final Sql sql;
    private final DataSource dataSource;

    @Activate
    public AppStore(@Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.dataSource = dataSource;
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    Sql sql() {
        return sql;
    }

    DataSource dataSource() {
        return dataSource;
    }

    // ------------------------------------------------------------------ rows

    record Group(
            String id,
            String spaceId,
            String name,
            String desired,
            ObjectNode metadata,
            ObjectNode source,
            String provider,
            Map<String, String> env,
            String currentAppDeploymentId,
            Instant appliedAt,
            Instant createdAt,
            Instant updatedAt) {
        static Group of(ResultSet rs) throws SQLException {
            return new Group(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("name"),
                    rs.getString("desired"),
                    object(rs.getString("metadata")),
                    rs.getString("source") == null ? null : object(rs.getString("source")),
                    rs.getString("provider"),
                    strings(rs.getString("env")),
                    rs.getString("current_app_deployment_id"),
                    rs.getTimestamp("applied_at") == null ? null : Sql.instant(rs, "applied_at"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"));
        }
    }

    /** An inventory row: {@code kind} is resource, service or oauth_client. */
    record GroupObject(
            String groupId, String kind, String key, String objectId, String fingerprint, ObjectNode detail) {
        static GroupObject of(ResultSet rs) throws SQLException {
            return new GroupObject(
                    rs.getString("group_id"),
                    rs.getString("kind"),
                    rs.getString("key"),
                    rs.getString("object_id"),
                    rs.getString("fingerprint"),
                    object(rs.getString("detail")));
        }
    }

    record AppDeployment(
            String id,
            String spaceId,
            String groupId,
            String groupName,
            String status,
            String manifestVersion,
            List<String> hostnames,
            String rollbackOf,
            ObjectNode source,
            ObjectNode snapshot,
            ObjectNode rollout,
            Instant createdAt,
            Instant updatedAt) {
        static AppDeployment of(ResultSet rs) throws SQLException {
            List<String> hosts = new ArrayList<>();
            tree(rs.getString("hostnames")).forEach(h -> hosts.add(h.asText()));
            return new AppDeployment(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("group_id"),
                    rs.getString("group_name"),
                    rs.getString("status"),
                    rs.getString("manifest_version"),
                    hosts,
                    rs.getString("rollback_of"),
                    object(rs.getString("source")),
                    object(rs.getString("snapshot")),
                    object(rs.getString("rollout")),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"));
        }
    }

    record App(
            String id,
            String spaceId,
            String groupId,
            String name,
            String displayName,
            String description,
            String icon,
            String version,
            String clientId,
            String sealedSecret,
            Instant createdAt,
            Instant updatedAt) {
        static App of(ResultSet rs) throws SQLException {
            return new App(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("group_id"),
                    rs.getString("name"),
                    rs.getString("display_name"),
                    rs.getString("description"),
                    rs.getString("icon"),
                    rs.getString("version"),
                    rs.getString("client_id"),
                    rs.getString("client_secret"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"));
        }
    }

    // ------------------------------------------------------------------ groups

    Optional<Group> group(String spaceId, String groupId) {
        return sql.one(
                "SELECT " + GROUP + " FROM app_groups WHERE space_id = ? AND id = ?", Group::of, spaceId, groupId);
    }

    Optional<Group> groupByName(String spaceId, String name) {
        return sql.one(
                "SELECT " + GROUP + " FROM app_groups WHERE space_id = ? AND name = ?", Group::of, spaceId, name);
    }

    Optional<Group> groupById(String groupId) {
        return sql.one("SELECT " + GROUP + " FROM app_groups WHERE id = ?", Group::of, groupId);
    }

    List<Group> groups(String spaceId, int limit, int offset) {
        return sql.list(
                "SELECT " + GROUP + " FROM app_groups WHERE space_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
                Group::of,
                spaceId,
                limit,
                offset);
    }

    long countGroups(String spaceId) {
        return sql.count("SELECT count(*) FROM app_groups WHERE space_id = ?", spaceId);
    }

    /** The group named {@code name}, made when there is none (two concurrent callers get the same row). */
    Group ensureGroup(String spaceId, String name, String id) {
        sql.update(
                "INSERT INTO app_groups (id, space_id, name) VALUES (?, ?, ?) ON CONFLICT (space_id, name) DO NOTHING",
                id,
                spaceId,
                name);
        return groupByName(spaceId, name).orElseThrow();
    }

    /** A new group; empty when the name is taken. */
    Optional<Group> createGroup(String spaceId, String name, String id, ObjectNode metadata) {
        int n = sql.update(
                "INSERT INTO app_groups (id, space_id, name, metadata) VALUES (?, ?, ?, ?::jsonb)"
                        + " ON CONFLICT (space_id, name) DO NOTHING",
                id,
                spaceId,
                name,
                metadata.toString());
        return n == 0 ? Optional.empty() : groupById(id);
    }

    void setDesired(String groupId, String desired) {
        sql.update("UPDATE app_groups SET desired = ?, updated_at = now() WHERE id = ?", desired, groupId);
    }

    void setMetadata(String groupId, ObjectNode metadata) {
        sql.update(
                "UPDATE app_groups SET metadata = ?::jsonb, updated_at = now() WHERE id = ?",
                metadata.toString(),
                groupId);
    }

    /** Records a finished apply: the source projection, provider and env it used, and the app deployment (or null). */
    void applied(String groupId, ObjectNode source, String provider, Map<String, String> env, String appDeploymentId) {
        sql.update(
                "UPDATE app_groups SET source = ?::jsonb, provider = ?, env = ?::jsonb, current_app_deployment_id = ?,"
                        + " applied_at = now(), updated_at = now() WHERE id = ?",
                source == null ? null : source.toString(),
                provider,
                JSON.valueToTree(env).toString(),
                appDeploymentId,
                groupId);
    }

    boolean deleteGroup(String groupId) {
        return sql.tx(c -> {
            Sql.update(c, "DELETE FROM apps WHERE group_id = ?", groupId);
            return Sql.update(c, "DELETE FROM app_groups WHERE id = ?", groupId) > 0;
        });
    }

    // ------------------------------------------------------------------ inventory

    List<GroupObject> objects(String groupId) {
        return sql.list(
                "SELECT group_id, kind, key, object_id, fingerprint, detail::text AS detail FROM app_group_objects"
                        + " WHERE group_id = ? ORDER BY kind, key",
                GroupObject::of,
                groupId);
    }

    /** An inventory row with its group's name and app id (null before the app is recorded). */
    record PlacedObject(GroupObject object, String groupName, String appId) {}

    /** A workspace's inventory rows of {@code kind}. */
    List<PlacedObject> objectsInSpace(String spaceId, String kind) {
        return sql.list(
                "SELECT o.group_id, o.kind, o.key, o.object_id, o.fingerprint, o.detail::text AS detail,"
                        + " g.name AS group_name, a.id AS app_id"
                        + " FROM app_group_objects o JOIN app_groups g ON g.id = o.group_id"
                        + " LEFT JOIN apps a ON a.group_id = o.group_id"
                        + " WHERE g.space_id = ? AND o.kind = ? ORDER BY g.name, o.key",
                rs -> new PlacedObject(GroupObject.of(rs), rs.getString("group_name"), rs.getString("app_id")),
                spaceId,
                kind);
    }

    void putObject(GroupObject o) {
        sql.update(
                "INSERT INTO app_group_objects (group_id, kind, key, object_id, fingerprint, detail)"
                        + " VALUES (?, ?, ?, ?, ?, ?::jsonb) ON CONFLICT (group_id, kind, key) DO UPDATE SET"
                        + " object_id = excluded.object_id, fingerprint = excluded.fingerprint, detail = excluded.detail,"
                        + " updated_at = now()",
                o.groupId(),
                o.kind(),
                o.key(),
                o.objectId(),
                o.fingerprint(),
                o.detail().toString());
    }

    void removeObject(String groupId, String kind, String key) {
        sql.update("DELETE FROM app_group_objects WHERE group_id = ? AND kind = ? AND key = ?", groupId, kind, key);
    }

    // ------------------------------------------------------------------ app deployments

    void insertDeployment(AppDeployment d) {
        sql.update(
                "INSERT INTO app_deployments (id, space_id, group_id, group_name, status, manifest_version, hostnames,"
                        + " rollback_of, source, snapshot, rollout) VALUES (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?::jsonb,"
                        + " ?::jsonb, ?::jsonb)",
                d.id(),
                d.spaceId(),
                d.groupId(),
                d.groupName(),
                d.status(),
                d.manifestVersion(),
                JSON.valueToTree(d.hostnames()).toString(),
                d.rollbackOf(),
                d.source().toString(),
                d.snapshot().toString(),
                d.rollout().toString());
    }

    void updateDeployment(String id, String status, List<String> hostnames, ObjectNode snapshot, ObjectNode rollout) {
        sql.update(
                "UPDATE app_deployments SET status = ?, hostnames = ?::jsonb, snapshot = ?::jsonb, rollout = ?::jsonb,"
                        + " updated_at = now() WHERE id = ?",
                status,
                JSON.valueToTree(hostnames).toString(),
                snapshot.toString(),
                rollout.toString(),
                id);
    }

    void setRollout(Connection c, String id, String status, ObjectNode rollout) throws SQLException {
        Sql.update(
                c,
                "UPDATE app_deployments SET status = ?, rollout = ?::jsonb, updated_at = now() WHERE id = ?",
                status,
                rollout.toString(),
                id);
    }

    Optional<AppDeployment> deployment(String spaceId, String id) {
        return sql.one(
                "SELECT " + DEPLOYMENT + " FROM app_deployments WHERE space_id = ? AND id = ?",
                AppDeployment::of,
                spaceId,
                id);
    }

    /** The deployment, locked for the transaction of {@code c}. */
    Optional<AppDeployment> lockDeployment(Connection c, String id) throws SQLException {
        return Sql.one(
                c, "SELECT " + DEPLOYMENT + " FROM app_deployments WHERE id = ? FOR UPDATE", AppDeployment::of, id);
    }

    List<AppDeployment> deployments(String spaceId, String groupId, int limit, int offset) {
        return sql.list(
                "SELECT " + DEPLOYMENT
                        + " FROM app_deployments WHERE space_id = ? AND (?::text IS NULL OR group_id = ?)"
                        + " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
                AppDeployment::of,
                spaceId,
                groupId,
                groupId,
                limit,
                offset);
    }

    long countDeployments(String spaceId, String groupId) {
        return sql.count(
                "SELECT count(*) FROM app_deployments WHERE space_id = ? AND (?::text IS NULL OR group_id = ?)",
                spaceId,
                groupId,
                groupId);
    }

    /** Ids of deployments whose rollout may move on its own (a step's hold ended). */
    List<String> progressing() {
        return sql.list(
                "SELECT id FROM app_deployments WHERE rollout ->> 'state' = 'progressing'", rs -> rs.getString(1));
    }

    /** The group's deployments whose rollout is progressing or paused. */
    List<AppDeployment> activeRollouts(String groupId) {
        return sql.list(
                "SELECT " + DEPLOYMENT + " FROM app_deployments WHERE group_id = ?"
                        + " AND rollout ->> 'state' IN ('progressing', 'paused')",
                AppDeployment::of,
                groupId);
    }

    boolean deleteDeployment(String spaceId, String id) {
        return sql.update("DELETE FROM app_deployments WHERE space_id = ? AND id = ?", spaceId, id) > 0;
    }

    // ------------------------------------------------------------------ apps

    Optional<App> appOfGroup(String groupId) {
        return sql.one("SELECT " + APP + " FROM apps WHERE group_id = ?", App::of, groupId);
    }

    Optional<App> app(String id) {
        return sql.one("SELECT " + APP + " FROM apps WHERE id = ?", App::of, id);
    }

    /** The apps in workspaces of {@code principalId} when they were deployed (the caller still checks each). */
    List<App> appsOf(String principalId) {
        return sql.list(
                "SELECT " + APP + " FROM apps WHERE owner_principal_id = ? ORDER BY created_at, id",
                App::of,
                principalId);
    }

    /** Makes or refreshes the launcher's record of a group's app from its manifest. */
    void upsertApp(
            String id,
            dev.atrium.kernel.api.SpaceRef space,
            String groupId,
            String name,
            String displayName,
            String description,
            String icon,
            String version) {
        sql.update(
                "INSERT INTO apps (id, space_id, owner_principal_id, group_id, name, display_name, description, icon,"
                        + " version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (group_id) DO UPDATE SET"
                        + " version = excluded.version, name = excluded.name, updated_at = now()",
                id,
                space.id(),
                space.ownerPrincipalId(),
                groupId,
                name,
                displayName,
                description,
                icon,
                version);
    }

    void setAppClient(String groupId, String clientId, String sealedSecret) {
        sql.update(
                "UPDATE apps SET client_id = ?, client_secret = ?, updated_at = now() WHERE group_id = ?",
                clientId,
                sealedSecret,
                groupId);
    }

    void updateApp(String id, String displayName, String description, String icon) {
        sql.update(
                "UPDATE apps SET display_name = ?, description = ?, icon = ?, updated_at = now() WHERE id = ?",
                displayName,
                description,
                icon,
                id);
    }

    // ------------------------------------------------------------------ JSON

    static JsonNode tree(String text) {
        try {
            return text == null ? JSON.nullNode() : JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored JSON does not parse", e);
        }
    }

    static ObjectNode object(String text) {
        JsonNode n = tree(text);
        return n instanceof ObjectNode o ? o : JSON.createObjectNode();
    }

    static Map<String, String> strings(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        tree(text)
                .fields()
                .forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }
}
