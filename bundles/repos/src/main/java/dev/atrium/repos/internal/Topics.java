package dev.atrium.repos.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/** A repository's topics, as GitHub takes them: lower case, letters, digits and hyphens, at most 20 of 50 characters. */
final class Topics {

    static final int MOST = 20;
    private static final Pattern TOPIC = Pattern.compile("[a-z0-9][a-z0-9-]{0,49}");

    private Topics() {}

    /** The {@code topics} of a body (lower-cased, duplicates dropped), or null when it has none; 400 when malformed. */
    static List<String> of(JsonNode body) {
        JsonNode t = body == null ? null : body.get("topics");
        if (t == null || t.isNull()) {
            return null;
        }
        if (!t.isArray()) {
            throw ApiException.badRequest("topics must be an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode n : t) {
            if (!n.isTextual()) {
                throw ApiException.badRequest("topics must be an array of strings");
            }
            String topic = n.textValue().trim().toLowerCase(Locale.ROOT);
            if (!TOPIC.matcher(topic).matches()) {
                throw ApiException.badRequest(
                        "a topic is 1 to 50 lower-case letters, digits and hyphens, starting with a letter or digit");
            }
            if (!out.contains(topic)) {
                out.add(topic);
            }
        }
        if (out.size() > MOST) {
            throw ApiException.badRequest("a repository has at most " + MOST + " topics");
        }
        return out;
    }
}
