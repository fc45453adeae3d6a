package dev.atrium.repos.pulls.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.WorkspaceModels;
import dev.atrium.repos.pulls.internal.PullStore.Pull;
import dev.atrium.runs.api.ModelProvider;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * A review written by the workspace's model (the one its agents use): the diff goes to the model in chunks that fit its
 * context, each answered with notes on lines of the head, gathered into one review. With no model chosen, or its
 * provider not running, it says so at once.
 */
@Component(service = AiReviewer.class)
public class AiReviewer {

    /** The diff's patches read for a review, in all. */
    static final int MAX_DIFF = 400_000;
    /** One request's share of the diff (characters): about 6,000 tokens, inside any chat model's context. */
    static final int CHUNK = 24_000;

    private static final int MAX_NOTES = 50;
    private static final ObjectMapper JSON = JsonMappers.create();
    private static final String SYSTEM = "You review a pull request's diff. Answer only with JSON:"
            + " {\"summary\": \"...\", \"comments\": [{\"path\": \"file\", \"line\": N, \"body\": \"...\"}]}"
            + " where line is a line number of the file after the change. Comment only on real problems.";

    private final WorkspaceModels models;
    private final List<ModelProvider> providers = new CopyOnWriteArrayList<>();

    @Activate
    public AiReviewer(@Reference WorkspaceModels models) {
        this.models = models;
    }

    @Reference(
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void addProvider(ModelProvider p) {
        providers.add(p);
    }

    void removeProvider(ModelProvider p) {
        providers.remove(p);
    }

    /** A note on a line of the head. */
    record Note(String path, int line, String body) {}

    /** The review's text and its notes. */
    record Written(String body, List<Note> notes) {}

    Written review(Caller caller, String spaceId, Pull p, Map<String, Object> diff) {
        WorkspaceModels.Choice choice = models.model(caller, spaceId);
        if (choice == null || choice.model() == null || choice.provider() == null) {
            throw ApiException.conflict("no model is configured for this workspace (PATCH /api/spaces/:spaceId/model)");
        }
        ModelProvider provider = providers.stream()
                .filter(m -> m.name().equals(choice.provider()))
                .findFirst()
                .orElseThrow(
                        () -> ApiException.unavailable("the model provider " + choice.provider() + " is not running"));
        List<String> chunks = chunks(diff);
        if (chunks.isEmpty()) {
            throw ApiException.conflict("the pull request changes nothing to review");
        }
        StringBuilder summary = new StringBuilder("Review by " + choice.model() + ".");
        List<Note> notes = new ArrayList<>();
        for (int i = 0; i < chunks.size(); i++) {
            String prompt = "Pull request #" + p.number() + ": " + p.title() + "\n\nPart " + (i + 1) + " of "
                    + chunks.size() + " of its diff:\n\n" + chunks.get(i);
            ModelProvider.Reply reply;
            try {
                reply = provider.complete(
                        new ModelProvider.Request(
                                choice.model(), SYSTEM, List.of(ModelProvider.Message.user(prompt)), List.of(), 2048),
                        delta -> {});
            } catch (IOException e) {
                throw new ApiException(502, "BAD_GATEWAY", "the model provider failed: " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw ApiException.unavailable("interrupted while the model wrote the review");
            }
            read(reply.text(), summary, notes);
        }
        return new Written(summary.toString(), notes.size() > MAX_NOTES ? notes.subList(0, MAX_NOTES) : notes);
    }

    /**
     * The diff's per-file patches in chunks of at most {@link #CHUNK} characters: a patch that fits a chunk starts a
     * new one rather than being cut; a larger one fills the current chunk and goes on in the next.
     */
    @SuppressWarnings("unchecked")
    static List<String> chunks(Map<String, Object> diff) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (Map<String, Object> f : (List<Map<String, Object>>) diff.get("files")) {
            String patch = (String) f.get("patch");
            if (patch == null || patch.isEmpty()) {
                continue;
            }
            if (current.length() + patch.length() <= CHUNK) {
                current.append(patch);
                continue;
            }
            if (patch.length() <= CHUNK) {
                out.add(current.toString());
                current.setLength(0);
                current.append(patch);
                continue;
            }
            for (int at = 0; at < patch.length(); ) {
                int n = Math.min(CHUNK - current.length(), patch.length() - at);
                current.append(patch, at, at + n);
                at += n;
                if (current.length() == CHUNK) {
                    out.add(current.toString());
                    current.setLength(0);
                }
            }
        }
        if (current.length() > 0) {
            out.add(current.toString());
        }
        return out;
    }

    /** The model's JSON answer (the first object in its text); text that is not JSON becomes part of the summary. */
    static void read(String text, StringBuilder summary, List<Note> notes) {
        if (text == null || text.isBlank()) {
            return;
        }
        int open = text.indexOf('{');
        int close = text.lastIndexOf('}');
        JsonNode answer = null;
        if (open >= 0 && close > open) {
            try {
                answer = JSON.readTree(text.substring(open, close + 1));
            } catch (IOException notJson) {
                answer = null;
            }
        }
        if (answer == null || !answer.isObject()) {
            summary.append("\n\n").append(text.trim());
            return;
        }
        String s = answer.path("summary").asText("").trim();
        if (!s.isEmpty()) {
            summary.append("\n\n").append(s);
        }
        for (JsonNode c : answer.path("comments")) {
            String path = c.path("path").asText("");
            int line = c.path("line").asInt(0);
            String body = c.path("body").asText("").trim();
            if (!path.isEmpty() && line > 0 && !body.isEmpty() && body.length() <= 10_000) {
                notes.add(new Note(path, line, body));
            }
        }
    }
}
