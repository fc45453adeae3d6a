package dev.atrium.deploy.api;

import java.net.URI;
import java.util.Map;
import java.util.Objects;

/**
 * A resource the deployed code calls as {@code env.<name>}. The code reaches it through Atrium's internal binding
 * endpoint: {@code endpoint} is the base URL of that resource's internal API on loopback, and {@code headers} must be
 * sent with every request to it (they authenticate the deployment). A provider passes both to the runtime so that the
 * code can use the binding but can never read the headers. What each type's calls look like on the wire (paths,
 * headers, bodies, answers) is {@code docs/binding-protocol.md}.
 *
 * <p><b>{@code options}</b> are the binding's settings that are not secret and that the runtime itself needs, for a
 * type whose binding is more than calls to the endpoint (e.g. the class a {@code durableObject} or {@code workflow}
 * binding names). Types without settings have none.
 *
 * @param name     the variable name the code sees, e.g. {@code MY_KV}
 * @param type     the resource type: {@code kv}, {@code d1}, {@code r2}, {@code queue}, …
 * @param endpoint the internal endpoint's base URL for this resource
 * @param headers  headers that authenticate the deployment; secret
 * @param options  the type's non-secret settings for the runtime, e.g. {@code class_name}; empty for most types
 */
public record Binding(
        String name, String type, URI endpoint, Map<String, String> headers, Map<String, String> options) {

    public Binding {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(endpoint, "endpoint");
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        options = options == null ? Map.of() : Map.copyOf(options);
    }

    /** A binding whose type has no runtime settings. */
    public Binding(String name, String type, URI endpoint, Map<String, String> headers) {
        this(name, type, endpoint, headers, Map.of());
    }

    @Override
    public String toString() {
        return "Binding[" + name + ": " + type + " at " + endpoint + "]";
    }
}
