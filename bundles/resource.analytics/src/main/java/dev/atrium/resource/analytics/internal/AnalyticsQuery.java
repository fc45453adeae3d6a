package dev.atrium.resource.analytics.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.resource.api.ResourceException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The query dialect of analyticsEngine resources: a JSON object, never SQL. It is parsed here into a parameterised
 * PostgreSQL statement whose only identifiers come from this class (field names map to fixed column expressions, ORDER
 * BY uses select positions, aliases never reach the SQL) and whose every client value is a bind parameter.
 *
 * <pre>
 * {
 *   "select":   [ {"field": "blob1"}, {"field": "timestamp", "bucket": "hour", "as": "hour"},
 *                 {"fn": "count", "as": "n"}, {"fn": "sum", "field": "double1", "as": "total"} ],
 *   "from":     "2026-11-01T00:00:00Z",          (default: "to" minus one day)
 *   "to":       "2026-11-02T00:00:00Z",          (default: now; the span is at most maxRangeDays)
 *   "where":    [ {"field": "index1", "op": "=", "value": "customer-7"}, {"field": "double2", "op": ">", "value": 0.5},
 *                 {"field": "blob2", "op": "in", "value": ["GET", "HEAD"]} ],
 *   "group_by": ["blob1", "hour"],                (default: every non-aggregate column when there is an aggregate)
 *   "order_by": [ {"by": "total", "desc": true} ],
 *   "limit":    100                               (default 100, at most maxRows)
 * }
 * </pre>
 *
 * Fields: {@code timestamp}, {@code index1}, {@code blob1}…{@code blob20}, {@code double1}…{@code double20}.
 * Aggregates: {@code count} (no field), {@code sum avg min max} (a double field), {@code count_distinct} (any field).
 * Operators: {@code = != < <= > >= in}. Buckets of {@code timestamp}: {@code minute hour day week month}.
 */
final class AnalyticsQuery {

    static final ObjectMapper JSON = JsonMappers.create();
    static final int MAX_FIELDS = 20;
    private static final Pattern BLOB = Pattern.compile("blob([1-9]|1[0-9]|20)");
    private static final Pattern DOUBLE = Pattern.compile("double([1-9]|1[0-9]|20)");
    private static final Pattern ALIAS = Pattern.compile("[a-z_][a-z0-9_]{0,39}");
    private static final Set<String> KEYS = Set.of("select", "from", "to", "where", "group_by", "order_by", "limit");
    private static final Set<String> BUCKETS = Set.of("minute", "hour", "day", "week", "month");
    private static final Set<String> OPS = Set.of("=", "!=", "<", "<=", ">", ">=", "in");

    /** What a column yields, so the result can be read in the right Java type. */
    enum Kind {
        TEXT,
        NUMBER,
        COUNT,
        TIME
    }

    /** One output column. */
    record Column(String name, String expression, Kind kind, boolean aggregate) {}

    /** A parsed query: the statement, its parameters in order, and its columns. */
    record Plan(String sql, List<Object> params, List<Column> columns, int limit, Instant from, Instant to) {}

    private AnalyticsQuery() {}

    static Plan parse(String text, String resourceId, Instant now, int maxRows, int maxRangeDays)
            throws ResourceException {
        JsonNode q;
        try {
            q = JSON.readTree(text == null ? "" : text);
        } catch (JsonProcessingException e) {
            throw bad("the query is not JSON: " + e.getOriginalMessage());
        }
        if (q == null || !q.isObject()) {
            throw bad("the query is a JSON object with select, from, to, where, group_by, order_by and limit");
        }
        for (Iterator<String> it = q.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!KEYS.contains(key)) {
                throw bad("the query has an unknown key '" + key
                        + "'; known: select, from, to, where, group_by, order_by, limit");
            }
        }
        // time range
        Instant to = q.has("to") ? instant(q.get("to"), "to") : now;
        Instant from = q.has("from") ? instant(q.get("from"), "from") : to.minus(Duration.ofDays(1));
        if (!from.isBefore(to)) {
            throw bad("'from' must be before 'to'");
        }
        if (Duration.between(from, to).compareTo(Duration.ofDays(maxRangeDays)) > 0) {
            throw bad("the time range is at most " + maxRangeDays + " days");
        }
        // select
        JsonNode select = q.get("select");
        if (select == null || !select.isArray() || select.isEmpty() || select.size() > 2 * MAX_FIELDS) {
            throw bad("select is a list of 1 to " + 2 * MAX_FIELDS + " columns");
        }
        List<Column> columns = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (JsonNode item : select) {
            Column c = column(item);
            if (!names.add(c.name())) {
                throw bad("two columns are named '" + c.name() + "'; give one an \"as\"");
            }
            columns.add(c);
        }
        boolean aggregated = columns.stream().anyMatch(Column::aggregate);
        List<Object> params = new ArrayList<>();
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int i = 0; i < columns.size(); i++) {
            sql.append(i == 0 ? "" : ", ").append(columns.get(i).expression());
        }
        sql.append(" FROM resource_analytics_points WHERE resource_id = ? AND ts >= ? AND ts < ?");
        params.add(resourceId);
        params.add(java.sql.Timestamp.from(from));
        params.add(java.sql.Timestamp.from(to));
        // where
        JsonNode where = q.get("where");
        if (where != null && !where.isNull()) {
            if (!where.isArray() || where.size() > MAX_FIELDS) {
                throw bad("where is a list of at most " + MAX_FIELDS + " conditions, all of which must hold");
            }
            for (JsonNode cond : where) {
                condition(cond, sql, params);
            }
        }
        // group by
        JsonNode groupBy = q.get("group_by");
        List<Integer> groups = new ArrayList<>();
        if (groupBy != null && !groupBy.isNull()) {
            if (!groupBy.isArray()) {
                throw bad("group_by is a list of column names from select");
            }
            for (JsonNode g : groupBy) {
                int at = position(columns, g, "group_by");
                if (columns.get(at - 1).aggregate()) {
                    throw bad("group_by cannot name the aggregate '" + g.asText() + "'");
                }
                groups.add(at);
            }
            if (!aggregated && !groups.isEmpty()) {
                throw bad("group_by needs an aggregate in select (count, sum, avg, min, max, count_distinct)");
            }
        } else if (aggregated) {
            for (int i = 0; i < columns.size(); i++) {
                if (!columns.get(i).aggregate()) {
                    groups.add(i + 1);
                }
            }
        }
        if (aggregated) {
            for (int i = 0; i < columns.size(); i++) {
                if (!columns.get(i).aggregate() && !groups.contains(i + 1)) {
                    throw bad("'" + columns.get(i).name() + "' is neither an aggregate nor in group_by");
                }
            }
        }
        if (!groups.isEmpty()) {
            sql.append(" GROUP BY ");
            for (int i = 0; i < groups.size(); i++) {
                sql.append(i == 0 ? "" : ", ").append(groups.get(i));
            }
        }
        // order by
        JsonNode orderBy = q.get("order_by");
        if (orderBy != null && !orderBy.isNull()) {
            if (!orderBy.isArray() || orderBy.size() > columns.size()) {
                throw bad("order_by is a list of {\"by\": column, \"desc\": true|false}");
            }
            StringBuilder order = new StringBuilder();
            for (JsonNode o : orderBy) {
                if (!o.isObject() || !o.has("by")) {
                    throw bad("order_by is a list of {\"by\": column, \"desc\": true|false}");
                }
                int at = position(columns, o.get("by"), "order_by");
                boolean desc = o.has("desc") && o.get("desc").asBoolean(false);
                order.append(order.length() == 0 ? " ORDER BY " : ", ")
                        .append(at)
                        .append(desc ? " DESC NULLS LAST" : " ASC NULLS LAST");
            }
            sql.append(order);
        } else if (!aggregated) {
            sql.append(" ORDER BY ts DESC");
        }
        // limit
        int limit = 100;
        JsonNode l = q.get("limit");
        if (l != null && !l.isNull()) {
            if (!l.canConvertToInt() || !l.isIntegralNumber() || l.asInt() < 1 || l.asInt() > maxRows) {
                throw bad("limit is an integer from 1 to " + maxRows);
            }
            limit = l.asInt();
        }
        sql.append(" LIMIT ?");
        params.add(limit + 1); // one more tells whether it was truncated
        return new Plan(sql.toString(), params, columns, limit, from, to);
    }

    private static Column column(JsonNode item) throws ResourceException {
        if (!item.isObject()) {
            throw bad("each select item is {\"field\": …} or {\"fn\": …, \"field\": …}, with an optional \"as\"");
        }
        for (Iterator<String> it = item.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!Set.of("field", "fn", "as", "bucket").contains(k)) {
                throw bad("a select item has an unknown key '" + k + "'");
            }
        }
        String alias = null;
        if (item.has("as")) {
            alias = item.get("as").asText();
            if (!item.get("as").isTextual() || !ALIAS.matcher(alias).matches()) {
                throw bad("\"as\" is 1 to 40 of [a-z0-9_], not starting with a digit");
            }
        }
        String field = item.has("field") ? text(item.get("field"), "field") : null;
        if (item.has("fn")) {
            String fn = text(item.get("fn"), "fn");
            switch (fn) {
                case "count" -> {
                    if (field != null) {
                        throw bad(
                                "count takes no field (it counts data points); use count_distinct for distinct values");
                    }
                    return new Column(alias == null ? "count" : alias, "count(*)", Kind.COUNT, true);
                }
                case "count_distinct" -> {
                    if (field == null) {
                        throw bad("count_distinct needs a field");
                    }
                    return new Column(
                            alias == null ? "count_distinct_" + field : alias,
                            "count(DISTINCT " + expression(field) + ")",
                            Kind.COUNT,
                            true);
                }
                case "sum", "avg", "min", "max" -> {
                    if (field == null || !DOUBLE.matcher(field).matches()) {
                        throw bad(fn + " needs a double field (double1 … double20)");
                    }
                    return new Column(
                            alias == null ? fn + "_" + field : alias,
                            fn + "(" + expression(field) + ")",
                            Kind.NUMBER,
                            true);
                }
                default ->
                    throw bad("unknown aggregate '" + fn + "'; known: count, count_distinct, sum, avg, min, max");
            }
        }
        if (field == null) {
            throw bad("a select item needs a field or an fn");
        }
        if (item.has("bucket")) {
            String bucket = text(item.get("bucket"), "bucket");
            if (!"timestamp".equals(field) || !BUCKETS.contains(bucket)) {
                throw bad("bucket applies to timestamp and is one of minute, hour, day, week, month");
            }
            // the unit is one of five fixed words, so it is written into the SQL text, not bound
            return new Column(
                    alias == null ? bucket : alias, "date_trunc('" + bucket + "', ts, 'UTC')", Kind.TIME, false);
        }
        return new Column(alias == null ? field : alias, expression(field), kind(field), false);
    }

    private static void condition(JsonNode cond, StringBuilder sql, List<Object> params) throws ResourceException {
        if (!cond.isObject() || !cond.has("field") || !cond.has("op") || !cond.has("value")) {
            throw bad("a where condition is {\"field\": …, \"op\": …, \"value\": …}");
        }
        String field = text(cond.get("field"), "field");
        String op = text(cond.get("op"), "op");
        if (!OPS.contains(op)) {
            throw bad("unknown operator '" + op + "'; known: = != < <= > >= in");
        }
        Kind kind = kind(field);
        String expr = expression(field);
        JsonNode value = cond.get("value");
        if ("in".equals(op)) {
            if (!value.isArray() || value.isEmpty() || value.size() > 100) {
                throw bad("'in' takes a list of 1 to 100 values");
            }
            sql.append(" AND ").append(expr).append(" IN (");
            for (int i = 0; i < value.size(); i++) {
                sql.append(i == 0 ? "?" : ", ?");
                params.add(value(value.get(i), kind, field));
            }
            sql.append(')');
            return;
        }
        sql.append(" AND ")
                .append(expr)
                .append(' ')
                .append("!=".equals(op) ? "<>" : op)
                .append(" ?");
        params.add(value(value, kind, field));
    }

    private static Object value(JsonNode v, Kind kind, String field) throws ResourceException {
        switch (kind) {
            case NUMBER -> {
                if (!v.isNumber()) {
                    throw bad(field + " is compared with a number");
                }
                return v.asDouble();
            }
            case TIME -> {
                return java.sql.Timestamp.from(instant(v, field));
            }
            default -> {
                if (!v.isTextual()) {
                    throw bad(field + " is compared with a string");
                }
                return v.asText();
            }
        }
    }

    private static int position(List<Column> columns, JsonNode name, String where) throws ResourceException {
        String n = name.asText();
        for (int i = 0; i < columns.size(); i++) {
            if (columns.get(i).name().equals(n)) {
                return i + 1;
            }
        }
        throw bad(where + " names '" + n + "', which is not a column of select");
    }

    static String expression(String field) throws ResourceException {
        if ("timestamp".equals(field)) {
            return "ts";
        }
        if ("index1".equals(field)) {
            return "index1";
        }
        Matcher b = BLOB.matcher(field);
        if (b.matches()) {
            return "blobs[" + Integer.parseInt(b.group(1)) + "]";
        }
        Matcher d = DOUBLE.matcher(field);
        if (d.matches()) {
            return "doubles[" + Integer.parseInt(d.group(1)) + "]";
        }
        throw bad("unknown field '" + field + "'; fields: timestamp, index1, blob1 … blob20, double1 … double20");
    }

    private static Kind kind(String field) throws ResourceException {
        expression(field);
        if ("timestamp".equals(field)) {
            return Kind.TIME;
        }
        return DOUBLE.matcher(field).matches() ? Kind.NUMBER : Kind.TEXT;
    }

    private static String text(JsonNode n, String what) throws ResourceException {
        if (n == null || !n.isTextual()) {
            throw bad(what + " must be a string");
        }
        return n.asText();
    }

    private static Instant instant(JsonNode n, String what) throws ResourceException {
        try {
            return Instant.parse(text(n, what));
        } catch (DateTimeParseException e) {
            throw bad(what + " is an ISO-8601 instant such as 2026-11-01T00:00:00Z");
        }
    }

    private static ResourceException bad(String message) {
        return ResourceException.badInput(message);
    }

    static Map<String, Object> describe() {
        return Map.of("dialect", "json", "fields", "timestamp, index1, blob1..blob20, double1..double20");
    }
}
