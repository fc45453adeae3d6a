package dev.atrium.kernel.internal.domain;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sealer;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.api.WorkspaceEnvironment;
import dev.atrium.kernel.api.WorkspaceEnvironmentListener;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A workspace's common environment variables, which its services link to. Secret values are sealed at rest under
 * {@code <data>/keys/kernel/common-env.key} and never read back by the API; the code the workspace runs gets them
 * through {@link WorkspaceEnvironment}.
 */
@Component(
        service = {CommonEnvironment.class, WorkspaceEnvironment.class},
        configurationPid = "dev.atrium.kernel.commonenv",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = CommonEnvironment.Config.class)
public class CommonEnvironment implements WorkspaceEnvironment {

    @ObjectClassDefinition(name = "Atrium common environment")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "The data directory (--data, ATRIUM_DATA) whose keys/kernel/common-env.key seals secret values")
        String dataDirectory() default "data";
    }

    private static final Logger LOG = LoggerFactory.getLogger(CommonEnvironment.class);
    private static final String LISTENERS = "Listener";

    private final Sql sql;
    private final Sealer sealer;
    private final ComponentContext context;
    /** By reference, got only when a change is told: a listener (services) needs this component, so no cycle at activation. */
    private final List<ServiceReference<WorkspaceEnvironmentListener>> listeners = new CopyOnWriteArrayList<>();

    @Activate
    public CommonEnvironment(
            Config config,
            ComponentContext context,
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrated)
            throws IOException {
        this.context = context;
        this.sql = new Sql(dataSource);
        this.sealer = Sealer.withKeyFile(
                Path.of(config.dataDirectory())
                        .toAbsolutePath()
                        .resolve("keys")
                        .resolve("kernel")
                        .resolve("common-env.key"),
                "common-env1");
        sealClearSecrets();
    }

    /** Secret values written before they were sealed: each is sealed once, unless it changed meanwhile. */
    private void sealClearSecrets() {
        for (Map.Entry<String, Map.Entry<String, String>> row : sql.list(
                "SELECT workspace_id, name, value FROM workspace_common_env WHERE secret AND value IS NOT NULL",
                rs -> Map.entry(rs.getString(1), Map.entry(rs.getString(2), rs.getString(3))))) {
            String workspaceId = row.getKey();
            String name = row.getValue().getKey();
            String value = row.getValue().getValue();
            Sealer.Sealed sealed = sealer.seal(value, aad(workspaceId, name));
            sql.update(
                    "UPDATE workspace_common_env SET value = NULL, key_id = ?, nonce = ?, ciphertext = ? "
                            + "WHERE workspace_id = ? AND name = ? AND secret AND value = ?",
                    sealed.keyId(),
                    sealed.nonce(),
                    sealed.ciphertext(),
                    workspaceId,
                    name,
                    value);
        }
    }

    private static String aad(String workspaceId, String name) {
        return workspaceId + "\n" + name;
    }

    @Reference(
            name = LISTENERS,
            service = WorkspaceEnvironmentListener.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addListener(ServiceReference<WorkspaceEnvironmentListener> listener) {
        listeners.add(listener);
    }

    void removeListener(ServiceReference<WorkspaceEnvironmentListener> listener) {
        listeners.remove(listener);
    }

    @Override
    public Map<String, String> values(SpaceRef space, Collection<String> names) {
        Map<String, String> found = new LinkedHashMap<>();
        if (space == null || names.isEmpty()) {
            return found;
        }
        Map<String, String> all = new LinkedHashMap<>();
        for (Row r : sql.list(
                "SELECT name, value, key_id, nonce, ciphertext FROM workspace_common_env WHERE workspace_id = ?",
                rs -> new Row(
                        rs.getString(1),
                        rs.getString(2),
                        new Sealer.Sealed(rs.getString(3), rs.getBytes(4), rs.getBytes(5))),
                space.id())) {
            if (names.contains(r.name())) { // only the secrets asked for are opened
                all.put(r.name(), r.value() != null ? r.value() : sealer.open(r.sealed(), aad(space.id(), r.name())));
            }
        }
        for (String n : names) {
            String v = all.get(n);
            if (v != null) {
                found.put(n, v);
            }
        }
        return found;
    }

    private record Row(String name, String value, Sealer.Sealed sealed) {}

    private void changed(String workspaceId, String name) {
        for (ServiceReference<WorkspaceEnvironmentListener> ref : listeners) {
            WorkspaceEnvironmentListener l = context.locateService(LISTENERS, ref);
            if (l == null) {
                continue;
            }
            try {
                l.commonVariableChanged(workspaceId, name);
            } catch (RuntimeException e) {
                LOG.warn(
                        "a common environment listener failed for {} of workspace {}: {}",
                        name,
                        workspaceId,
                        e.toString());
            }
        }
    }

    public record Variable(String name, String value, boolean secret, Instant createdAt, Instant updatedAt) {
        /** A secret's value is not read: it is null here. */
        static Variable of(ResultSet rs) throws SQLException {
            boolean secret = rs.getBoolean("secret");
            return new Variable(
                    rs.getString("name"),
                    secret ? null : rs.getString("value"),
                    secret,
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"));
        }

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("value", secret ? null : value);
            m.put("secret", secret);
            m.put("created_at", createdAt.toString());
            m.put("updated_at", updatedAt.toString());
            return m;
        }
    }

    public List<Variable> list(String workspaceId) {
        return sql.list(
                "SELECT name, value, secret, created_at, updated_at FROM workspace_common_env WHERE workspace_id = ? "
                        + "ORDER BY name",
                Variable::of,
                workspaceId);
    }

    public Variable put(String workspaceId, String name, String value, boolean secret) {
        Sealer.Sealed sealed =
                secret ? sealer.seal(value, aad(workspaceId, name)) : new Sealer.Sealed(null, null, null);
        Variable v = sql.one(
                        "INSERT INTO workspace_common_env (workspace_id, name, value, secret, key_id, nonce, ciphertext) VALUES (?, ?, ?, ?, ?, ?, ?) "
                                + "ON CONFLICT (workspace_id, name) DO UPDATE SET value = excluded.value, secret = excluded.secret, key_id = excluded.key_id, "
                                + "nonce = excluded.nonce, ciphertext = excluded.ciphertext, updated_at = now() "
                                + "RETURNING name, value, secret, created_at, updated_at",
                        Variable::of,
                        workspaceId,
                        name,
                        secret ? null : value,
                        secret,
                        sealed.keyId(),
                        sealed.nonce(),
                        sealed.ciphertext())
                .orElseThrow();
        changed(workspaceId, name);
        return v;
    }

    public boolean delete(String workspaceId, String name) {
        boolean deleted =
                sql.update("DELETE FROM workspace_common_env WHERE workspace_id = ? AND name = ?", workspaceId, name)
                        == 1;
        if (deleted) {
            changed(workspaceId, name);
        }
        return deleted;
    }
}
