package dev.atrium.kernel.internal.audit;

import dev.atrium.kernel.api.AuditLog;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The audit log in table {@code audit_log}: written by the admin routes and the identity bundle, read by the operator. */
@Component(service = {AuditLog.class, KernelAuditLog.class})
public class KernelAuditLog implements AuditLog {

    private static final Logger LOG = LoggerFactory.getLogger(KernelAuditLog.class);
    /** Longest text kept in a column: an entry states facts, it is no place for a payload. */
    private static final int MAX_TEXT = 500;

    private final Sql sql;

    @Activate
    public KernelAuditLog(@Reference DataSource dataSource, @Reference SchemaMigrations migrated) {
        this.sql = new Sql(dataSource);
    }

    @Override
    public void record(String actor, String action, String target, String detail) {
        insert(actor, action, target, null, detail);
    }

    /** An entry about Principal {@code principalId} (kept in the entry when the Principal's row changes or goes). */
    public void recordAbout(String actor, String action, String target, String principalId, String detail) {
        insert(actor, action, target, principalId, detail);
    }

    @Override
    public void signedIn(String principalId, String provider) {
        try {
            String username = sql.one(
                            "UPDATE principals SET last_sign_in_at = now() WHERE id = ? RETURNING username",
                            rs -> rs.getString(1),
                            principalId)
                    .orElse(null);
            insert(username == null ? principalId : username, "sign_in", username, principalId, provider);
        } catch (RuntimeException e) {
            LOG.warn("could not record a sign-in of {}: {}", principalId, e.getMessage());
        }
    }

    private void insert(String actor, String action, String target, String principalId, String detail) {
        try {
            sql.update(
                    "INSERT INTO audit_log (id, actor, action, target, principal_id, detail) VALUES (?, ?, ?, ?, ?, ?)",
                    Ids.id("aud"),
                    clip(actor == null ? "unknown" : actor),
                    clip(action),
                    clip(target),
                    principalId,
                    clip(detail));
        } catch (RuntimeException e) {
            // the action itself happened; a lost entry must not turn it into an error
            LOG.warn("could not record audit entry {} {} {}: {}", actor, action, target, e.getMessage());
        }
    }

    private static String clip(String s) {
        if (s == null) {
            return null;
        }
        String clean = NulText.clean(s);
        return clean.length() > MAX_TEXT ? clean.substring(0, MAX_TEXT) : clean;
    }

    /** One entry as the API answers it. */
    public record Entry(
            String id, Instant at, String actor, String action, String target, String principalId, String detail) {
        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("at", at.toString());
            m.put("actor", actor);
            m.put("action", action);
            m.put("target", target);
            m.put("principal_id", principalId);
            m.put("detail", detail);
            return m;
        }
    }

    /** A page of entries and the cursor of the next one (null on the last). */
    public record Page(List<Entry> entries, String nextCursor) {}

    /** Entries newest first, after {@code cursor}, of {@code actor} and {@code action} when given. */
    public Page list(String actor, String action, KeysetCursor cursor, int limit) {
        StringBuilder where = new StringBuilder(" WHERE true");
        List<Object> args = new ArrayList<>();
        if (actor != null) {
            where.append(" AND actor = ?");
            args.add(actor);
        }
        if (action != null) {
            where.append(" AND action = ?");
            args.add(action);
        }
        if (cursor != null) {
            where.append(" AND (at, id) < (?, ?)");
            args.add(cursor.at());
            args.add(cursor.id());
        }
        args.add(limit + 1);
        List<Entry> rows = sql.list(
                "SELECT id, at, actor, action, target, principal_id, detail FROM audit_log" + where
                        + " ORDER BY at DESC, id DESC LIMIT ?",
                rs -> new Entry(
                        rs.getString("id"),
                        Sql.instant(rs, "at"),
                        rs.getString("actor"),
                        rs.getString("action"),
                        rs.getString("target"),
                        rs.getString("principal_id"),
                        rs.getString("detail")),
                args.toArray());
        String next = null;
        if (rows.size() > limit) {
            rows = rows.subList(0, limit);
            Entry last = rows.get(limit - 1);
            next = new KeysetCursor(last.at(), last.id()).encode();
        }
        return new Page(rows, next);
    }
}
