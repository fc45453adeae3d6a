package dev.atrium.kernel.internal.db;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies each bundle's {@code /db/migration/V<n>__*.sql} files once, in order. The kernel's own schema is
 * migrated on activation, so every kernel component that needs it references this service.
 */
@Component(service = SchemaMigrations.class)
public class SchemaMigrator implements SchemaMigrations {

    private static final Logger LOG = LoggerFactory.getLogger(SchemaMigrator.class);
    private static final Pattern NAME = Pattern.compile("V(\\d+)__[\\w.-]+\\.sql");
    /** Serialises migrations across instances that start together on one database. */
    private static final long LOCK_KEY = 0x41747269756dL;

    private final Sql sql;

    @Activate
    public SchemaMigrator(@Reference DataSource dataSource, BundleContext context) {
        this.sql = new Sql(dataSource);
        apply(context.getBundle());
    }

    @Override
    public int apply(Bundle bundle) {
        List<Migration> migrations = find(bundle);
        String owner = bundle.getSymbolicName();
        try {
            return sql.tx(c -> {
                Sql.exec(c, "SELECT pg_advisory_xact_lock(?)", LOCK_KEY);
                Sql.exec(
                        c,
                        "CREATE TABLE IF NOT EXISTS schema_migrations (bundle text NOT NULL, version int NOT NULL, "
                                + "script text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (bundle, version))");
                Set<Integer> applied = Set.copyOf(Sql.list(
                        c, "SELECT version FROM schema_migrations WHERE bundle = ?", rs -> rs.getInt(1), owner));
                int count = 0;
                for (Migration m : migrations) {
                    if (applied.contains(m.version)) {
                        continue;
                    }
                    try (Statement s =
                            c.createStatement()) { // a script is several statements, which a prepared one cannot be
                        s.execute(m.sql);
                    }
                    Sql.update(
                            c,
                            "INSERT INTO schema_migrations (bundle, version, script) VALUES (?, ?, ?)",
                            owner,
                            m.version,
                            m.name);
                    count++;
                    LOG.info("applied migration {} of {}", m.name, owner);
                }
                return count;
            });
        } catch (RuntimeException e) {
            throw new IllegalStateException("migrations of " + owner + " failed: " + e.getMessage(), e);
        }
    }

    private static List<Migration> find(Bundle bundle) {
        List<Migration> out = new ArrayList<>();
        Enumeration<URL> entries = bundle.findEntries("db/migration", "V*.sql", false);
        for (URL url : entries == null ? List.<URL>of() : Collections.list(entries)) {
            String file = url.getPath().substring(url.getPath().lastIndexOf('/') + 1);
            Matcher m = NAME.matcher(file);
            if (!m.matches()) {
                throw new IllegalStateException("migration file name must be V<n>__<what>.sql: " + file);
            }
            try (InputStream in = url.openStream()) {
                out.add(new Migration(
                        Integer.parseInt(m.group(1)), file, new String(in.readAllBytes(), StandardCharsets.UTF_8)));
            } catch (IOException e) {
                throw new IllegalStateException("cannot read " + file, e);
            }
        }
        out.sort(Comparator.comparingInt(Migration::version));
        for (int i = 1; i < out.size(); i++) {
            if (out.get(i).version == out.get(i - 1).version) {
                throw new IllegalStateException(
                        "two migrations with version " + out.get(i).version + " in " + bundle.getSymbolicName());
            }
        }
        return out;
    }

    private record Migration(int version, String name, String sql) {}
}
