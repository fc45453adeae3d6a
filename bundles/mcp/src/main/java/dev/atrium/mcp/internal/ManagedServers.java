package dev.atrium.mcp.internal;

import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.mcp.api.McpEndpoints;
import dev.atrium.mcp.internal.McpServerStore.Server;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Servers other capabilities register for a workspace ({@link McpEndpoints}): rows of the same table, marked with
 * their manager. Their URLs name this server's own app hostnames, so they are checked for form here and pass the
 * egress guard when a run connects, like every other server's.
 */
@Component(service = McpEndpoints.class)
public class ManagedServers implements McpEndpoints {

    private final McpServerStore store;
    private final McpOAuth oauth;

    @Activate
    public ManagedServers(@Reference McpServerStore store, @Reference McpOAuth oauth) {
        this.store = store;
        this.oauth = oauth;
    }

    @Override
    public String register(SpaceRef space, String manager, String name, String url) {
        if (manager == null || manager.isBlank()) {
            throw new IllegalArgumentException("a managed MCP server needs its manager");
        }
        if (!McpServersResource.NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("MCP server name '" + name
                    + "' must be 1 to 32 characters of a-z, 0-9, '_' and '-', starting with a letter or digit");
        }
        checkUrl(url);
        Optional<Server> had = store.byName(space.id(), name);
        if (had.isPresent()) {
            Server s = had.get();
            if (!manager.equals(s.managedBy())) {
                throw new IllegalStateException("the workspace has an MCP server named '" + name + "' that "
                        + (s.managedBy() == null ? "its owner registered" : s.managedBy() + " manages"));
            }
            if (!s.url().equals(url) || !"streamable_http".equals(s.transport())) {
                oauth.forget(s.id());
                store.update(s.id(), null, url, "streamable_http", null);
            }
            return s.id();
        }
        if (store.count(space.id()) >= McpServersResource.MAX_SERVERS) {
            throw new IllegalStateException(
                    "a workspace has at most " + McpServersResource.MAX_SERVERS + " MCP servers");
        }
        return store.create(space.id(), name, url, "streamable_http", true, manager)
                .id();
    }

    @Override
    public boolean remove(SpaceRef space, String manager, String serverId) {
        Optional<Server> s = store.get(serverId);
        if (s.isEmpty()
                || !s.get().spaceId().equals(space.id())
                || !manager.equals(s.get().managedBy())) {
            return false;
        }
        oauth.forget(serverId);
        return store.delete(serverId);
    }

    private static void checkUrl(String url) {
        try {
            URI u = new URI(url);
            if (url.length() > McpServersResource.MAX_URL
                    || !("https".equals(u.getScheme()) || "http".equals(u.getScheme()))
                    || u.getHost() == null
                    || u.getRawUserInfo() != null
                    || u.getRawFragment() != null) {
                throw new IllegalArgumentException("MCP server URL '" + url + "' must be an absolute http(s) URL");
            }
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("MCP server URL '" + url + "' is not a valid URL", e);
        }
    }
}
