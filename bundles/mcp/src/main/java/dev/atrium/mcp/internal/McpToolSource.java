package dev.atrium.mcp.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.mcp.internal.McpServerStore.Server;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.AgentToolSource;
import dev.atrium.runs.api.ToolArguments;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The tools of a workspace's enabled MCP servers, offered to its runs as {@code mcp_<server>_<tool>}. They need the
 * {@code egress.http} grant (a {@code restricted_egress} workspace's runs are not offered them). A server's tools come
 * from its last listing; a server never listed is listed once, live, with a short deadline. A call re-reads the server
 * (still in the run's workspace, still enabled) and goes through {@link McpClient}, so through the egress guard.
 * Registered as a service only while the runs capability is installed (its API package is an optional import).
 */
@Component(service = AgentToolSource.class)
public class McpToolSource implements AgentToolSource {

    static final int MAX_NAME = 64;
    static final int MAX_DESCRIPTION = 1024;
    static final long FIRST_LISTING_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** A server whose first listing failed is not tried again for this long (each model turn would wait for it). */
    static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** Servers whose first listing failed, and when. */
    private final java.util.Map<String, Long> failed = new java.util.concurrent.ConcurrentHashMap<>();

    private final McpServerStore store;
    private final McpClient client;
    private final McpOAuth oauth;

    @Activate
    public McpToolSource(@Reference McpServerStore store, @Reference McpClient client, @Reference McpOAuth oauth) {
        this.store = store;
        this.client = client;
        this.oauth = oauth;
    }

    @Override
    public List<AgentTool> tools(AgentTool.Context context) {
        if (!context.grants().contains("egress.http")) {
            return List.of();
        }
        List<AgentTool> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (Server server : store.enabled(context.spaceId())) {
            JsonNode tools = server.tools();
            if (tools == null) {
                Long since = failed.get(server.id());
                if (since != null && System.nanoTime() - since < RETRY_NANOS) {
                    continue;
                }
                try {
                    tools = oauth.withToken(
                            server,
                            bearer -> client.listTools(server.url(), server.transport(), bearer, FIRST_LISTING_NANOS));
                    store.rememberTools(server.id(), server.url(), server.transport(), tools);
                    failed.remove(server.id());
                } catch (IOException e) {
                    if (failed.size() > 10_000) {
                        failed.clear();
                    }
                    failed.put(server.id(), System.nanoTime());
                    continue; // offered once the server answers (or its owner lists its tools)
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return out;
                }
            }
            for (JsonNode t : tools) {
                String name = toolName(server.name(), t.path("name").asText());
                if (names.add(name)) {
                    out.add(new McpTool(
                            server.id(),
                            name,
                            t.path("name").asText(),
                            server.name(),
                            t.path("description").asText(""),
                            t.path("input_schema")));
                }
            }
        }
        return out;
    }

    /** {@code mcp_<server>_<tool>} in the characters every model API accepts, at most 64 of them. */
    static String toolName(String server, String tool) {
        String n = ("mcp_" + server + "_" + tool).toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        return n.length() <= MAX_NAME ? n : n.substring(0, MAX_NAME);
    }

    private final class McpTool implements AgentTool {
        private final String serverId;
        private final String name;
        private final String remoteName;
        private final String description;
        private final String schema;

        McpTool(
                String serverId,
                String name,
                String remoteName,
                String serverName,
                String description,
                JsonNode schema) {
            this.serverId = serverId;
            this.name = name;
            this.remoteName = remoteName;
            String d = "[MCP server " + serverName + "] " + description;
            this.description = d.length() <= MAX_DESCRIPTION ? d : d.substring(0, MAX_DESCRIPTION);
            this.schema = schema != null && schema.isObject() ? schema.toString() : "{\"type\":\"object\"}";
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String description() {
            return description;
        }

        @Override
        public String parametersSchema() {
            return schema;
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of("egress.http");
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            if (!context.grants().contains("egress.http")) {
                throw new IOException("this run may not reach the network");
            }
            Server server = store.get(serverId)
                    .filter(s -> s.spaceId().equals(context.spaceId()) && s.enabled())
                    .orElseThrow(() -> new IOException("the MCP server is no longer enabled in this workspace"));
            JsonNode args = ToolArguments.parse(arguments);
            try {
                return oauth.withToken(
                        server, bearer -> client.callTool(server.url(), server.transport(), bearer, remoteName, args));
            } catch (McpClient.AuthorizationRequired e) {
                throw new IOException(
                        "the MCP server requires authorization: its owner connects it with POST /api/mcp/servers/"
                                + server.id() + "/authorize");
            }
        }
    }
}
