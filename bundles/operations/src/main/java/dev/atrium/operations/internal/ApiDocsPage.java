package dev.atrium.operations.internal;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** {@code /api/docs}: the OpenAPI document as one page, grouped by bundle; no script, nothing fetched from elsewhere. */
final class ApiDocsPage {

    private ApiDocsPage() {}

    @SuppressWarnings("unchecked")
    static String html(Map<String, Object> doc) {
        Map<String, StringBuilder> byTag = new TreeMap<>();
        Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>) doc.get("paths");
        paths.forEach((path, item) -> item.forEach((verb, o) -> {
            Map<String, Object> op = (Map<String, Object>) o;
            String tag = ((List<String>) op.get("tags")).get(0);
            StringBuilder rows = byTag.computeIfAbsent(tag, t -> new StringBuilder());
            rows.append("<tr><td class=m>")
                    .append(escape(verb.toUpperCase(java.util.Locale.ROOT)))
                    .append("</td><td><code>")
                    .append(escape(path))
                    .append("</code></td><td>")
                    .append(escape(access(op)))
                    .append("</td><td>")
                    .append(escape(parameters(op)))
                    .append("</td></tr>\n");
        }));
        StringBuilder out = new StringBuilder();
        Map<String, Object> info = (Map<String, Object>) doc.get("info");
        out.append("<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>Atrium API</title><style>")
                .append(
                        "body{font:14px system-ui,sans-serif;margin:2em;max-width:70em}td,th{padding:.2em .6em;text-align:left;vertical-align:top}")
                .append(
                        "tr:nth-child(even){background:#f4f4f4}.m{font-weight:600;width:5em}code{font-size:13px}</style></head><body>\n")
                .append("<h1>Atrium API</h1><p>")
                .append(escape(String.valueOf(info.get("description"))))
                .append(" Version ")
                .append(escape(String.valueOf(info.get("version"))))
                .append(
                        ". The machine-readable document is <a href=\"openapi.json\">openapi.json</a> (OpenAPI 3.1). Errors are ")
                .append("<code>{\"error\":{\"code\",\"message\"}}</code>.</p>\n");
        out.append("<nav><p>");
        byTag.keySet()
                .forEach(t -> out.append("<a href=\"#")
                        .append(escape(t))
                        .append("\">")
                        .append(escape(t))
                        .append("</a> "));
        out.append("</p></nav>\n");
        byTag.forEach((tag, rows) -> out.append("<h2 id=\"")
                .append(escape(tag))
                .append("\">")
                .append(escape(tag))
                .append("</h2>\n<table><tr><th>Method</th><th>Path</th><th>Access</th><th>Parameters</th></tr>\n")
                .append(rows)
                .append("</table>\n"));
        return out.append("</body></html>\n").toString();
    }

    @SuppressWarnings("unchecked")
    private static String access(Map<String, Object> op) {
        Object security = op.get("security");
        if (Boolean.TRUE.equals(op.get("x-atrium-operator-only"))) {
            return "operator";
        }
        if (security instanceof List<?> l && l.isEmpty()) {
            return "anyone";
        }
        if (op.containsKey("description") && security == null) {
            return "its own";
        }
        if (security instanceof List<?> l) {
            List<String> scopes = ((Map<String, List<String>>) l.get(0)).get("bearer");
            return scopes.isEmpty() ? "signed in" : "scope " + String.join(", ", scopes);
        }
        return "signed in";
    }

    @SuppressWarnings("unchecked")
    private static String parameters(Map<String, Object> op) {
        StringBuilder s = new StringBuilder();
        for (Map<String, Object> p : (List<Map<String, Object>>) op.getOrDefault("parameters", List.of())) {
            if ("query".equals(p.get("in")) || "header".equals(p.get("in"))) {
                s.append(s.length() == 0 ? "" : ", ")
                        .append(p.get("name"))
                        .append(" (")
                        .append(p.get("in"))
                        .append(")");
            }
        }
        if (op.containsKey("requestBody")) {
            Map<String, Object> content =
                    (Map<String, Object>) ((Map<String, Object>) op.get("requestBody")).get("content");
            s.append(s.length() == 0 ? "" : ", ").append("body: ").append(String.join(" or ", content.keySet()));
        }
        return s.toString();
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
