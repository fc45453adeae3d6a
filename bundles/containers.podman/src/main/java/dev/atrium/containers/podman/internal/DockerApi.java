package dev.atrium.containers.podman.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.runner.api.JobContainer.Output;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The few calls of the Docker-compatible API (v1.41) the runner makes, over {@link UnixHttp}. podman 4.3 answers them
 * as Docker does, except that an import takes its tag in {@code repo} ({@code tag} is ignored).
 */
final class DockerApi {

    static final String PREFIX = "/v1.41";
    private static final Duration CALL = Duration.ofSeconds(60);
    private static final Duration IMPORT = Duration.ofMinutes(10);

    private final UnixHttp http;
    private final ObjectMapper json;

    DockerApi(UnixHttp http, ObjectMapper json) {
        this.http = http;
        this.json = json;
    }

    /** Whether the service answers {@code /_ping}. */
    boolean ping(Duration timeout) {
        try {
            UnixHttp.Response r = http.request("GET", "/_ping", null, null, timeout);
            return r.status() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    /** {@code GET /version}: the service's version, e.g. {@code 4.3.1}. */
    String version() throws IOException {
        return call("GET", "/version", null, CALL).path("Version").asText("");
    }

    /** Creates a container; {@code config} is the Docker create body. @return its id */
    String createContainer(String name, ObjectNode config) throws IOException {
        return call("POST", "/containers/create?name=" + encode(name), config, CALL)
                .path("Id")
                .asText();
    }

    void startContainer(String id) throws IOException {
        call("POST", "/containers/" + encode(id) + "/start", null, CALL);
    }

    /** Sends SIGKILL to the container's processes; a container that is gone or not running is no error. */
    /** Freezes ({@code pause}) or thaws ({@code unpause}) every process of the container. */
    void pause(String id, boolean pause) throws IOException {
        call("POST", "/containers/" + encode(id) + (pause ? "/pause" : "/unpause"), null, CALL);
    }

    void kill(String id) throws IOException {
        try {
            call("POST", "/containers/" + encode(id) + "/kill?signal=KILL", null, CALL);
        } catch (ApiException e) {
            if (e.status() != 404 && e.status() != 409) {
                throw e;
            }
        }
    }

    /** Removes the container, killing it if it runs; one already gone is no error. */
    void remove(String id) throws IOException {
        try {
            call("DELETE", "/containers/" + encode(id) + "?force=true&v=true", null, CALL);
        } catch (ApiException e) {
            if (e.status() != 404) {
                throw e;
            }
        }
    }

    /** The ids of every container, running or not. */
    List<String> containers() throws IOException {
        List<String> ids = new ArrayList<>();
        for (JsonNode c : call("GET", "/containers/json?all=true", null, CALL)) {
            ids.add(c.path("Id").asText());
        }
        return ids;
    }

    boolean imageExists(String reference) throws IOException {
        try {
            call("GET", "/images/" + reference + "/json", null, CALL);
            return true;
        } catch (ApiException e) {
            if (e.status() == 404) {
                return false;
            }
            throw e;
        }
    }

    /** Imports a rootfs tar as the image {@code reference} ({@code repo:tag}). */
    void importImage(Path tar, String reference) throws IOException {
        UnixHttp.Response r = http.request(
                "POST",
                PREFIX + "/images/create?fromSrc=-&repo=" + encode(reference),
                "application/x-tar",
                UnixHttp.Body.of(tar),
                IMPORT);
        String text = r.text();
        if (r.status() / 100 != 2) {
            throw new ApiException(r.status(), message(text, r.status()));
        }
        // a stream of JSON progress messages; a failure is one with "error"
        for (String line : text.split("\n")) {
            if (line.contains("\"error\"")) {
                JsonNode message = json.readTree(line);
                throw new ApiException(500, message.path("error").asText(line));
            }
        }
        if (!imageExists(reference)) {
            throw new ApiException(500, "the import of " + tar + " left no image " + reference);
        }
    }

    /**
     * Loads an OCI or docker archive ({@code POST /images/load}). podman says what it loaded as a stream line; the
     * caller knows the image by its id (the config's digest), so only failures are read here.
     *
     * @throws ApiException with podman's message when it refuses the archive
     */
    void loadImage(byte[] tar) throws IOException {
        streamed(
                http.request("POST", PREFIX + "/images/load", "application/x-tar", UnixHttp.Body.of(tar), IMPORT), 500);
    }

    /**
     * A streamed answer of JSON progress lines: its status refused, or a line with {@code "error"} failing as {@code
     * failure}.
     */
    private void streamed(UnixHttp.Response r, int failure) throws IOException {
        String text = r.text();
        if (r.status() / 100 != 2) {
            throw new ApiException(r.status(), message(text, r.status()));
        }
        for (String line : text.split("\n")) {
            if (line.contains("\"error\"")) {
                throw new ApiException(
                        failure, json.readTree(line).path("error").asText(line));
            }
        }
    }

    /**
     * Pulls {@code reference} (libpod's pull, which takes {@code tlsVerify}; the Docker-compatible one reads TLS from
     * the registries configuration only).
     *
     * @throws ApiException with podman's message when the pull fails
     */
    void pullImage(String reference, boolean tlsVerify) throws IOException {
        streamed(
                http.request(
                        "POST",
                        "/v4.0.0/libpod/images/pull?reference=" + encode(reference) + "&tlsVerify=" + tlsVerify
                                + "&quiet=true",
                        null,
                        null,
                        IMPORT),
                502);
    }

    /** An image's inspection (compat: {@code Id}, {@code Config}), if podman has it. */
    java.util.Optional<JsonNode> inspectImage(String reference) throws IOException {
        return found("/images/" + encode(reference) + "/json");
    }

    /** {@code GET path}; empty when podman answers 404. */
    private java.util.Optional<JsonNode> found(String path) throws IOException {
        try {
            return java.util.Optional.of(call("GET", path, null, CALL));
        } catch (ApiException e) {
            if (e.status() == 404) {
                return java.util.Optional.empty();
            }
            throw e;
        }
    }

    /**
     * Creates the bridge network {@code name} as internal (libpod's create: no route beyond the host's bridge) unless
     * it exists; whether the network, as it now is, is internal.
     */
    boolean ensureInternalNetwork(String name) throws IOException {
        try {
            return call("GET", "/v4.0.0/libpod/networks/" + encode(name) + "/json", null, CALL)
                    .path("internal")
                    .asBoolean(false);
        } catch (ApiException e) {
            if (e.status() != 404) {
                throw e;
            }
        }
        try {
            call(
                    "POST",
                    "/v4.0.0/libpod/networks/create",
                    // with its DNS server: podman gives an internal network a gateway (the host's address on the
                    // bridge, where the relay and the egress proxy listen) only then
                    json.createObjectNode()
                            .put("name", name)
                            .put("driver", "bridge")
                            .put("internal", true)
                            .put("dns_enabled", true),
                    CALL);
        } catch (ApiException e) {
            if (e.status() != 409) { // another server made it meanwhile
                throw e;
            }
        }
        return ensureInternalNetwork(name);
    }

    /** Removes an image no container uses; one in use or gone is left as it is. */
    void removeImage(String id) throws IOException {
        try {
            call("DELETE", "/images/" + encode(id), null, CALL);
        } catch (ApiException e) {
            if (e.status() != 404 && e.status() != 409) {
                throw e;
            }
        }
    }

    /** {@code GET /containers/{id}/json}; empty when the container is gone. */
    java.util.Optional<JsonNode> inspect(String id) throws IOException {
        return found("/containers/" + encode(id) + "/json");
    }

    /** Every container (running or not) with the label {@code key} (any value): Docker's list entries. */
    List<JsonNode> labelled(String key) throws IOException {
        String filter = json.writeValueAsString(Map.of("label", List.of(key)));
        List<JsonNode> out = new ArrayList<>();
        call("GET", "/containers/json?all=true&filters=" + encode(filter), null, CALL)
                .forEach(out::add);
        return out;
    }

    /** Sends SIGTERM, waits up to {@code seconds}, then SIGKILL; a container gone or stopped is no error. */
    void stop(String id, int seconds) throws IOException {
        try {
            call("POST", "/containers/" + encode(id) + "/stop?t=" + seconds, null, Duration.ofSeconds(seconds + 30L));
        } catch (ApiException e) {
            if (e.status() != 404 && e.status() != 304 && e.status() != 409) {
                throw e;
            }
        }
    }

    /**
     * Opens the container's output, from its start and then as it is written, in Docker's multiplexed frames
     * ({@link Frames}); it ends when the container stops. The caller closes the exchange.
     */
    UnixHttp.Exchange followLogs(String id) throws IOException {
        UnixHttp.Exchange exchange = http.open(
                "GET", PREFIX + "/containers/" + encode(id) + "/logs?follow=true&stdout=true&stderr=true", null, null);
        try {
            exchange.readHead();
            if (exchange.status() / 100 != 2) {
                String text = new String(exchange.body().readAllBytes(), StandardCharsets.UTF_8);
                throw new ApiException(exchange.status(), message(text, exchange.status()));
            }
            return exchange;
        } catch (IOException | RuntimeException e) {
            exchange.close();
            throw e;
        }
    }

    /** The gateway (the host's address on it) of the network {@code name}, e.g. {@code 10.88.0.1}. */
    String gateway(String name) throws IOException {
        JsonNode network = call("GET", "/networks/" + encode(name), null, CALL);
        for (JsonNode c : network.path("IPAM").path("Config")) {
            String gw = c.path("Gateway").asText("");
            if (!gw.isEmpty() && !gw.contains(":")) {
                return gw;
            }
        }
        throw new ApiException(500, "the network " + name + " has no IPv4 gateway");
    }

    /** Creates an exec of {@code command} in the container, attached to its stdout and stderr. @return its id */
    String createExec(String container, List<String> command, List<String> env, String workdir) throws IOException {
        ObjectNode body = json.createObjectNode();
        body.put("AttachStdin", false)
                .put("AttachStdout", true)
                .put("AttachStderr", true)
                .put("Tty", false);
        command.forEach(body.putArray("Cmd")::add);
        env.forEach(body.putArray("Env")::add);
        body.put("WorkingDir", workdir);
        return call("POST", "/containers/" + encode(container) + "/exec", body, CALL)
                .path("Id")
                .asText();
    }

    /**
     * Starts an exec and copies its output to {@code output} as it arrives, until the command ends (or the container
     * is killed). No timeout: a step runs as long as it runs; an interrupt of the calling thread closes the connection
     * ({@link java.nio.channels.ClosedByInterruptException}).
     */
    void runExec(String execId, Output output) throws IOException {
        byte[] body = json.writeValueAsBytes(Map.of("Detach", false, "Tty", false));
        try (UnixHttp.Exchange exchange = http.open(
                "POST", PREFIX + "/exec/" + encode(execId) + "/start", "application/json", UnixHttp.Body.of(body))) {
            exchange.readHead();
            if (exchange.status() / 100 != 2) {
                String text = new String(exchange.body().readAllBytes(), StandardCharsets.UTF_8);
                throw new ApiException(exchange.status(), message(text, exchange.status()));
            }
            try (InputStream in = exchange.body()) {
                Frames.copy(in, output);
            }
        }
    }

    /** The exec's exit code, or null while it runs or when podman saw none. */
    Integer execExitCode(String execId) throws IOException {
        JsonNode exec = call("GET", "/exec/" + encode(execId) + "/json", null, CALL);
        if (exec.path("Running").asBoolean(false) || !exec.path("ExitCode").isInt()) {
            return null;
        }
        return exec.path("ExitCode").asInt();
    }

    private JsonNode call(String method, String path, JsonNode body, Duration timeout) throws IOException {
        UnixHttp.Response r = http.request(
                method,
                path.startsWith("/_") || path.startsWith("/v4.") ? path : PREFIX + path,
                body == null ? null : "application/json",
                body == null ? null : UnixHttp.Body.of(json.writeValueAsBytes(body)),
                timeout);
        String text = r.text();
        if (r.status() / 100 != 2) {
            throw new ApiException(r.status(), method + " " + path + ": " + message(text, r.status()));
        }
        if (text.isBlank()) {
            return json.createObjectNode();
        }
        return json.readTree(text);
    }

    private String message(String text, int status) {
        try {
            JsonNode node = json.readTree(text);
            if (node != null && node.hasNonNull("message")) {
                return node.get("message").asText();
            }
        } catch (IOException e) {
            // not JSON: the text itself says it
        }
        String trimmed = text.strip();
        return trimmed.isEmpty() ? "HTTP " + status : trimmed;
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
