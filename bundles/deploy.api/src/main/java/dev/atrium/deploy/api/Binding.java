package dev.atrium.deploy.api;

import java.net.URI;
import java.util.Map;
import java.util.Objects;

/**
 * A resource the deployed code calls as {@code env.<name>}. The code reaches it through Atrium's internal binding
 * endpoint: {@code endpoint} is the base URL of that resource's internal API on loopback, and {@code headers} must be
 * sent with every request to it (they authenticate the deployment). A provider passes both to the runtime so that the
 * code can use the binding but can never read the headers.
 *
 * <p>The internal API speaks, per {@code type}: {@code kv} — {@code GET|PUT|DELETE <endpoint>/<url-encoded key>}
 * (PUT takes {@code expiration_ttl} seconds as a query parameter), {@code GET <endpoint>/?prefix=&cursor=&limit=} lists
 * keys as {@code {"keys":[{"name"}],"list_complete","cursor"}}; {@code d1} — {@code POST <endpoint>/query} with
 * {@code {"sql","params"}} answering {@code {"results":[…],"meta":{…}}}; {@code r2} — {@code GET|PUT|DELETE
 * <endpoint>/<key>}; {@code queue} — {@code POST <endpoint>/messages} with {@code {"body"}}. Other types may be added.
 *
 * @param name     the variable name the code sees, e.g. {@code MY_KV}
 * @param type     the resource type: {@code kv}, {@code d1}, {@code r2}, {@code queue}, …
 * @param endpoint the internal endpoint's base URL for this resource
 * @param headers  headers that authenticate the deployment; secret
 */
public record Binding(String name, String type, URI endpoint, Map<String, String> headers) {

    public Binding {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(endpoint, "endpoint");
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

    @Override
    public String toString() {
        return "Binding[" + name + ": " + type + " at " + endpoint + "]";
    }
}
