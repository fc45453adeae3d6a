package dev.atrium.runs.internal;

import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.AgentToolSource;
import dev.atrium.runs.api.ModelProvider;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * Offers and runs the registered {@link AgentTool}s, each only to a run that holds every grant it needs. A tool
 * the run may not use is neither offered nor executed, even when the model names it.
 */
@Component(service = ToolExecutor.class)
public class ToolExecutor {

    /** Every grant of DESIGN §2. */
    static final Set<String> ALL_GRANTS = Set.of(
            "storage.read",
            "storage.write",
            "repo.read",
            "repo.write",
            "egress.http",
            "oauth.exchange",
            "vectorize.write",
            "queue.write",
            "analytics.write",
            "workflow.invoke",
            "durable_object.use",
            "billing.meter");

    static final int MAX_RESULT = 20_000;

    private final Map<String, AgentTool> tools = new ConcurrentHashMap<>();

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addTool(AgentTool tool) {
        tools.put(tool.name(), tool);
    }

    void removeTool(AgentTool tool) {
        tools.remove(tool.name(), tool);
    }

    private final List<AgentToolSource> sources = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC)
    void addSource(AgentToolSource source) {
        sources.add(source);
    }

    void removeSource(AgentToolSource source) {
        sources.remove(source);
    }

    /**
     * The tools a run may use now: the registered ones and what every {@link AgentToolSource} answers for its
     * workspace (a registered tool's name is never shadowed; a source that fails offers nothing).
     */
    Map<String, AgentTool> available(AgentTool.Context context) {
        Map<String, AgentTool> all = new java.util.HashMap<>(tools);
        for (AgentToolSource source : sources) {
            List<AgentTool> more;
            try {
                more = source.tools(context);
            } catch (RuntimeException | LinkageError e) {
                continue;
            }
            if (more != null) {
                more.forEach(t -> all.putIfAbsent(t.name(), t));
            }
        }
        all.values().removeIf(t -> !context.grants().containsAll(t.requiredGrants()));
        return all;
    }

    List<ModelProvider.Tool> offered(AgentTool.Context context) {
        List<ModelProvider.Tool> out = new ArrayList<>();
        available(context).values().stream()
                .sorted(Comparator.comparing(AgentTool::name))
                .forEach(t -> out.add(new ModelProvider.Tool(t.name(), t.description(), t.parametersSchema())));
        return out;
    }

    /** The grants of a run in a workspace of {@code securityPosture}: {@code restricted_egress} drops {@code egress.http}. */
    static Set<String> grants(String securityPosture) {
        if ("restricted_egress".equals(securityPosture)) {
            Set<String> g = new java.util.HashSet<>(ALL_GRANTS);
            g.remove("egress.http");
            return Set.copyOf(g);
        }
        return ALL_GRANTS;
    }

    record Result(String text, boolean error) {}

    /**
     * Runs a tool call; whatever the tool throws becomes an error result the model sees, except an interruption
     * (the run was cancelled, or this instance stops), which ends the run.
     */
    Result execute(ModelProvider.ToolCall call, AgentTool.Context context) throws InterruptedException {
        if (call.name() == null || call.name().isBlank()) {
            return new Result("error: the tool call names no tool", true);
        }
        AgentTool tool = tools.get(call.name());
        if (tool == null && !sources.isEmpty()) {
            tool = available(context).get(call.name());
        }
        if (tool == null || !context.grants().containsAll(tool.requiredGrants())) {
            return new Result("tool '" + call.name() + "' is not available to this run", true);
        }
        String arguments = call.arguments() == null || call.arguments().isBlank() ? "{}" : call.arguments();
        try {
            if (!RunStore.JSON.readTree(arguments).isObject()) {
                return new Result("error: the arguments must be a JSON object", true);
            }
        } catch (java.io.IOException | RuntimeException e) {
            return new Result("error: the arguments are not valid JSON", true);
        }
        try {
            String r = tool.execute(context, arguments);
            return new Result(truncate(r == null ? "" : r), false);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception | LinkageError | StackOverflowError e) {
            return new Result(
                    truncate("error: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage())),
                    true);
        }
    }

    private static String truncate(String s) {
        return s.length() <= MAX_RESULT ? s : s.substring(0, MAX_RESULT) + "\n[truncated]";
    }
}
