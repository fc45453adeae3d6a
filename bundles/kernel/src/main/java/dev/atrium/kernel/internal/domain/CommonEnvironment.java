package dev.atrium.kernel.internal.domain;

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
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.api.WorkspaceEnvironment;
import dev.atrium.kernel.api.WorkspaceEnvironmentListener;

/**
 * A workspace's common environment variables, which its services link to. Secret values are never read back by the
 * API; the code the workspace runs gets them through {@link WorkspaceEnvironment}.
 */
@Component(service = { CommonEnvironment.class, WorkspaceEnvironment.class })
public class CommonEnvironment implements WorkspaceEnvironment {

    private static final Logger LOG = LoggerFactory.getLogger(CommonEnvironment.class);
    private static final String LISTENERS = "Listener";

    private final Sql sql;
    private final ComponentContext context;
    /** By reference, got only when a change is told: a listener (services) needs this component, so no cycle at activation. */
    private final List<ServiceReference<WorkspaceEnvironmentListener>> listeners = new CopyOnWriteArrayList<>();

    @Activate
    public CommonEnvironment(ComponentContext context, @Reference DataSource dataSource, @Reference SchemaMigrations migrated) {
        this.context = context;
        this.sql = new Sql(dataSource);
    }

    @Reference(name = LISTENERS, service = WorkspaceEnvironmentListener.class, cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
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
        for (Map.Entry<String, String> e : sql.list("SELECT name, value FROM workspace_common_env WHERE workspace_id = ?",
                rs -> Map.entry(rs.getString(1), rs.getString(2)), space.id())) {
            all.put(e.getKey(), e.getValue());
        }
        for (String n : names) {
            String v = all.get(n);
            if (v != null) {
                found.put(n, v);
            }
        }
        return found;
    }

    private void changed(String workspaceId, String name) {
        for (ServiceReference<WorkspaceEnvironmentListener> ref : listeners) {
            WorkspaceEnvironmentListener l = context.locateService(LISTENERS, ref);
            if (l == null) {
                continue;
            }
            try {
                l.commonVariableChanged(workspaceId, name);
            } catch (RuntimeException e) {
                LOG.warn("a common environment listener failed for {} of workspace {}: {}", name, workspaceId, e.toString());
            }
        }
    }

    public record Variable(String name, String value, boolean secret, Instant createdAt, Instant updatedAt) {
        static Variable of(ResultSet rs) throws SQLException {
            return new Variable(rs.getString("name"), rs.getString("value"), rs.getBoolean("secret"),
                    Sql.instant(rs, "created_at"), Sql.instant(rs, "updated_at"));
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
        return sql.list("SELECT name, value, secret, created_at, updated_at FROM workspace_common_env WHERE workspace_id = ? "
                + "ORDER BY name", Variable::of, workspaceId);
    }

    public Variable put(String workspaceId, String name, String value, boolean secret) {
        Variable v = sql.one("INSERT INTO workspace_common_env (workspace_id, name, value, secret) VALUES (?, ?, ?, ?) "
                + "ON CONFLICT (workspace_id, name) DO UPDATE SET value = excluded.value, secret = excluded.secret, updated_at = now() "
                + "RETURNING name, value, secret, created_at, updated_at", Variable::of, workspaceId, name, value, secret).orElseThrow();
        changed(workspaceId, name);
        return v;
    }

    public boolean delete(String workspaceId, String name) {
        boolean deleted = sql.update("DELETE FROM workspace_common_env WHERE workspace_id = ? AND name = ?", workspaceId, name) == 1;
        if (deleted) {
            changed(workspaceId, name);
        }
        return deleted;
    }
}
