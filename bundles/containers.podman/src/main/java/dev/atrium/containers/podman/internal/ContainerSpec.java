package dev.atrium.containers.podman.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.deploy.api.Binding;
import dev.atrium.deploy.api.Deployment;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What podman is asked to create for a deployment: its image; its user (the image's when a non-root uid, else the
 * configured one, never root); its env (its own, {@code PORT}, the bindings relay's addresses and secret, the egress
 * proxy); its labels; memory, CPU and process limits; no capabilities, no new privileges.
 */
final class ContainerSpec {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern NUMERIC_USER = Pattern.compile("[1-9]\\d*(?::\\d+)?");

    private ContainerSpec() {}

    static ObjectNode of(
            Deployment d,
            ImageArchive image,
            int port,
            ContainerServices.Settings settings,
            BindingRelay relay,
            EgressProxy proxy,
            DockerApi api)
            throws IOException {
        ObjectNode body = JSON.createObjectNode();
        body.put("Image", image.reference());
        String imageUser = image.config().path("User").asText("");
        // the image's own user when it names a non-root uid; else the configured one: never root
        body.put("User", NUMERIC_USER.matcher(imageUser).matches() ? imageUser : settings.user());
        ArrayNode env = body.putArray("Env");
        d.env().forEach((k, v) -> env.add(k + "=" + v));
        if (!d.env().containsKey("PORT")) {
            env.add("PORT=" + port);
        }
        if (proxy != null) {
            String via = "http://" + api.gateway(settings.network()) + ":" + proxy.port();
            for (String name : List.of("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")) {
                if (!d.env().containsKey(name)) {
                    env.add(name + "=" + via);
                }
            }
            // the bindings relay is on the gateway too, reached directly (or through the proxy, by a client that
            // ignores NO_PROXY)
            String direct = api.gateway(settings.network());
            proxy.relayAt(direct);
            for (String name : List.of("NO_PROXY", "no_proxy")) {
                if (!d.env().containsKey(name)) {
                    env.add(name + "=" + direct);
                }
            }
        }
        if (!d.bindings().isEmpty()) {
            String base = "http://" + api.gateway(settings.network()) + ":" + relay.port();
            Binding first = d.bindings().get(0);
            String path = first.endpoint().getRawPath();
            env.add("ATRIUM_BINDINGS_URL=" + base + path.substring(0, path.lastIndexOf('/')));
            first.headers().forEach((k, v) -> {
                env.add("ATRIUM_BINDINGS_HEADER=" + k);
                env.add("ATRIUM_BINDINGS_SECRET=" + v);
            });
            for (Binding b : d.bindings()) {
                String var = b.name().toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9_]", "_");
                env.add("ATRIUM_BINDING_" + var + "_URL=" + base + b.endpoint().getRawPath());
                env.add("ATRIUM_BINDING_" + var + "_TYPE=" + b.type());
            }
        }
        ObjectNode labels = body.putObject("Labels");
        labels.put(ContainerServices.LABEL, d.id());
        labels.put("atrium.service", d.serviceId());
        Long mb = d.limits().get("memory_mb");
        long memory = mb != null && mb > 0 ? mb << 20 : settings.memoryBytes();
        Long millicpus = d.limits().get("millicpus");
        double cpus = millicpus != null && millicpus > 0 ? millicpus / 1000.0 : settings.cpus();
        ObjectNode host = body.putObject("HostConfig");
        host.put("Init", true); // signals reach the server's process, and a stop is quick
        host.put("NetworkMode", settings.network());
        host.put("Memory", memory);
        host.put("MemorySwap", memory); // no swap
        host.put("NanoCpus", Math.round(cpus * 1e9));
        host.put("PidsLimit", settings.pids());
        host.putArray("CapDrop").add("ALL");
        host.putArray("SecurityOpt").add("no-new-privileges");
        return body;
    }
}
