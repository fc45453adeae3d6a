package dev.atrium.services.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.services.api.ServiceDomains;
import dev.atrium.services.api.ServiceDomains.Domain;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The tables this bundle owns. It knows workspaces only by id; ownership is the kernel's. */
@Component(service = ServiceStore.class)
public class ServiceStore {

    static final String SERVICE_COLUMNS =
            "id, space_id, principal_id, name, slug, settings, config_revision, current_deployment_id, "
                    + "canary_deployment_id, canary_percent, created_at, updated_at";
    static final String DEPLOYMENT_COLUMNS =
            "id, service_id, seq, status, strategy, provider, artifact_kind, artifact_key, artifact_sha256, "
                    + "artifact_size, deploy_message, canary_percent, idempotency_key, request_hash, created_at";
    static final String DOMAIN_COLUMNS =
            "id, service_id, domain, token, status, verified_by, verified_at, last_check, created_at";

    private final Sql sql;

    @Activate
    public ServiceStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this(dataSource);
        migrations.apply(context.getBundle());
    }

    /** For tests: the tables must exist. */
    ServiceStore(DataSource dataSource) {
        this.sql = new Sql(dataSource);
    }

    Sql sql() {
        return sql;
    }

    public record Service(
            String id,
            String spaceId,
            String principalId,
            String name,
            String slug,
            String settings,
            int configRevision,
            String currentDeploymentId,
            String canaryDeploymentId,
            Integer canaryPercent,
            Instant createdAt,
            Instant updatedAt) {
        static Service of(ResultSet rs) throws SQLException {
            int pct = rs.getInt("canary_percent");
            return new Service(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("principal_id"),
                    rs.getString("name"),
                    rs.getString("slug"),
                    rs.getString("settings"),
                    rs.getInt("config_revision"),
                    rs.getString("current_deployment_id"),
                    rs.getString("canary_deployment_id"),
                    rs.wasNull() ? null : pct,
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"));
        }
    }

    public record DeploymentRow(
            String id,
            String serviceId,
            int seq,
            String status,
            String strategy,
            String provider,
            String artifactKind,
            String artifactKey,
            String artifactSha256,
            long artifactSize,
            String deployMessage,
            Integer canaryPercent,
            String idempotencyKey,
            String requestHash,
            Instant createdAt) {
        static DeploymentRow of(ResultSet rs) throws SQLException {
            int pct = rs.getInt("canary_percent");
            Integer canary = rs.wasNull() ? null : pct;
            return new DeploymentRow(
                    rs.getString("id"),
                    rs.getString("service_id"),
                    rs.getInt("seq"),
                    rs.getString("status"),
                    rs.getString("strategy"),
                    rs.getString("provider"),
                    rs.getString("artifact_kind"),
                    rs.getString("artifact_key"),
                    rs.getString("artifact_sha256"),
                    rs.getLong("artifact_size"),
                    rs.getString("deploy_message"),
                    canary,
                    rs.getString("idempotency_key"),
                    rs.getString("request_hash"),
                    Sql.instant(rs, "created_at"));
        }
    }

    public record EnvRow(
            String name,
            boolean secret,
            String value,
            String keyId,
            byte[] nonce,
            byte[] ciphertext,
            Instant updatedAt) {
        static EnvRow of(ResultSet rs) throws SQLException {
            return new EnvRow(
                    rs.getString("name"),
                    rs.getBoolean("secret"),
                    rs.getString("value"),
                    rs.getString("key_id"),
                    rs.getBytes("nonce"),
                    rs.getBytes("ciphertext"),
                    Sql.instant(rs, "updated_at"));
        }
    }

    public record LinkRow(String name, boolean builtin, String scopes) {
        static LinkRow of(ResultSet rs) throws SQLException {
            return new LinkRow(rs.getString("name"), rs.getBoolean("builtin"), rs.getString("scopes"));
        }
    }

    private static Domain domainOf(ResultSet rs) throws SQLException {
        return new Domain(
                rs.getString("id"),
                rs.getString("service_id"),
                rs.getString("domain"),
                rs.getString("token"),
                rs.getString("status"),
                rs.getString("verified_by"),
                Sql.instant(rs, "verified_at"),
                rs.getString("last_check"),
                Sql.instant(rs, "created_at"));
    }

    // ------------------------------------------------------------------ services

    /** Inserts a service with the first free slug of {@code slugBase}, {@code slugBase-2}, … */
    public Service create(String id, String spaceId, String principalId, String name, String slugBase) {
        for (int n = 1; ; n++) {
            String slug = n == 1 ? slugBase : slugBase + "-" + n;
            try {
                return sql.one(
                                "INSERT INTO services (id, space_id, principal_id, name, slug) VALUES (?, ?, ?, ?, ?) RETURNING "
                                        + SERVICE_COLUMNS,
                                Service::of,
                                id,
                                spaceId,
                                principalId,
                                name,
                                slug)
                        .orElseThrow();
            } catch (Sql.Conflict e) {
                if (n > 1000) {
                    throw ApiException.conflict("no free slug for '" + slugBase + "'");
                }
            }
        }
    }

    public Optional<Service> service(String id) {
        return sql.one("SELECT " + SERVICE_COLUMNS + " FROM services WHERE id = ?", Service::of, id);
    }

    public Optional<Service> bySlug(String slug) {
        return sql.one("SELECT " + SERVICE_COLUMNS + " FROM services WHERE slug = ?", Service::of, slug);
    }

    public List<Service> bySpace(String spaceId, int limit, int offset) {
        return sql.list(
                "SELECT " + SERVICE_COLUMNS
                        + " FROM services WHERE space_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
                Service::of,
                spaceId,
                limit,
                offset);
    }

    /** The oldest service of the workspace with that name (names are not unique), if any. */
    public Optional<Service> byName(String spaceId, String name) {
        return sql.one(
                "SELECT " + SERVICE_COLUMNS
                        + " FROM services WHERE space_id = ? AND name = ? ORDER BY created_at, id LIMIT 1",
                Service::of,
                spaceId,
                name);
    }

    public long countBySpace(String spaceId) {
        return sql.count("SELECT count(*) FROM services WHERE space_id = ?", spaceId);
    }

    public List<Service> byPrincipal(String principalId) {
        return sql.list(
                "SELECT " + SERVICE_COLUMNS
                        + " FROM services WHERE principal_id = ? ORDER BY created_at, id LIMIT 10000",
                Service::of,
                principalId);
    }

    /** Every service with a current deployment (the desired state of the instance). */
    /** The service's path routes, prefix to target service id. */
    public Map<String, String> pathRoutes(String serviceId) {
        Map<String, String> out = new java.util.TreeMap<>();
        sql.list(
                        "SELECT prefix, target_service_id FROM service_path_routes WHERE service_id = ?",
                        rs -> Map.entry(rs.getString(1), rs.getString(2)),
                        serviceId)
                .forEach(e -> out.put(e.getKey(), e.getValue()));
        return out;
    }

    /** Every service's path routes: service id to (prefix to target service id). */
    public Map<String, Map<String, String>> allPathRoutes() {
        Map<String, Map<String, String>> out = new java.util.HashMap<>();
        sql.list(
                        "SELECT service_id, prefix, target_service_id FROM service_path_routes",
                        rs -> List.of(rs.getString(1), rs.getString(2), rs.getString(3)))
                .forEach(r -> out.computeIfAbsent(r.get(0), k -> new java.util.TreeMap<>())
                        .put(r.get(1), r.get(2)));
        return out;
    }

    public void replacePathRoutes(Connection c, String serviceId, Map<String, String> routes) throws SQLException {
        Sql.update(c, "DELETE FROM service_path_routes WHERE service_id = ?", serviceId);
        for (var e : routes.entrySet()) {
            Sql.update(
                    c,
                    "INSERT INTO service_path_routes (service_id, prefix, target_service_id) VALUES (?, ?, ?)",
                    serviceId,
                    e.getKey(),
                    e.getValue());
        }
    }

    public List<Service> deployed() {
        return sql.list(
                "SELECT " + SERVICE_COLUMNS + " FROM services WHERE current_deployment_id IS NOT NULL ORDER BY id",
                Service::of);
    }

    public Service setSlug(String id, String slug) {
        return sql.one(
                        "UPDATE services SET slug = ?, updated_at = now() WHERE id = ? RETURNING " + SERVICE_COLUMNS,
                        Service::of,
                        slug,
                        id)
                .orElseThrow(() -> ApiException.notFound(ServicesApi.NOT_FOUND));
    }

    public Service setSettings(String id, String settings) {
        return sql.one(
                        "UPDATE services SET settings = ?, config_revision = config_revision + 1, updated_at = now() WHERE id = ? RETURNING "
                                + SERVICE_COLUMNS,
                        Service::of,
                        settings,
                        id)
                .orElseThrow(() -> ApiException.notFound(ServicesApi.NOT_FOUND));
    }

    public void bumpRevision(String id) {
        sql.update("UPDATE services SET config_revision = config_revision + 1, updated_at = now() WHERE id = ?", id);
    }

    /** Sets the current and canary deployments. */
    public void setRouting(Connection c, String id, String current, String canary, Integer canaryPercent)
            throws SQLException {
        Sql.update(
                c,
                "UPDATE services SET current_deployment_id = ?, canary_deployment_id = ?, canary_percent = ?, updated_at = now() WHERE id = ?",
                current,
                canary,
                canaryPercent,
                id);
    }

    /** The share of requests the service's canary gets (its canary deployment's row records it too). */
    public void setCanaryPercent(Connection c, String id, String canary, int canaryPercent) throws SQLException {
        Sql.update(c, "UPDATE services SET canary_percent = ?, updated_at = now() WHERE id = ?", canaryPercent, id);
        Sql.update(c, "UPDATE service_deployments SET canary_percent = ? WHERE id = ?", canaryPercent, canary);
    }

    public boolean delete(String id) {
        return sql.update("DELETE FROM services WHERE id = ?", id) == 1;
    }

    // ------------------------------------------------------------------ env

    public List<EnvRow> env(String serviceId) {
        return sql.list(
                "SELECT name, secret, value, key_id, nonce, ciphertext, updated_at FROM service_env WHERE service_id = ? ORDER BY name",
                EnvRow::of,
                serviceId);
    }

    public void putEnv(Connection c, String serviceId, EnvRow row) throws SQLException {
        Sql.update(
                c,
                "INSERT INTO service_env (service_id, name, secret, value, key_id, nonce, ciphertext) VALUES (?, ?, ?, ?, ?, ?, ?) "
                        + "ON CONFLICT (service_id, name) DO UPDATE SET secret = EXCLUDED.secret, value = EXCLUDED.value, key_id = EXCLUDED.key_id, "
                        + "nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext, updated_at = now()",
                serviceId,
                row.name(),
                row.secret(),
                row.value(),
                row.keyId(),
                row.nonce(),
                row.ciphertext());
    }

    /** Removes every variable of the service (before it is given a whole new set). */
    public void clearEnv(Connection c, String serviceId) throws SQLException {
        Sql.update(c, "DELETE FROM service_env WHERE service_id = ?", serviceId);
    }

    public void deleteEnv(Connection c, String serviceId, String name) throws SQLException {
        Sql.update(c, "DELETE FROM service_env WHERE service_id = ? AND name = ?", serviceId, name);
    }

    // ------------------------------------------------------------------ common-env links

    public List<LinkRow> links(String serviceId) {
        return sql.list(
                "SELECT name, builtin, scopes FROM service_common_env_links WHERE service_id = ? ORDER BY builtin, name",
                LinkRow::of,
                serviceId);
    }

    /** The services of a workspace that link to its common variable {@code name}. */
    public List<String> linking(String spaceId, String name) {
        return sql.list(
                "SELECT s.id FROM services s JOIN service_common_env_links l ON l.service_id = s.id "
                        + "WHERE s.space_id = ? AND l.name = ? AND NOT l.builtin",
                rs -> rs.getString(1),
                spaceId,
                name);
    }

    public void replaceLinks(Connection c, String serviceId, List<LinkRow> links) throws SQLException {
        Sql.update(c, "DELETE FROM service_common_env_links WHERE service_id = ?", serviceId);
        for (LinkRow l : links) {
            Sql.update(
                    c,
                    "INSERT INTO service_common_env_links (service_id, name, builtin, scopes) VALUES (?, ?, ?, ?)",
                    serviceId,
                    l.name(),
                    l.builtin(),
                    l.scopes());
        }
    }

    // ------------------------------------------------------------------ deployments

    public Optional<DeploymentRow> deployment(String id) {
        return sql.one(
                "SELECT " + DEPLOYMENT_COLUMNS + " FROM service_deployments WHERE id = ?", DeploymentRow::of, id);
    }

    public Optional<DeploymentRow> byIdempotencyKey(String serviceId, String key) {
        return sql.one(
                "SELECT " + DEPLOYMENT_COLUMNS
                        + " FROM service_deployments WHERE service_id = ? AND idempotency_key = ?",
                DeploymentRow::of,
                serviceId,
                key);
    }

    public List<DeploymentRow> deployments(String serviceId, int limit, int offset) {
        return sql.list(
                "SELECT " + DEPLOYMENT_COLUMNS
                        + " FROM service_deployments WHERE service_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?",
                DeploymentRow::of,
                serviceId,
                limit,
                offset);
    }

    /** Every deployment of the service, newest first. */
    public List<DeploymentRow> deployments(String serviceId) {
        return sql.list(
                "SELECT " + DEPLOYMENT_COLUMNS + " FROM service_deployments WHERE service_id = ? ORDER BY seq DESC",
                DeploymentRow::of,
                serviceId);
    }

    public long countDeployments(String serviceId) {
        return sql.count("SELECT count(*) FROM service_deployments WHERE service_id = ?", serviceId);
    }

    public void insertDeployment(Connection c, DeploymentRow d) throws SQLException {
        Sql.update(
                c,
                "INSERT INTO service_deployments (id, service_id, seq, status, strategy, provider, artifact_kind, artifact_key, "
                        + "artifact_sha256, artifact_size, deploy_message, canary_percent, idempotency_key, request_hash) "
                        + "VALUES (?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM service_deployments WHERE service_id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                d.id(),
                d.serviceId(),
                d.serviceId(),
                d.status(),
                d.strategy(),
                d.provider(),
                d.artifactKind(),
                d.artifactKey(),
                d.artifactSha256(),
                d.artifactSize(),
                d.deployMessage(),
                d.canaryPercent(),
                d.idempotencyKey(),
                d.requestHash());
    }

    public void setStatus(Connection c, String deploymentId, String status) throws SQLException {
        Sql.update(c, "UPDATE service_deployments SET status = ? WHERE id = ?", status, deploymentId);
    }

    public long artifactUses(String key) {
        return sql.count("SELECT count(*) FROM service_deployments WHERE artifact_key = ?", key);
    }

    public List<String> artifactKeys(String serviceId) {
        return sql.list(
                "SELECT DISTINCT artifact_key FROM service_deployments WHERE service_id = ?",
                rs -> rs.getString(1),
                serviceId);
    }

    // ------------------------------------------------------------------ domains

    public List<Domain> domains(String serviceId) {
        return sql.list(
                "SELECT " + DOMAIN_COLUMNS + " FROM service_domains WHERE service_id = ? ORDER BY created_at, id",
                ServiceStore::domainOf,
                serviceId);
    }

    public Optional<Domain> domain(String id) {
        return sql.one("SELECT " + DOMAIN_COLUMNS + " FROM service_domains WHERE id = ?", ServiceStore::domainOf, id);
    }

    public List<Domain> verifiedDomains() {
        return sql.list(
                "SELECT " + DOMAIN_COLUMNS + " FROM service_domains WHERE status = 'verified'", ServiceStore::domainOf);
    }

    /** @throws ServiceDomains.AlreadyAdded when the service has the domain already */
    public Domain addDomain(String id, String serviceId, String domain, String token) {
        try {
            return sql.one(
                            "INSERT INTO service_domains (id, service_id, domain, token) VALUES (?, ?, ?, ?) RETURNING "
                                    + DOMAIN_COLUMNS,
                            ServiceStore::domainOf,
                            id,
                            serviceId,
                            domain,
                            token)
                    .orElseThrow();
        } catch (Sql.Conflict e) {
            throw new ServiceDomains.AlreadyAdded(domain);
        }
    }

    /** Whether another service has verified {@code domain}. */
    public boolean verifiedElsewhere(String domain, String serviceId) {
        return sql.count(
                        "SELECT count(*) FROM service_domains WHERE domain = ? AND status = 'verified' AND service_id <> ?",
                        domain,
                        serviceId)
                > 0;
    }

    /**
     * Records a check; empty when the domain is gone.
     *
     * @throws ServiceDomains.VerifiedElsewhere when it verified a domain another service verified meanwhile
     */
    public Optional<Domain> checked(String id, String domain, boolean verified, String by, String lastCheck) {
        try {
            return sql.one(
                    "UPDATE service_domains SET status = CASE WHEN ? THEN 'verified' ELSE status END, "
                            + "verified_by = CASE WHEN ? THEN ? ELSE verified_by END, verified_at = CASE WHEN ? THEN now() ELSE verified_at END, "
                            + "last_check = ? WHERE id = ? RETURNING " + DOMAIN_COLUMNS,
                    ServiceStore::domainOf,
                    verified,
                    verified,
                    by,
                    verified,
                    lastCheck,
                    id);
        } catch (Sql.Conflict e) {
            throw new ServiceDomains.VerifiedElsewhere(domain);
        }
    }

    public boolean deleteDomain(String id) {
        return sql.update("DELETE FROM service_domains WHERE id = ?", id) == 1;
    }
}
