package dev.atrium.browser.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.runs.api.AgentTool;
import dev.atrium.runs.api.AgentToolSource;
import dev.atrium.runs.api.ToolArguments;
import dev.atrium.storage.api.WorkspaceFiles;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * The agent's browser tools, offered through runs.api's {@link AgentToolSource} to runs holding {@code egress.http}
 * (a {@code restricted_egress} workspace's runs are not offered them): {@code browser_goto} opens a session of the
 * run's requester in the run's workspace (or reuses one it names) and navigates; {@code browser_extract} reads the
 * page; {@code browser_screenshot} saves a PNG of it to the workspace's storage (runs also holding
 * {@code storage.write}). A run reaches only sessions of its own workspace and requester; the same caps, idle timeout and egress policy
 * as the routes apply. They live in this bundle so that runs imports nothing of it.
 */
@Component(service = AgentToolSource.class)
public class BrowserTools implements AgentToolSource {

    static final String GRANT = "egress.http";
    /** The most text a tool hands the model: a page's text can be megabytes. */
    static final int MAX_RESULT = 20_000;

    private final BrowserSessions sessions;
    private final List<AgentTool> tools;
    private final AgentTool screenshot = new Screenshot();

    /** Where screenshots are saved; absent while storage is not installed (then there is no screenshot tool). */
    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile WorkspaceFiles files;

    @Activate
    public BrowserTools(@Reference BrowserSessions sessions) {
        this.sessions = sessions;
        this.tools = List.of(new Goto(), new Extract());
    }

    @Override
    public List<AgentTool> tools(AgentTool.Context context) {
        if (!context.grants().contains(GRANT)) {
            return List.of();
        }
        return files != null && context.grants().containsAll(screenshot.requiredGrants())
                ? List.of(tools.get(0), tools.get(1), screenshot)
                : tools;
    }

    /** The run's own session named by {@code session_id}: another workspace's or requester's is "no such session". */
    private BrowserSession own(AgentTool.Context context, JsonNode args) throws IOException {
        String id = ToolArguments.text(args, "session_id");
        return sessions.find(id)
                .filter(s -> s.spaceId.equals(context.spaceId()) && s.principalId.equals(context.principalId()))
                .orElseThrow(() -> new IOException("no browser session " + id + " in this workspace"));
    }

    private abstract static class Tool implements AgentTool {
        @Override
        public Set<String> requiredGrants() {
            return Set.of(GRANT);
        }
    }

    private final class Goto extends Tool {
        @Override
        public String name() {
            return "browser_goto";
        }

        @Override
        public String description() {
            return "Open a URL in a headless browser. Without session_id a new browser session starts; pass the"
                    + " session_id it returns to browser_goto and browser_extract to keep using it.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"},"
                    + "\"session_id\":{\"type\":\"string\"}},\"required\":[\"url\"]}";
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            JsonNode args = ToolArguments.parse(arguments);
            String url = ToolArguments.text(args, "url");
            if (url.length() > BrowserSessionResource.MAX_URL) {
                throw new IOException("url must be at most " + BrowserSessionResource.MAX_URL + " characters");
            }
            BrowserSession session;
            if (args.hasNonNull("session_id")) {
                session = own(context, args);
            } else {
                try {
                    session = sessions.start(
                            context.principalId(),
                            context.spaceId(),
                            SpaceBrowserSessionsResource.DEFAULT_WIDTH,
                            SpaceBrowserSessionsResource.DEFAULT_HEIGHT,
                            sessions.maxIdle());
                } catch (BrowserSessions.CapReached refused) {
                    throw new IOException(refused.getMessage(), refused);
                }
            }
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("session_id", session.id);
            try {
                result.putAll(session.navigate(url.trim(), BrowserSessionResource.DEFAULT_NAVIGATION_MS));
            } catch (ApiException refused) {
                throw new IOException(refused.getMessage(), refused);
            }
            return Cdp.JSON.writeValueAsString(result);
        }
    }

    private final class Extract extends Tool {
        @Override
        public String name() {
            return "browser_extract";
        }

        @Override
        public String description() {
            return "Read the page of a browser session: kind text (default), links, table or accessibility, of the"
                    + " whole page or of the element a CSS selector names.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},"
                    + "\"kind\":{\"type\":\"string\",\"enum\":[\"text\",\"links\",\"table\",\"accessibility\"]},"
                    + "\"selector\":{\"type\":\"string\"}},\"required\":[\"session_id\"]}";
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            JsonNode args = ToolArguments.parse(arguments);
            BrowserSession session = own(context, args);
            String kind = args.hasNonNull("kind") ? ToolArguments.text(args, "kind") : "text";
            if (!BrowserSessionResource.EXTRACT_KINDS.contains(kind)) {
                throw new IOException(
                        "kind must be one of " + BrowserAction.sorted(BrowserSessionResource.EXTRACT_KINDS));
            }
            ObjectNode targetFields = Cdp.JSON.createObjectNode();
            if (args.hasNonNull("selector")) {
                targetFields.set("selector", args.get("selector"));
            }
            try {
                String text = Cdp.JSON.writeValueAsString(session.extract(kind, BrowserAction.target(targetFields)));
                return text.length() <= MAX_RESULT
                        ? text
                        : text.substring(0, MAX_RESULT) + " … (cut at " + MAX_RESULT + " characters)";
            } catch (ApiException refused) {
                throw new IOException(refused.getMessage(), refused);
            }
        }
    }

    /** A PNG of the page, saved to the workspace's storage: a model reads text, so the tool answers where it is. */
    private final class Screenshot implements AgentTool {
        @Override
        public String name() {
            return "browser_screenshot";
        }

        @Override
        public String description() {
            return "Save a PNG screenshot of a browser session's page (the viewport, or the whole page with"
                    + " full_page) to the workspace's storage at path; answers the stored file's path and size.";
        }

        @Override
        public String parametersSchema() {
            return "{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},"
                    + "\"path\":{\"type\":\"string\"},\"full_page\":{\"type\":\"boolean\"}},"
                    + "\"required\":[\"session_id\",\"path\"]}";
        }

        @Override
        public Set<String> requiredGrants() {
            return Set.of(GRANT, "storage.write");
        }

        @Override
        public String execute(Context context, String arguments) throws Exception {
            JsonNode args = ToolArguments.parse(arguments);
            BrowserSession session = own(context, args);
            String path = ToolArguments.text(args, "path");
            if (!path.toLowerCase(java.util.Locale.ROOT).endsWith(".png")) {
                throw new IOException("path must name a .png file");
            }
            WorkspaceFiles storage = files;
            if (storage == null) {
                throw new IOException("storage is not running");
            }
            byte[] png;
            try {
                png = session.screenshot(args.path("full_page").asBoolean(false));
            } catch (ApiException refused) {
                throw new IOException(refused.getMessage(), refused);
            }
            WorkspaceFiles.StoredFile saved = storage.write(context.spaceId(), path, png, "image/png");
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("path", saved.path());
            result.put("file_id", saved.id());
            result.put("size", saved.size());
            return Cdp.JSON.writeValueAsString(result);
        }
    }
}
