package dev.atrium.agenttasks.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.agenttasks.internal.AgentTaskStore.Task;
import dev.atrium.billing.api.BillingGate;
import dev.atrium.billing.api.Meters;
import dev.atrium.billing.api.UsageEvent;
import dev.atrium.billing.api.UsageRecorder;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceModels;
import dev.atrium.runs.api.ModelProvider;
import java.io.IOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the workspace's model for a task's steps: the model the workspace chose (kernel.api {@link WorkspaceModels}),
 * on the registered {@link ModelProvider} of that name. Gated and metered as a run's model turn (billing's
 * {@code run_tokens_in}/{@code run_tokens_out}), so a plan costs what a turn costs.
 */
@Component(service = TaskPlanner.class)
public class TaskPlanner {

    private static final Logger LOG = LoggerFactory.getLogger(TaskPlanner.class);

    static final String SYSTEM_PROMPT = "You plan work for an AI agent. Break the user's task into 3 to 10 concrete, "
            + "ordered steps. Answer with JSON only, no prose and no code fence, exactly of this shape: "
            + "{\"steps\":[{\"title\":\"a short imperative title\",\"detail\":\"what to do and how to tell it is "
            + "done\"}]}";
    static final int MAX_OUTPUT_TOKENS = 2_048;
    static final String MODEL_ERROR = "MODEL_ERROR";

    private final WorkspaceModels models;
    private final AgentTasksSettings settings;
    private final ObjectMapper json = JsonMappers.create();
    private final Map<String, ModelProvider> providers = new ConcurrentHashMap<>();
    private final ExecutorService calls = Executors.newCachedThreadPool(NamedThreads.factory("atrium-task-plan"));

    /** Asked before the model turn; absent while billing is not installed (everything is allowed). */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile BillingGate gate;

    /** Where the turn's tokens are counted; absent while billing is not installed. */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile UsageRecorder usage;

    @Activate
    public TaskPlanner(@Reference WorkspaceModels models, @Reference AgentTasksSettings settings) {
        this.models = models;
        this.settings = settings;
    }

    @Reference(
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addProvider(ModelProvider p) {
        providers.put(p.name(), p);
    }

    void removeProvider(ModelProvider p) {
        providers.remove(p.name(), p);
    }

    @Deactivate
    void deactivate() {
        calls.shutdownNow();
    }

    /**
     * The plan for {@code task} as the JSON text to store: {@code {steps:[{title, detail, done}], model, created_at}}.
     *
     * @throws ApiException 409 when the workspace chose no model, 402 when billing refuses, 502 {@code MODEL_ERROR}
     *                      when the provider is missing, fails, times out or answers no steps
     */
    String plan(Caller caller, SpaceRef space, Task task) {
        WorkspaceModels.Choice choice = models.model(caller, space.id());
        String providerName = first(choice.provider(), settings.defaultProvider);
        String model = first(choice.model(), settings.defaultModel);
        if (providerName == null || model == null) {
            throw ApiException.conflict(
                    "this workspace has no model chosen; choose one with PATCH /api/spaces/:spaceId/model");
        }
        ModelProvider provider = providers.get(providerName);
        if (provider == null) {
            throw modelError("the model provider '" + providerName + "' is not available");
        }
        BillingGate g = gate;
        if (g != null) {
            BillingGate.Decision d = g.check(space.id(), Meters.RUN_TOKENS_IN);
            if (!d.allowed()) {
                throw new ApiException(402, "PAYMENT_REQUIRED", d.reason());
            }
        }
        ModelProvider.Reply reply = call(
                provider,
                new ModelProvider.Request(
                        model,
                        SYSTEM_PROMPT,
                        List.of(ModelProvider.Message.user(prompt(task))),
                        List.of(),
                        MAX_OUTPUT_TOKENS));
        meter(space, model, reply.usage());
        List<PlanParser.Step> steps = PlanParser.parse(reply.text());
        if (steps.isEmpty()) {
            throw modelError("the model's answer held no steps");
        }
        ObjectNode plan = json.createObjectNode();
        ArrayNode out = plan.putArray("steps");
        for (PlanParser.Step s : steps) {
            out.addObject().put("title", s.title()).put("detail", s.detail()).put("done", false);
        }
        plan.put("model", model);
        plan.put("created_at", Instant.now().truncatedTo(ChronoUnit.MILLIS).toString());
        return plan.toString();
    }

    /** What the model is told of the task. */
    static String prompt(Task task) {
        StringBuilder sb = new StringBuilder("Task: ").append(task.title());
        if (task.description() != null && !task.description().isBlank()) {
            sb.append("\n\nDescription:\n").append(task.description());
        }
        if (task.dueAt() != null) {
            sb.append("\n\nDue: ").append(task.dueAt());
        }
        sb.append("\nPriority: ").append(task.priority());
        return sb.toString();
    }

    private ModelProvider.Reply call(ModelProvider provider, ModelProvider.Request request) {
        Future<ModelProvider.Reply> call = calls.submit(() -> provider.complete(request, delta -> {}));
        try {
            ModelProvider.Reply reply = call.get(settings.planTimeoutSeconds, TimeUnit.SECONDS);
            if (reply == null) {
                throw modelError("the model provider gave no answer");
            }
            return reply;
        } catch (TimeoutException e) {
            throw modelError("the model did not answer within " + settings.planTimeoutSeconds + " seconds");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("the server is stopping");
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException) {
                throw modelError("the model provider failed: " + cause.getMessage());
            }
            LOG.warn("the model provider {} failed on a plan", provider.name(), cause);
            throw modelError("the model provider failed");
        } finally {
            call.cancel(true);
        }
    }

    /** Counts the turn's tokens as a run's; the key makes this plan counted once. */
    private void meter(SpaceRef space, String model, ModelProvider.Usage tokens) {
        UsageRecorder recorder = usage;
        if (recorder == null) {
            return;
        }
        String key = "task-plan:" + Ids.id("plan");
        if (tokens.inputTokens() > 0) {
            recorder.record(new UsageEvent(
                    space.id(), Meters.RUN_TOKENS_IN, model, tokens.inputTokens(), key + ":in", Instant.now()));
        }
        if (tokens.outputTokens() > 0) {
            recorder.record(new UsageEvent(
                    space.id(), Meters.RUN_TOKENS_OUT, model, tokens.outputTokens(), key + ":out", Instant.now()));
        }
    }

    static ApiException modelError(String message) {
        return new ApiException(502, MODEL_ERROR, message);
    }

    private static String first(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
    }
}
