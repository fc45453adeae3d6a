package dev.atrium.database.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.postgresql.copy.CopyOut;

/**
 * Copies one PostgreSQL database into an empty one of a newer server, as {@code pg_dump | psql} would: the embedded
 * binaries carry neither pg_dump nor pg_upgrade, so the definitions are read from the old server's catalog through its
 * own {@code pg_get_*def} functions and the rows streamed with {@code COPY}.
 * <p>
 * It copies what Atrium's schemas are made of (schemas, extensions, sequences, functions and procedures, tables with
 * defaults, identity and generated columns, constraints, indexes, triggers) and refuses, before writing anything, a
 * database holding a kind it does not copy (a view, a type of its own, a rule, a policy, a large object, inheritance,
 * a role besides {@code postgres}), naming it: an upgrade that silently dropped it would lose data. Rows are loaded
 * before the indexes, constraints and triggers are made, so no trigger fires twice for the same row and a foreign key
 * is checked once; each table's row count is compared at the end.
 */
final class LogicalCopy {

    /** Schemas of the server's own, never copied. */
    private static final String USER_SCHEMA = "n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'";
    /** Objects an extension made, which {@code CREATE EXTENSION} makes again. */
    private final Connection from;

    private final Connection to;

    /**
     * @param from a connection to the database copied (read in one snapshot)
     * @param to   a connection to the empty database it is copied into (written in one transaction)
     */
    LogicalCopy(Connection from, Connection to) {
        this.from = from;
        this.to = to;
    }

    /** Refuses a database with what this copy does not carry; {@code what} names the database in the message. */
    void refuseWhatIsNotCopied(String what) throws SQLException {
        try (Statement s = from.createStatement()) {
            s.execute("SET search_path = ''");
        }
        List<String> found = new ArrayList<>();
        found.addAll(names("SELECT c.oid::regclass::text || ' (' || CASE c.relkind WHEN 'v' THEN 'a view' WHEN 'm' THEN"
                + " 'a materialized view' WHEN 'p' THEN 'a partitioned table' WHEN 'f' THEN 'a foreign table' ELSE"
                + " 'a composite type' END || ')' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE "
                + USER_SCHEMA + " AND c.relkind IN ('v', 'm', 'p', 'f', 'c') AND " + member("c.oid", "pg_class")));
        found.addAll(names("SELECT format_type(t.oid, NULL) || ' (a type)' FROM pg_type t JOIN pg_namespace n ON"
                + " n.oid = t.typnamespace WHERE " + USER_SCHEMA + " AND t.typtype IN ('e', 'd', 'r', 'm') AND "
                + member("t.oid", "pg_type")));
        found.addAll(names("SELECT inhrelid::regclass::text || ' (inherits ' || inhparent::regclass::text || ')'"
                + " FROM pg_inherits"));
        found.addAll(names("SELECT r.rulename || ' on ' || r.ev_class::regclass::text || ' (a rule)' FROM pg_rewrite r"
                + " JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace WHERE "
                + USER_SCHEMA + " AND c.relkind = 'r'"));
        found.addAll(names("SELECT polname || ' on ' || polrelid::regclass::text || ' (a row security policy)'"
                + " FROM pg_policy"));
        found.addAll(names("SELECT p.oid::regprocedure::text || ' (an aggregate or window function)' FROM pg_proc p"
                + " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE " + USER_SCHEMA + " AND p.prokind IN ('a', 'w')"
                + " AND " + member("p.oid", "pg_proc")));
        found.addAll(names("SELECT count(*) || ' large object(s)' FROM pg_largeobject_metadata HAVING count(*) > 0"));
        found.addAll(
                names("SELECT rolname || ' (a role)' FROM pg_roles WHERE rolname !~ '^pg_' AND rolname <> 'postgres'"));
        found.addAll(names("SELECT spcname || ' (a tablespace)' FROM pg_tablespace WHERE spcname NOT IN"
                + " ('pg_default', 'pg_global')"));
        found.addAll(names("SELECT evtname || ' (an event trigger)' FROM pg_event_trigger"));
        found.addAll(names("SELECT pubname || ' (a publication)' FROM pg_publication"));
        if (!found.isEmpty()) {
            throw new SQLException(what + " holds what the upgrade does not copy: " + String.join(", ", found));
        }
    }

    /** Copies everything into {@code to}, committing once; returns how many rows were copied. */
    long copy() throws SQLException {
        from.setAutoCommit(false);
        try (Statement s = from.createStatement()) {
            s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
            // every name the catalog functions print is then schema-qualified
            s.execute("SET search_path = ''");
        }
        to.setAutoCommit(false);
        try (Statement s = to.createStatement()) {
            s.execute("SET search_path = ''");
            // a function's body may name tables made after it
            s.execute("SET check_function_bodies = off");
        }
        try {
            long rows = copyInOneTransaction();
            to.commit();
            return rows;
        } catch (SQLException | RuntimeException e) {
            to.rollback();
            throw e;
        } finally {
            from.rollback();
        }
    }

    private long copyInOneTransaction() throws SQLException {
        for (String schema : names("SELECT quote_ident(n.nspname) FROM pg_namespace n WHERE " + USER_SCHEMA + " AND "
                + member("n.oid", "pg_namespace"))) {
            execute("CREATE SCHEMA IF NOT EXISTS " + schema);
        }
        for (String extension : names("SELECT 'CREATE EXTENSION IF NOT EXISTS ' || quote_ident(x.extname) || ' WITH"
                + " SCHEMA ' || quote_ident(n.nspname) FROM pg_extension x JOIN pg_namespace n ON n.oid ="
                + " x.extnamespace WHERE x.extname <> 'plpgsql'")) {
            execute(extension);
        }
        // sequences that are not a column's identity: those come with their table
        List<String> sequences = names("SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid ="
                + " c.relnamespace WHERE c.relkind = 'S' AND " + USER_SCHEMA + " AND " + member("c.oid", "pg_class")
                + " AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.classid = 'pg_class'::regclass"
                + " AND d.deptype = 'i') ORDER BY 1");
        for (String sequence : sequences) {
            execute("CREATE SEQUENCE " + sequence + " " + sequenceOptions(sequence));
        }
        for (String function : names("SELECT pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid ="
                + " p.pronamespace WHERE " + USER_SCHEMA + " AND p.prokind IN ('f', 'p') AND "
                + member("p.oid", "pg_proc")
                + " ORDER BY p.oid")) {
            execute(function);
        }
        List<Table> tables = tables();
        for (Table table : tables) {
            execute(table.definition());
        }
        for (String owned : names("SELECT 'ALTER SEQUENCE ' || d.objid::regclass::text || ' OWNED BY ' ||"
                + " d.refobjid::regclass::text || '.' || quote_ident(a.attname) FROM pg_depend d JOIN pg_class s ON"
                + " s.oid = d.objid AND s.relkind = 'S' JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum ="
                + " d.refobjsubid JOIN pg_namespace n ON n.oid = s.relnamespace WHERE d.classid = 'pg_class'::regclass"
                + " AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'a' AND " + USER_SCHEMA)) {
            execute(owned);
        }
        long rows = 0;
        for (Table table : tables) {
            rows += copyRows(table);
        }
        for (String constraint : names("SELECT 'ALTER TABLE ' || k.conrelid::regclass::text || ' ADD CONSTRAINT ' ||"
                + " quote_ident(k.conname) || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_class c ON"
                + " c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE " + USER_SCHEMA
                + " AND c.relkind = 'r' AND k.contype IN ('p', 'u', 'x', 'c', 'f') AND " + member("c.oid", "pg_class")
                // keys first: a foreign key needs the key it references
                + " ORDER BY CASE k.contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 WHEN 'x' THEN 2 WHEN 'c' THEN 3 ELSE 4 END,"
                + " k.oid")) {
            execute(constraint);
        }
        for (String index : names("SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid ="
                + " i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE " + USER_SCHEMA
                + " AND c.relkind = 'r'"
                + " AND " + member("c.oid", "pg_class") + " AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE"
                + " k.conindid = i.indexrelid AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x'))"
                + " ORDER BY i.indexrelid")) {
            execute(index);
        }
        for (String sequence : sequences) {
            setValue(sequence, sequence);
        }
        for (Table table : tables) {
            for (String identity : table.identities()) {
                setValue(
                        "pg_get_serial_sequence('" + table.name().replace("'", "''") + "', '"
                                + identity.replace("'", "''") + "')::regclass",
                        null);
            }
        }
        for (String trigger : names("SELECT pg_get_triggerdef(t.oid) || CASE t.tgenabled WHEN 'D' THEN"
                + " '; ALTER TABLE ' || c.oid::regclass::text || ' DISABLE TRIGGER ' || quote_ident(t.tgname) ELSE '' END"
                + " FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE " + USER_SCHEMA + " AND NOT t.tgisinternal AND " + member("c.oid", "pg_class")
                + " ORDER BY t.oid")) {
            execute(trigger);
        }
        for (Table table : tables) {
            long before = count(from, table.name());
            long after = count(to, table.name());
            if (before != after) {
                throw new SQLException(table.name() + " has " + after + " rows after the copy, " + before + " before");
            }
        }
        return rows;
    }

    /** A table to copy: its name, its definition without keys or indexes, the columns its rows carry. */
    private record Table(String name, String definition, List<String> columns, List<String> identities) {}

    private List<Table> tables() throws SQLException {
        List<Table> tables = new ArrayList<>();
        List<String[]> heads = rows(
                "SELECT c.oid::text, c.oid::regclass::text, (c.relpersistence = 'u')::text, coalesce("
                        + "array_to_string(c.reloptions, ', '), '') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                        + " WHERE " + USER_SCHEMA + " AND c.relkind = 'r' AND " + member("c.oid", "pg_class")
                        + " ORDER BY c.oid",
                4);
        for (String[] head : heads) {
            List<String> columns = new ArrayList<>();
            List<String> loaded = new ArrayList<>();
            List<String> identities = new ArrayList<>();
            for (String[] c : rows(
                    "SELECT quote_ident(a.attname), format_type(a.atttypid, a.atttypmod), a.attnotnull::text,"
                            + " a.attidentity::text, a.attgenerated::text, pg_get_expr(d.adbin, d.adrelid), CASE WHEN a.attcollation"
                            + " <> 0 AND a.attcollation <> t.typcollation THEN quote_ident(cn.nspname) || '.' ||"
                            + " quote_ident(co.collname) END, a.attname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid"
                            + " LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum LEFT JOIN pg_collation co"
                            + " ON co.oid = a.attcollation LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace WHERE"
                            + " a.attrelid = " + head[0] + " AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                    8)) {
                StringBuilder column = new StringBuilder(c[0]).append(' ').append(c[1]);
                if (c[6] != null) {
                    column.append(" COLLATE ").append(c[6]);
                }
                if ("s".equals(c[4])) {
                    column.append(" GENERATED ALWAYS AS (").append(c[5]).append(") STORED");
                } else {
                    loaded.add(c[0]);
                    if (!c[3].isEmpty()) {
                        String sequence = first("SELECT pg_get_serial_sequence('" + head[1].replace("'", "''") + "', '"
                                + c[7].replace("'", "''") + "')");
                        column.append(" GENERATED ")
                                .append("a".equals(c[3]) ? "ALWAYS" : "BY DEFAULT")
                                // an identity's sequence takes the column's type
                                .append(" AS IDENTITY (")
                                .append(sequenceOptions(sequence).replaceFirst("^AS \\S+ ", ""))
                                .append(')');
                        identities.add(c[7]);
                    } else if (c[5] != null) {
                        column.append(" DEFAULT ").append(c[5]);
                    }
                }
                if ("true".equals(c[2])) {
                    column.append(" NOT NULL");
                }
                columns.add(column.toString());
            }
            String definition = "CREATE " + ("true".equals(head[2]) ? "UNLOGGED " : "") + "TABLE " + head[1] + " ("
                    + String.join(", ", columns) + ")" + (head[3].isEmpty() ? "" : " WITH (" + head[3] + ")");
            tables.add(new Table(head[1], definition, loaded, identities));
        }
        return tables;
    }

    private String sequenceOptions(String sequence) throws SQLException {
        String[] o = rows(
                        "SELECT format_type(s.seqtypid, NULL), s.seqincrement::text, s.seqmin::text, s.seqmax::text,"
                                + " s.seqstart::text, s.seqcache::text, s.seqcycle::text FROM pg_sequence s WHERE s.seqrelid = '"
                                + sequence.replace("'", "''") + "'::regclass",
                        7)
                .get(0);
        return "AS " + o[0] + " INCREMENT BY " + o[1] + " MINVALUE " + o[2] + " MAXVALUE " + o[3] + " START WITH "
                + o[4] + " CACHE " + o[5] + ("true".equals(o[6]) ? " CYCLE" : " NO CYCLE");
    }

    /**
     * Gives the new sequence the old one's state. {@code target} is an expression for the new sequence's regclass;
     * {@code source}, when given, names the old one (else the same expression is evaluated on the old server).
     */
    private void setValue(String target, String source) throws SQLException {
        String oldSequence = source != null ? source : first("SELECT (" + target + ")::text");
        if (oldSequence == null) {
            return;
        }
        String[] state = rows("SELECT last_value::text, is_called::text FROM " + oldSequence, 2)
                .get(0);
        String into = source != null ? "'" + source.replace("'", "''") + "'::regclass" : target;
        try (Statement s = to.createStatement()) {
            s.execute("SELECT pg_catalog.setval(" + into + ", " + state[0] + ", " + state[1] + ")");
        }
    }

    private long copyRows(Table table) throws SQLException {
        if (table.columns().isEmpty()) {
            return 0;
        }
        String columns = " (" + String.join(", ", table.columns()) + ")";
        CopyOut out =
                from.unwrap(PGConnection.class).getCopyAPI().copyOut("COPY " + table.name() + columns + " TO STDOUT");
        CopyIn in = null;
        try {
            in = to.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY " + table.name() + columns + " FROM STDIN");
            for (byte[] chunk = out.readFromCopy(); chunk != null; chunk = out.readFromCopy()) {
                in.writeToCopy(chunk, 0, chunk.length);
            }
            return in.endCopy();
        } finally {
            if (in != null && in.isActive()) {
                in.cancelCopy();
            }
            if (out.isActive()) {
                out.cancelCopy();
            }
        }
    }

    private static long count(Connection c, String table) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT count(*) FROM " + table)) {
            r.next();
            return r.getLong(1);
        }
    }

    private void execute(String sql) throws SQLException {
        try (Statement s = to.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new SQLException(e.getMessage() + " (in: " + abbreviated(sql) + ")", e.getSQLState(), e);
        }
    }

    private static String abbreviated(String sql) {
        return sql.length() <= 200 ? sql : sql.substring(0, 200) + "…";
    }

    private String first(String sql) throws SQLException {
        List<String> all = names(sql);
        return all.isEmpty() ? null : all.get(0);
    }

    private List<String> names(String sql) throws SQLException {
        return rows(sql, 1).stream().map(r -> r[0]).toList();
    }

    private List<String[]> rows(String sql, int width) throws SQLException {
        return query(from, sql, r -> {
            String[] row = new String[width];
            for (int i = 0; i < width; i++) {
                try {
                    row[i] = r.getString(i + 1);
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }
            return row;
        });
    }

    private static <T> List<T> query(Connection c, String sql, Function<ResultSet, T> row) throws SQLException {
        List<T> all = new ArrayList<>();
        try (PreparedStatement s = c.prepareStatement(sql);
                ResultSet r = s.executeQuery()) {
            while (r.next()) {
                all.add(row.apply(r));
            }
        }
        return all;
    }

    private static String member(String oid, String catalog) {
        return String.format(
                "NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.objid = %s AND e.classid = '%s'::regclass AND e.deptype = 'e')",
                oid, catalog);
    }
}
