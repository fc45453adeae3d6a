package dev.atrium.resources.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.resource.api.Access;
import dev.atrium.resource.api.QueueFacet;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.ToolArguments;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The agent tool {@code queue_write}: sends one message to a {@code queue} resource that the run's workspace owns,
 * named by the resource's name. Offered only to runs holding the {@code queue.write} grant (DESIGN §2); the tool
 * executor has proven the requester and the workspace just before the call. A resource of another workspace — even
 * one shared with this one — is not found: the run acts for its own workspace only.
 */
@Component(service = AgentTool.class)
public class QueueWriteTool implements AgentTool {

    private static final ObjectMapper JSON = JsonMappers.create();

    private final ResourceStore store;
    private final Providers providers;
    private final Runtime runtime;

    @Activate
    public QueueWriteTool(@Reference ResourceStore store, @Reference Providers providers, @Reference Runtime runtime) {
        this.store = store;
        this.providers = providers;
        this.runtime = runtime;
    }

    @Override
    public String name() {
        return "queue_write";
    }

    @Override
    public String description() {
        return "Send a text message to one of the workspace's queue resources, by the queue's name.";
    }

    @Override
    public String parametersSchema() {
        return "{\"type\":\"object\",\"properties\":{\"queue\":{\"type\":\"string\",\"description\":\"the queue resource's name\"},"
                + "\"message\":{\"type\":\"string\"}},\"required\":[\"queue\",\"message\"]}";
    }

    @Override
    public Set<String> requiredGrants() {
        return Set.of("queue.write");
    }

    @Override
    public String execute(Context context, String arguments) throws Exception {
        JsonNode args = ToolArguments.parse(arguments);
        String queue = ToolArguments.text(args, "queue");
        String message = ToolArguments.text(args, "message");
        ResourceTools.Target t = ResourceTools.target(store, providers, context.spaceId(), queue, "queue");
        if (!(t.provider() instanceof QueueFacet facet)) {
            throw new IOException("the provider queue/" + t.row().backend + " cannot send messages");
        }
        try {
            String id =
                    facet.send(runtime.context(t.row(), Access.WRITE), message.getBytes(StandardCharsets.UTF_8), null);
            return JSON.writeValueAsString(Map.of("queue", t.row().name, "message_id", id));
        } catch (ResourceException e) {
            throw ResourceTools.failed(e);
        }
    }
}
