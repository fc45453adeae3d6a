package dev.atrium.itests;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The body shapes of an OpenAPI document, to check real requests and answers against: a shape that does not say what
 * the server really sends is worse than none. A 2xx answer is checked against its operation's JSON schema, any other
 * against the error body; a request body against its operation's.
 */
final class DocumentedShapes {

    private static final JsonSchemaFactory SCHEMAS = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);

    private record Operation(String method, Pattern path, int literalChars, JsonNode op) {}

    private final List<Operation> operations = new ArrayList<>();
    private final JsonSchema error;
    private int checkedAnswers;

    DocumentedShapes(JsonNode document) {
        for (Iterator<Map.Entry<String, JsonNode>> paths = document.get("paths").fields(); paths.hasNext(); ) {
            Map.Entry<String, JsonNode> path = paths.next();
            String template = path.getKey();
            Pattern pattern = Pattern.compile(Pattern.quote(template)
                    .replaceAll("\\{[^}/]+}", "\\\\E[^/]+\\\\Q")
                    .replace("\\Q\\E", ""));
            int literal = template.replaceAll("\\{[^}/]+}", "").length();
            for (Iterator<Map.Entry<String, JsonNode>> verbs = path.getValue().fields(); verbs.hasNext(); ) {
                Map.Entry<String, JsonNode> verb = verbs.next();
                operations.add(
                        new Operation(verb.getKey().toUpperCase(Locale.ROOT), pattern, literal, verb.getValue()));
            }
        }
        error = SCHEMAS.getSchema(document.path("components").path("schemas").path("Error"));
    }

    /** How an answer breaks its documented shape, or null when it keeps it (or nothing is documented). */
    String answerProblem(String method, String target, int status, JsonNode answer) {
        if (answer == null) {
            return null;
        }
        if (status < 200 || status > 299) {
            return problems("the error answer", error, answer);
        }
        JsonNode schema = operation(method, target)
                .path("responses")
                .path("2XX")
                .path("content")
                .path("application/json")
                .path("schema");
        if (schema.isMissingNode() || schema.isEmpty()) {
            return null;
        }
        checkedAnswers++;
        return problems("the answer", SCHEMAS.getSchema(schema), answer);
    }

    /** How many 2xx answers had a documented shape to be checked against. */
    int checkedAnswers() {
        return checkedAnswers;
    }

    /** How a request body breaks its documented shape, or null. */
    String bodyProblem(String method, String target, JsonNode body) {
        if (body == null) {
            return null;
        }
        JsonNode schema = operation(method, target)
                .path("requestBody")
                .path("content")
                .path("application/json")
                .path("schema");
        return schema.isMissingNode() || schema.isEmpty()
                ? null
                : problems("the request body", SCHEMAS.getSchema(schema), body);
    }

    /** The operation answering a request: of the templates matching its path, the one with the most literal text. */
    private JsonNode operation(String method, String target) {
        String path = target.replaceFirst("[?#].*$", "");
        Operation best = null;
        for (Operation o : operations) {
            if (o.method().equals(method)
                    && o.path().matcher(path).matches()
                    && (best == null || o.literalChars() > best.literalChars())) {
                best = o;
            }
        }
        return best == null ? com.fasterxml.jackson.databind.node.MissingNode.getInstance() : best.op();
    }

    private static String problems(String what, JsonSchema schema, JsonNode json) {
        Set<ValidationMessage> errors = schema.validate(json);
        if (errors.isEmpty()) {
            return null;
        }
        Set<String> messages = new TreeSet<>();
        errors.forEach(e -> messages.add(e.getMessage()));
        return what + " does not have its documented shape: " + String.join("; ", messages);
    }
}
