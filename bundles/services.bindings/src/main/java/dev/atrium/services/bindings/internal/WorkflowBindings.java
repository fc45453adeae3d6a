package dev.atrium.services.bindings.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceDirectory;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.WorkflowFacet;
import dev.atrium.resource.api.WorkflowFacet.StepAnswer;
import dev.atrium.services.api.ServiceRoutes;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * The {@code workflow} part of the internal binding endpoint: what the workflow runner of deploy.workerd sends for the
 * binding's calls ({@code instances…}) and for the steps of a run ({@code runs/…}), as deploy.api's {@code Binding}
 * documents it. The instance's runner is the service whose code created it.
 */
final class WorkflowBindings {

    static final int MAX_BATCH = 100;

    private final ResourceDirectory directory;
    private final WorkflowPacing pacing;

    WorkflowBindings(ResourceDirectory directory, WorkflowPacing pacing) {
        this.directory = directory;
        this.pacing = pacing;
    }

    void handle(
            ServiceRoutes.Target target,
            String name,
            String rest,
            HttpServletRequest request,
            HttpServletResponse response)
            throws IOException, ResourceException {
        Optional<ResourceDirectory.Opened<WorkflowFacet>> opened =
                directory.open(target.serviceId(), target.spaceId(), name, WorkflowFacet.class);
        if (opened.isEmpty()) {
            InternalBindings.error(
                    response, 503, "SERVICE_UNAVAILABLE", "the workflow provider of this binding is not running");
            return;
        }
        WorkflowFacet wf = opened.get().facet();
        ResourceContext ctx = opened.get().context();
        String method = request.getMethod();
        String[] parts = rest.split("/", -1);
        if (rest.equals("instances") && method.equals("POST")) {
            JsonNode body = body(request, response);
            if (body != null) {
                WorkflowFacet.Instance i =
                        wf.create(ctx, target.serviceId(), id(body.get("id")), params(body.get("params")));
                pacing.nudge(target.serviceId(), name);
                InternalBindings.json(response, 201, Map.of("id", i.id()));
            }
        } else if (rest.equals("instances/batch") && method.equals("POST")) {
            JsonNode body = body(request, response);
            if (body == null) {
                return;
            }
            if (!body.isArray() || body.size() == 0 || body.size() > MAX_BATCH) {
                InternalBindings.error(
                        response, 400, "BAD_REQUEST", "createBatch takes 1 to " + MAX_BATCH + " instances");
                return;
            }
            List<Map<String, Object>> out = new ArrayList<>();
            for (JsonNode o : body) {
                out.add(Map.of(
                        "id",
                        wf.create(ctx, target.serviceId(), id(o.get("id")), params(o.get("params")))
                                .id()));
            }
            pacing.nudge(target.serviceId(), name);
            InternalBindings.json(response, 201, out);
        } else if (parts[0].equals("instances") && (parts.length == 2 || parts.length == 3)) {
            instance(
                    wf,
                    ctx,
                    URLDecoder.decode(parts[1].replace("+", "%2B"), StandardCharsets.UTF_8),
                    parts.length == 3 ? parts[2] : "",
                    method,
                    response);
            if (method.equals("POST")) {
                pacing.nudge(target.serviceId(), name); // resume and restart make the instance due now
            }
        } else if (parts[0].equals("runs") && method.equals("POST")) {
            JsonNode body = body(request, response);
            if (body != null) {
                run(wf, ctx, rest.substring("runs/".length()), body, response);
            }
        } else {
            InternalBindings.error(response, 404, "NOT_FOUND", "no such workflow call");
        }
    }

    private static String id(JsonNode id) throws ResourceException {
        if (id == null || id.isNull()) {
            return null;
        }
        if (!id.isTextual()) {
            throw ResourceException.badInput("an instance id must be a string");
        }
        return id.textValue();
    }

    private static String params(JsonNode params) {
        return params == null || params.isMissingNode() ? null : params.toString();
    }

    private static void instance(
            WorkflowFacet wf,
            ResourceContext ctx,
            String id,
            String action,
            String method,
            HttpServletResponse response)
            throws IOException, ResourceException {
        if (action.isEmpty() && method.equals("DELETE")) {
            wf.control(ctx, id, WorkflowFacet.Control.DELETE);
            InternalBindings.json(response, 200, Map.of());
            return;
        }
        if (method.equals("GET") && (action.isEmpty() || action.equals("status"))) {
            Optional<WorkflowFacet.Instance> i = wf.get(ctx, id);
            if (i.isEmpty()) {
                InternalBindings.error(response, 404, "NOT_FOUND", "instance.not_found: Instance does not exist");
                return;
            }
            if (action.isEmpty()) {
                InternalBindings.json(response, 200, Map.of("id", i.get().id()));
                return;
            }
            Map<String, Object> status = new LinkedHashMap<>();
            status.put("status", i.get().status());
            status.put(
                    "output",
                    i.get().outputJson() == null
                            ? null
                            : InternalBindings.JSON.readTree(i.get().outputJson()));
            if (i.get().errorName() != null) {
                status.put(
                        "error",
                        Map.of("name", i.get().errorName(), "message", i.get().errorMessage()));
            }
            InternalBindings.json(response, 200, status);
            return;
        }
        WorkflowFacet.Control control = switch (method.equals("POST") ? action : "") {
            case "pause" -> WorkflowFacet.Control.PAUSE;
            case "resume" -> WorkflowFacet.Control.RESUME;
            case "terminate" -> WorkflowFacet.Control.TERMINATE;
            case "restart" -> WorkflowFacet.Control.RESTART;
            default -> null;
        };
        if (control == null) {
            InternalBindings.error(response, 404, "NOT_FOUND", "no such workflow call");
            return;
        }
        wf.control(ctx, id, control);
        InternalBindings.json(response, 200, Map.of());
    }

    private static void run(
            WorkflowFacet wf, ResourceContext ctx, String call, JsonNode body, HttpServletResponse response)
            throws IOException, ResourceException {
        String id = body.path("instanceId").asText("");
        String lease = body.path("lease").asText("");
        String key = body.path("key").asText("");
        StepAnswer answer;
        switch (call) {
            case "step/begin" -> answer = wf.beginStep(ctx, id, lease, key);
            case "step/complete" ->
                answer = wf.completeStep(
                        ctx,
                        id,
                        lease,
                        key,
                        body.has("value") ? body.get("value").toString() : "null");
            case "step/fail" -> {
                JsonNode r = body.path("retries");
                answer = wf.failStep(
                        ctx,
                        id,
                        lease,
                        key,
                        body.path("error").path("name").asText("Error"),
                        body.path("error").path("message").asText(""),
                        body.path("retryable").asBoolean(true),
                        new WorkflowFacet.Retries(
                                r.path("limit").asInt(5),
                                r.path("delay").asLong(10_000),
                                r.path("backoff").asText("exponential")));
            }
            case "sleep" -> {
                Instant until = body.has("until")
                        ? Instant.ofEpochMilli(body.get("until").asLong())
                        : Instant.now()
                                .plusMillis(Math.max(0, body.path("durationMs").asLong(0)));
                answer = wf.sleep(ctx, id, lease, key, until);
            }
            case "finish" -> {
                JsonNode error = body.get("error");
                boolean done = (error != null && !error.isNull())
                        ? wf.finish(
                                ctx,
                                id,
                                lease,
                                null,
                                error.path("name").asText("Error"),
                                error.path("message").asText(""))
                        : wf.finish(
                                ctx,
                                id,
                                lease,
                                body.has("output") ? body.get("output").toString() : "null",
                                null,
                                null);
                InternalBindings.json(response, 200, Map.of("finished", done));
                return;
            }
            default -> {
                InternalBindings.error(response, 404, "NOT_FOUND", "no such workflow call");
                return;
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("action", answer.action().name().toLowerCase(java.util.Locale.ROOT));
        if (answer.action() == StepAnswer.Action.REPLAY) {
            out.put("value", answer.valueJson() == null ? null : InternalBindings.JSON.readTree(answer.valueJson()));
        } else if (answer.action() == StepAnswer.Action.THROW) {
            out.put(
                    "error",
                    Map.of(
                            "name",
                            answer.errorName(),
                            "message",
                            answer.errorMessage() == null ? "" : answer.errorMessage()));
        } else if (answer.action() == StepAnswer.Action.RUN) {
            out.put("attempt", answer.attempt());
        } else if (answer.action() == StepAnswer.Action.WAIT) {
            out.put("waitMillis", answer.waitMillis());
        }
        InternalBindings.json(response, 200, out);
    }

    private static JsonNode body(HttpServletRequest request, HttpServletResponse response) throws IOException {
        byte[] body = request.getInputStream().readNBytes((2 << 20) + 1);
        if (body.length > 2 << 20) {
            InternalBindings.error(response, 413, "PAYLOAD_TOO_LARGE", "a body must be at most 2 MiB");
            return null;
        }
        try {
            JsonNode n = InternalBindings.JSON.readTree(body);
            if (n == null || n.isMissingNode()) {
                throw new IOException("empty");
            }
            return n;
        } catch (IOException e) {
            InternalBindings.error(response, 400, "BAD_REQUEST", "the body must be JSON");
            return null;
        }
    }
}
