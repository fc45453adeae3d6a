package dev.atrium.resource.d1.internal;

import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.ConfigSchema;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import dev.atrium.resource.api.SqlFacet;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Component;
import org.sqlite.ProgressHandler;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteConnection;
import org.sqlite.SQLiteLimits;

/**
 * d1 resources: one SQLite database file per resource ({@code <resource directory>/db.sqlite}), one connection per
 * call. What a call may do is enforced by SQLite itself: a {@code read} call opens the file read-only (SQLite refuses
 * every write, writing PRAGMAs included, with SQLITE_READONLY) and sets {@code query_only}; every connection has
 * {@code SQLITE_LIMIT_ATTACHED = 0} (ATTACH and VACUUM INTO, which reach other files, fail inside SQLite); a progress
 * handler interrupts a statement past the time limit; results stop at a row limit. xerial's driver (3.53.4.0) exposes
 * no authorizer, no {@code sqlite3_stmt_readonly} and no {@code sqlite3_db_config}, and compiling a PRAGMA already
 * applies it (so "compile, then inspect" cannot be the check), so two rules are checked on the text before SQLite sees
 * it: one statement per call (the driver would silently run only the first), and only introspection PRAGMAs, also
 * behind {@code EXPLAIN} ({@link SqlText#pragmaName}); those run on a read-only connection. The files are 0600.
 */
@Component(service = ResourceProvider.class)
@ResourceProviderType(type = "d1", backend = "sqlite")
public class SqliteD1 implements ResourceProvider, SqlFacet {

    static final Set<String> READ_PRAGMAS =
            Set.of("table_info", "table_xinfo", "index_list", "index_info", "index_xinfo", "foreign_key_list");
    /** rw------- : a database is its resource's alone, not readable by other users of the machine. */
    static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

    private static final int SQLITE_READONLY = 8;
    private static final int SQLITE_INTERRUPT = 9;
    private static final int SQLITE_BUSY = 5;

    @Override
    public ConfigSchema configSchema() {
        return ConfigSchema.builder()
                .integer(
                        "max_rows",
                        "the most rows a query returns (the rest are cut, truncated: true)",
                        1,
                        10_000,
                        1_000)
                .integer("query_timeout_ms", "how long one statement may run before it is cancelled", 10, 60_000, 5_000)
                .build();
    }

    @Override
    public Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        try (Connection c = open(ctx, false)) {
            return Map.of("file", "db.sqlite");
        } catch (SQLException e) {
            throw ResourceException.unavailable("the database file could not be created", e);
        }
    }

    @Override
    public void update(ResourceContext ctx, Map<String, Object> newConfig) {
        // limits are read on every call
    }

    @Override
    public void deprovision(ResourceContext ctx) {
        // the file is in the resource's directory, which the core removes
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of("backend", "sqlite", "query", "/api/resources/" + ctx.resourceId() + "/sql/query");
    }

    @Override
    public Health health(ResourceContext ctx) {
        try (Connection c = open(ctx, true)) {
            return Health.ok();
        } catch (SQLException | ResourceException e) {
            return Health.failing("the database file cannot be opened");
        }
    }

    /**
     * The database file, created owner-only (0600) before SQLite opens it: SQLite would create it with the process
     * umask's mode (0644, readable by every local user), and the journal and WAL files it makes beside it take the
     * database file's mode. A file created before this rule is narrowed when next opened.
     */
    private static Path file(ResourceContext ctx) throws ResourceException {
        Path file = ctx.dataDirectory().resolve("db.sqlite");
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } catch (FileAlreadyExistsException e) {
            try {
                if (!Files.getPosixFilePermissions(file).equals(OWNER_ONLY)) {
                    Files.setPosixFilePermissions(file, OWNER_ONLY);
                }
            } catch (IOException io) {
                throw ResourceException.unavailable("the database file's permissions cannot be set", io);
            }
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: there are no mode bits to narrow
        } catch (IOException e) {
            throw ResourceException.unavailable("the database file could not be created", e);
        }
        return file;
    }

    /** A connection with SQLite's own limits; read-only unless the call may write. */
    static Connection open(ResourceContext ctx, boolean readOnly) throws SQLException, ResourceException {
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(readOnly);
        config.setBusyTimeout(2_000);
        config.enableLoadExtension(false);
        Connection c = config.createConnection("jdbc:sqlite:" + file(ctx));
        try {
            ((SQLiteConnection) c).setLimit(SQLiteLimits.SQLITE_LIMIT_ATTACHED, 0);
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA trusted_schema = OFF");
                if (readOnly) {
                    s.execute("PRAGMA query_only = ON");
                }
            }
            return c;
        } catch (SQLException e) {
            c.close();
            throw e;
        }
    }

    private static long config(ResourceContext ctx, String name, long dflt) {
        Object v = ctx.config().get(name);
        return v instanceof Number n ? n.longValue() : dflt;
    }

    @Override
    public List<TableInfo> tables(ResourceContext ctx) throws ResourceException {
        try (Connection c = open(ctx, true)) {
            List<String> names = new ArrayList<>();
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(
                            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")) {
                while (rs.next()) {
                    names.add(rs.getString(1));
                }
            }
            List<TableInfo> out = new ArrayList<>();
            for (String name : names) {
                try (Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT count(*) FROM " + quote(name))) {
                    out.add(new TableInfo(name, rs.next() ? rs.getLong(1) : 0));
                }
            }
            ctx.usage().record("rows_read", out.size());
            return out;
        } catch (SQLException e) {
            throw failure(e, ctx);
        }
    }

    @Override
    public SqlResult tableRows(ResourceContext ctx, String table, int limit, int offset) throws ResourceException {
        if (tables(ctx).stream().noneMatch(t -> t.name().equals(table))) {
            throw ResourceException.notFound("no table named '" + table + "'");
        }
        try (Connection c = open(ctx, true);
                PreparedStatement ps = c.prepareStatement("SELECT * FROM " + quote(table) + " LIMIT ? OFFSET ?")) {
            ps.setInt(1, limit);
            ps.setInt(2, offset);
            return rows(ctx, ps.executeQuery(), limit);
        } catch (SQLException e) {
            throw failure(e, ctx);
        }
    }

    @Override
    public SqlResult query(ResourceContext ctx, String sql, List<Object> params) throws ResourceException {
        SqlText.requireOneStatement(sql);
        String pragma = SqlText.pragmaName(sql);
        if (pragma != null && !READ_PRAGMAS.contains(pragma)) {
            throw new ResourceException(
                    ResourceException.Kind.BAD_INPUT,
                    "only the introspection PRAGMAs "
                            + String.join(", ", READ_PRAGMAS.stream().sorted().toList()) + " may be run");
        }
        boolean readOnly = pragma != null || !ctx.access().allows(Access.WRITE);
        long timeout = config(ctx, "query_timeout_ms", 5_000);
        try (Connection c = open(ctx, readOnly)) {
            long deadline = System.nanoTime() + timeout * 1_000_000;
            ProgressHandler.setHandler(c, 1_000, new ProgressHandler() {
                @Override
                protected int progress() {
                    return System.nanoTime() > deadline ? 1 : 0;
                }
            });
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                for (int i = 0; i < params.size(); i++) {
                    ps.setObject(i + 1, params.get(i));
                }
                int max = (int) config(ctx, "max_rows", 1_000);
                if (ps.execute()) {
                    return rows(ctx, ps.getResultSet(), max);
                }
                int changed = Math.max(0, ps.getUpdateCount());
                ctx.usage().record("rows_written", changed);
                return new SqlResult(List.of(), List.of(), changed, false);
            }
        } catch (SQLException e) {
            if (e.getErrorCode() == SQLITE_INTERRUPT) {
                throw ResourceException.badInput("the statement ran longer than " + timeout + " ms and was cancelled");
            }
            throw failure(e, ctx);
        }
    }

    private static SqlResult rows(ResourceContext ctx, ResultSet results, int max) throws SQLException {
        try (ResultSet rs = results) {
            ResultSetMetaData md = rs.getMetaData();
            List<String> columns = new ArrayList<>();
            for (int i = 1; i <= md.getColumnCount(); i++) {
                columns.add(md.getColumnLabel(i));
            }
            List<List<Object>> rows = new ArrayList<>();
            boolean truncated = false;
            while (rs.next()) {
                if (rows.size() == max) {
                    truncated = true;
                    break;
                }
                List<Object> row = new ArrayList<>(columns.size());
                for (int i = 1; i <= columns.size(); i++) {
                    Object v = rs.getObject(i);
                    row.add(v instanceof Integer n ? Long.valueOf(n) : v instanceof Float f ? Double.valueOf(f) : v);
                }
                rows.add(row);
            }
            ctx.usage().record("rows_read", rows.size());
            return new SqlResult(columns, rows, 0, truncated);
        }
    }

    @Override
    public void export(ResourceContext ctx, OutputStream out) throws ResourceException {
        try (Connection c = open(ctx, true)) {
            Writer w = new OutputStreamWriter(out, StandardCharsets.UTF_8);
            w.write("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n");
            List<String[]> schema = new ArrayList<>();
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(
                            "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                                    + " ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, name")) {
                while (rs.next()) {
                    schema.add(new String[] {rs.getString(1), rs.getString(2), rs.getString(3)});
                }
            }
            for (String[] entry : schema) {
                if (!entry[0].equals("table")) {
                    continue;
                }
                w.write(entry[2] + ";\n");
                try (Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT * FROM " + quote(entry[1]))) {
                    int n = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        StringBuilder sb = new StringBuilder("INSERT INTO ")
                                .append(quote(entry[1]))
                                .append(" VALUES(");
                        for (int i = 1; i <= n; i++) {
                            sb.append(i > 1 ? "," : "").append(literal(rs.getObject(i)));
                        }
                        w.write(sb.append(");\n").toString());
                    }
                }
            }
            for (String[] entry : schema) {
                if (!entry[0].equals("table")) {
                    w.write(entry[2] + ";\n");
                }
            }
            w.write("COMMIT;\n");
            w.flush();
        } catch (SQLException e) {
            throw failure(e, ctx);
        } catch (IOException e) {
            throw ResourceException.unavailable("the export could not be written", e);
        }
    }

    static String quote(String identifier) {
        return "\"" + identifier.replace("\"", "\"\"") + "\"";
    }

    static String literal(Object v) {
        if (v == null) {
            return "NULL";
        }
        if (v instanceof Number) {
            return v.toString();
        }
        if (v instanceof byte[] b) {
            return "X'" + HexFormat.of().formatHex(b) + "'";
        }
        return "'" + v.toString().replace("'", "''") + "'";
    }

    private static ResourceException failure(SQLException e, ResourceContext ctx) {
        int code = e.getErrorCode();
        String message = e.getMessage() == null ? "the statement failed" : e.getMessage();
        if (code == SQLITE_READONLY) {
            return new ResourceException(
                    ResourceException.Kind.FORBIDDEN,
                    "this call holds " + ctx.access().name().toLowerCase(Locale.ROOT)
                            + " access: the database is open read-only");
        }
        if (code == SQLITE_BUSY) {
            return ResourceException.unavailable("the database is busy; try again", e);
        }
        return ResourceException.badInput(message.replaceFirst("^\\[SQLITE_[A-Z_]+\\]\\s*", ""));
    }
}
