package dev.atrium.operations.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SelfAuthenticated;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.time.temporal.Temporal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import javax.ws.rs.BeanParam;
import javax.ws.rs.CookieParam;
import javax.ws.rs.DefaultValue;
import javax.ws.rs.FormParam;
import javax.ws.rs.HeaderParam;
import javax.ws.rs.MatrixParam;
import javax.ws.rs.PathParam;
import javax.ws.rs.QueryParam;
import javax.ws.rs.container.Suspended;
import javax.ws.rs.core.Context;

/**
 * An OpenAPI 3.1 document of the routes a server answers ({@link RouteCatalog}): each JAX-RS route with what its Java
 * method says (path and query parameters with their types, the request body's type, the answer's type, the scope it
 * needs or that it needs no sign-in), each servlet route as a path. Types become JSON Schemas as Jackson writes them:
 * records become objects with their components, collections arrays, maps objects, {@code JsonNode} and {@code Object}
 * any value. Every operation may answer the spec's error body.
 */
final class OpenApiDocument {

    static final String ERROR_RESPONSE = "#/components/responses/Error";
    /**
     * How deep a type is described before it reads as any value: deep enough for a page of records holding records
     * (a deployment's target's artifact is 5 levels down), and a bound for a record that holds itself.
     */
    private static final int MAX_DEPTH = 8;

    private OpenApiDocument() {}

    /**
     * @param javaMethod the resource method answering a JAX-RS route, when it can be found
     * @param version    the server's version
     * @param baseUrl    the server's public base URL
     */
    static Map<String, Object> of(
            List<RouteCatalog.Route> routes,
            Function<RouteCatalog.Route, Optional<Method>> javaMethod,
            String version,
            String baseUrl) {
        Map<String, Map<String, Object>> paths = new TreeMap<>();
        Set<String> operationIds = new HashSet<>();
        Set<String> tags = new java.util.TreeSet<>();
        for (RouteCatalog.Route r : routes) {
            String path = "jaxrs".equals(r.kind()) ? template(r.path()) : servletPath(r.path());
            if (!path.startsWith("/")) {
                continue; // an extension mapping (*.x) is no path
            }
            String verb = r.method() == null ? "get" : r.method().toLowerCase(Locale.ROOT);
            Map<String, Object> item = paths.computeIfAbsent(path, p -> new LinkedHashMap<>());
            if (item.containsKey(verb)) {
                continue; // two registrations of one route: the whiteboard serves the first
            }
            String tag = r.bundle() == null ? "server" : r.bundle().replaceFirst("^dev\\.atrium\\.", "");
            tags.add(tag);
            Optional<Method> m = "jaxrs".equals(r.kind()) ? javaMethod.apply(r) : Optional.empty();
            item.put(verb, operation(r, path, tag, m, operationIds));
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("openapi", "3.1.0");
        doc.put(
                "info",
                Map.of(
                        "title",
                        "Atrium",
                        "version",
                        version,
                        "description",
                        "Every route this server answers now, made from the running bundles: a capability switched off is not here."));
        doc.put("servers", List.of(Map.of("url", baseUrl)));
        doc.put("tags", tags.stream().map(t -> Map.of("name", t)).toList());
        doc.put("paths", paths);
        doc.put("components", components());
        doc.put("security", List.of(Map.of("bearer", List.of())));
        return doc;
    }

    private static Map<String, Object> components() {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("type", "object");
        error.put("required", List.of("error"));
        error.put(
                "properties",
                Map.of(
                        "error",
                        Map.of(
                                "type",
                                "object",
                                "required",
                                List.of("code", "message"),
                                "properties",
                                Map.of(
                                        "code",
                                        Map.of("type", "string", "examples", List.of("NOT_FOUND")),
                                        "message",
                                        Map.of("type", "string")))));
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("schemas", Map.of("Error", error));
        c.put(
                "responses",
                Map.of(
                        "Error",
                        Map.of(
                                "description",
                                "What went wrong, in the spec's error body",
                                "content",
                                Map.of(
                                        "application/json",
                                        Map.of("schema", Map.of("$ref", "#/components/schemas/Error"))))));
        c.put(
                "securitySchemes",
                Map.of(
                        "bearer",
                        Map.of(
                                "type",
                                "http",
                                "scheme",
                                "bearer",
                                "description",
                                "A personal access token, an OAuth access token, or the session cookie of a signed-in browser")));
        return c;
    }

    private static Map<String, Object> operation(
            RouteCatalog.Route r, String path, String tag, Optional<Method> method, Set<String> ids) {
        Map<String, Object> op = new LinkedHashMap<>();
        op.put("tags", List.of(tag));
        op.put("operationId", operationId(r.method() == null ? "get" : r.method(), path, ids));
        if ("servlet".equals(r.kind())) {
            op.put("summary", "Served by a servlet, which answers the methods it implements");
        }
        List<Map<String, Object>> parameters = new ArrayList<>();
        Map<String, Object> body = null;
        Map<String, Object> success = new LinkedHashMap<>();
        success.put("description", "Success");
        Map<String, Object> responses = new LinkedHashMap<>();
        Set<String> pathNames = new java.util.LinkedHashSet<>();
        java.util.regex.Matcher names =
                java.util.regex.Pattern.compile("\\{([^}/]+)}").matcher(path);
        while (names.find()) {
            pathNames.add(names.group(1));
        }
        if (method.isPresent()) {
            Method m = method.get();
            security(m).ifPresent(s -> op.put("security", s));
            if (annotated(m, OperatorOnly.class)) {
                op.put("x-atrium-operator-only", true);
            }
            for (Parameter p : m.getParameters()) {
                if (p.isAnnotationPresent(PathParam.class)) {
                    String name = p.getAnnotation(PathParam.class).value();
                    if (pathNames.remove(name)) {
                        parameters.add(parameter(name, "path", true, schema(p.getParameterizedType(), 0)));
                    }
                } else if (p.isAnnotationPresent(QueryParam.class)) {
                    Map<String, Object> s = schema(p.getParameterizedType(), 0);
                    if (p.isAnnotationPresent(DefaultValue.class)) {
                        s = new LinkedHashMap<>(s);
                        s.put("default", p.getAnnotation(DefaultValue.class).value());
                    }
                    parameters.add(parameter(p.getAnnotation(QueryParam.class).value(), "query", false, s));
                } else if (p.isAnnotationPresent(HeaderParam.class)) {
                    String name = p.getAnnotation(HeaderParam.class).value();
                    if (!name.equalsIgnoreCase("Authorization")
                            && !name.equalsIgnoreCase("Content-Type")
                            && !name.equalsIgnoreCase("Accept")) {
                        parameters.add(parameter(name, "header", false, schema(p.getParameterizedType(), 0)));
                    }
                } else if (isBody(p)) {
                    JsonShape shape = p.getAnnotation(JsonShape.class);
                    body = requestBody(r.consumes(), shape != null ? shape.value() : p.getParameterizedType());
                }
            }
            Type returns = m.getGenericReturnType();
            NotJson notJson = m.getAnnotation(NotJson.class);
            if (returns == void.class || returns == Void.class || "options".equalsIgnoreCase(r.method())) {
                responses.put("204", Map.of("description", "Done; no body"));
            } else if (notJson != null && notJson.value().length == 0) {
                responses.put("2XX", Map.of("description", "Success; no body (a redirect, or accepted)"));
            } else if (notJson != null) {
                Map<String, Object> c = new LinkedHashMap<>();
                for (String t : notJson.value()) {
                    c.put(
                            t,
                            Map.of(
                                    "schema",
                                    t.startsWith("text/") || t.contains("*")
                                            ? Map.of("type", "string")
                                            : Map.of("type", "string", "contentMediaType", t)));
                }
                success.put("content", c);
                responses.put("2XX", success);
            } else {
                JsonShape shape = m.getAnnotation(JsonShape.class);
                Map<String, Object> schema = schema(shape != null ? shape.value() : returns, 0);
                success.put("content", content(r.produces(), schema));
                responses.put("2XX", success);
            }
        } else {
            op.put(
                    "description",
                    "Its access is decided by the code that serves it (no resource method describes it).");
            if (("post".equalsIgnoreCase(r.method())
                            || "put".equalsIgnoreCase(r.method())
                            || "patch".equalsIgnoreCase(r.method()))
                    && !r.consumes().isEmpty()) {
                body = requestBody(r.consumes(), Object.class);
            }
            if (!r.produces().isEmpty()) {
                success.put("content", content(r.produces(), Map.of()));
            }
            responses.put("2XX", success);
        }
        for (String name : pathNames) {
            parameters.add(parameter(name, "path", true, Map.of("type", "string")));
        }
        if (!parameters.isEmpty()) {
            op.put("parameters", parameters);
        }
        if (body != null) {
            op.put("requestBody", body);
        }
        responses.put("default", Map.of("$ref", ERROR_RESPONSE));
        op.put("responses", responses);
        return op;
    }

    private static Optional<List<Map<String, List<String>>>> security(Method m) {
        if (annotated(m, Anonymous.class) || annotated(m, SelfAuthenticated.class)) {
            return Optional.of(List.of());
        }
        RequiresScope scope = m.getAnnotation(RequiresScope.class);
        if (scope == null) {
            scope = m.getDeclaringClass().getAnnotation(RequiresScope.class);
        }
        return scope == null ? Optional.empty() : Optional.of(List.of(Map.of("bearer", List.of(scope.value()))));
    }

    private static boolean annotated(Method m, Class<? extends java.lang.annotation.Annotation> a) {
        return m.isAnnotationPresent(a) || m.getDeclaringClass().isAnnotationPresent(a);
    }

    private static boolean isBody(Parameter p) {
        for (Class<? extends java.lang.annotation.Annotation> a : List.of(
                Context.class,
                Suspended.class,
                FormParam.class,
                CookieParam.class,
                MatrixParam.class,
                BeanParam.class)) {
            if (p.isAnnotationPresent(a)) {
                return false;
            }
        }
        return true;
    }

    private static Map<String, Object> parameter(String name, String in, boolean required, Map<String, Object> schema) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("name", name);
        p.put("in", in);
        p.put("required", required);
        p.put("schema", schema);
        return p;
    }

    private static Map<String, Object> requestBody(List<String> consumes, Type type) {
        return Map.of("required", true, "content", content(consumes, schema(type, 0)));
    }

    private static Map<String, Object> content(List<String> mediaTypes, Map<String, Object> schema) {
        Map<String, Object> c = new LinkedHashMap<>();
        for (String t : mediaTypes.isEmpty() || mediaTypes.contains("*/*") ? List.of("application/json") : mediaTypes) {
            c.put(t, Map.of("schema", schema));
        }
        return c;
    }

    /** A Java type as Jackson writes it, as a JSON Schema; {} (any value) where the type does not say. */
    static Map<String, Object> schema(Type type, int depth) {
        Class<?> raw = raw(type);
        if (raw == null || depth > MAX_DEPTH) {
            return Map.of();
        }
        if (raw == String.class
                || CharSequence.class.isAssignableFrom(raw)
                || raw == java.util.UUID.class
                || raw == java.net.URI.class) {
            return Map.of("type", "string");
        }
        if (raw == java.time.LocalDate.class) {
            return Map.of("type", "string", "format", "date");
        }
        if (Temporal.class.isAssignableFrom(raw) || raw == java.util.Date.class) {
            return Map.of("type", "string", "format", "date-time");
        }
        if (raw == boolean.class || raw == Boolean.class) {
            return Map.of("type", "boolean");
        }
        if (raw == int.class
                || raw == Integer.class
                || raw == short.class
                || raw == Short.class
                || raw == byte.class
                || raw == Byte.class) {
            return Map.of("type", "integer", "format", "int32");
        }
        if (raw == long.class || raw == Long.class) {
            return Map.of("type", "integer", "format", "int64");
        }
        if (raw.isPrimitive() || Number.class.isAssignableFrom(raw)) {
            return Map.of("type", "number");
        }
        if (raw == byte[].class || InputStream.class.isAssignableFrom(raw)) {
            return Map.of("type", "string", "contentMediaType", "application/octet-stream");
        }
        if (raw.isEnum()) {
            return Map.of(
                    "type",
                    "string",
                    "enum",
                    java.util.Arrays.stream(raw.getEnumConstants())
                            .map(Object::toString)
                            .toList());
        }
        if (raw == Optional.class) {
            return schema(argument(type, 0), depth);
        }
        if (raw.isArray()) {
            return Map.of("type", "array", "items", schema(raw.getComponentType(), depth + 1));
        }
        if (Collection.class.isAssignableFrom(raw)) {
            Map<String, Object> items = schema(argument(type, 0), depth + 1);
            Class<?> item = raw(argument(type, 0));
            // a list of boxed numbers may hold gaps (a chart's series where a sample had no value): null, as boxing
            // says
            return Map.of(
                    "type",
                    "array",
                    "items",
                    Number.class.isAssignableFrom(item) || item == Boolean.class ? nullable(items) : items);
        }
        if (Map.class.isAssignableFrom(raw)) {
            Map<String, Object> values = schema(argument(type, 1), depth + 1);
            return values.isEmpty()
                    ? Map.of("type", "object")
                    : Map.of("type", "object", "additionalProperties", values);
        }
        if (raw.isRecord()) {
            Map<String, Object> properties = new LinkedHashMap<>();
            List<String> required = new ArrayList<>();
            for (RecordComponent c : raw.getRecordComponents()) {
                if (c.getAccessor().isAnnotationPresent(JsonUnwrapped.class)) {
                    // its fields are the record's own, as Jackson writes them
                    Map<String, Object> inner = schema(c.getGenericType(), depth);
                    if (inner.get("properties") instanceof Map<?, ?> fields) {
                        fields.forEach((k, v) -> properties.put((String) k, v));
                    }
                    if (inner.get("required") instanceof List<?> names) {
                        names.forEach(n -> required.add((String) n));
                    }
                    continue;
                }
                JsonProperty named = c.getAccessor().getAnnotation(JsonProperty.class);
                String name = named != null && !named.value().isEmpty() ? named.value() : c.getName();
                Map<String, Object> value = schema(c.getGenericType(), depth + 1);
                if (c.getType().isPrimitive()) {
                    required.add(name);
                    properties.put(name, value);
                } else {
                    properties.put(name, nullable(value));
                }
            }
            return required.isEmpty()
                    ? Map.of("type", "object", "properties", properties)
                    : Map.of("type", "object", "properties", properties, "required", required);
        }
        if (raw.getName().startsWith("com.fasterxml.jackson.databind.node.ObjectNode")) {
            return Map.of("type", "object");
        }
        // JsonNode, Object, javax.ws.rs.core.Response, StreamingOutput: the type does not say
        return Map.of();
    }

    /**
     * A record component of a reference type may be null or absent (the records say so by boxing: a primitive one is
     * always there), so its schema also admits null.
     */
    private static Map<String, Object> nullable(Map<String, Object> schema) {
        if (!(schema.get("type") instanceof String type)) {
            return schema; // any value already admits null
        }
        Map<String, Object> out = new LinkedHashMap<>(schema);
        out.put("type", List.of(type, "null"));
        if (schema.get("enum") instanceof List<?> values) {
            List<Object> orNull = new ArrayList<>(values);
            orNull.add(null); // an enum lists every value the field takes, null included
            out.put("enum", orNull);
        }
        return out;
    }

    private static Class<?> raw(Type t) {
        if (t instanceof Class<?> c) {
            return c;
        }
        if (t instanceof ParameterizedType p) {
            return raw(p.getRawType());
        }
        if (t instanceof WildcardType w) {
            return w.getUpperBounds().length == 0 ? Object.class : raw(w.getUpperBounds()[0]);
        }
        return Object.class;
    }

    private static Type argument(Type t, int i) {
        return t instanceof ParameterizedType p && p.getActualTypeArguments().length > i
                ? p.getActualTypeArguments()[i]
                : Object.class;
    }

    private static String operationId(String verb, String path, Set<String> taken) {
        StringBuilder id = new StringBuilder(verb.toLowerCase(Locale.ROOT));
        for (String part : path.split("[^A-Za-z0-9]+")) {
            if (!part.isEmpty()) {
                id.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
            }
        }
        String unique = id.toString();
        for (int n = 2; !taken.add(unique); n++) {
            unique = id + "_" + n;
        }
        return unique;
    }

    /** A JAX-RS path as an OpenAPI path template: {@code /x/{id: [0-9]+}} is {@code /x/{id}}. */
    static String template(String path) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < path.length(); i++) {
            char c = path.charAt(i);
            if (c != '{') {
                out.append(c);
                continue;
            }
            int depth = 1;
            int j = i + 1;
            StringBuilder name = new StringBuilder();
            boolean inName = true;
            for (; j < path.length() && depth > 0; j++) {
                char d = path.charAt(j);
                if (d == '{') {
                    depth++;
                } else if (d == '}') {
                    depth--;
                } else if (d == ':' && depth == 1) {
                    inName = false;
                } else if (inName && depth == 1) {
                    name.append(d);
                }
            }
            out.append('{').append(name.toString().trim()).append('}');
            i = j - 1;
        }
        return out.toString();
    }

    /** A servlet pattern as a path: {@code /git/*} is {@code /git/{path}}, the rest of the path. */
    static String servletPath(String pattern) {
        if (pattern.endsWith("/*")) {
            return pattern.substring(0, pattern.length() - 1) + "{path}";
        }
        return pattern;
    }
}
