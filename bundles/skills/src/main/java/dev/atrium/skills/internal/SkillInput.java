package dev.atrium.skills.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.NulText;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A custom skill's fields from a request body, checked before anything changes: {@code name} (lower-case letters,
 * digits and '-', 1-64, starting with a letter or digit), {@code description} (1-500), {@code instructions}
 * (1-20,000), {@code tools} (at most 32 tool names {@code [a-z0-9_]+}) and {@code enabled}. {@code from_official}
 * names an official skill whose fields fill in what the body does not give.
 */
record SkillInput(
        String name, String description, String instructions, List<String> tools, boolean enabled, String source) {

    static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");
    private static final Pattern TOOL = Pattern.compile("[a-z0-9_]{1,64}");
    static final int MAX_DESCRIPTION = 500;
    static final int MAX_INSTRUCTIONS = 20_000;
    static final int MAX_TOOLS = 32;
    private static final Set<String> FIELDS =
            Set.of("name", "description", "instructions", "tools", "enabled", "from_official");

    /**
     * A whole skill. {@code pathName} is the name the route gives (PUT by name), or null; {@code current} the skill
     * being replaced (whose enabled state stays unless the body sets it), or null.
     */
    static SkillInput of(JsonNode node, String pathName, SkillStore.Skill current, OfficialSkills catalog) {
        JsonBody body = JsonBody.of(node);
        NulText.reject(node);
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw ApiException.badRequest("unknown field " + f
                        + " (fields: name, description, instructions, tools, enabled, from_official)");
            }
        }
        SkillDocument official = body.string("from_official")
                .map(id -> catalog.get(id)
                        .orElseThrow(() -> ApiException.badRequest("from_official names no official skill: " + id)))
                .orElse(null);
        String name;
        if (pathName != null) {
            name = name(pathName);
            if (body.has("name") && !name.equals(body.requiredString("name"))) {
                throw ApiException.badRequest(
                        "name in the body must be the name in the path (rename through /skills/id/:skillId)");
            }
        } else if (body.has("name") || official == null) {
            name = name(body.requiredString("name"));
        } else {
            name = official.name();
        }
        String description = body.has("description") || official == null
                ? body.text("description", 1, MAX_DESCRIPTION)
                : official.description();
        String instructions = body.has("instructions") || official == null
                ? body.text("instructions", 1, MAX_INSTRUCTIONS)
                : official.instructions();
        List<String> tools = node.has("tools") && !node.get("tools").isNull()
                ? tools(node.get("tools"))
                : official != null ? official.tools() : List.of();
        boolean enabled = body.bool("enabled").orElse(current == null || current.enabled());
        return new SkillInput(
                name, description, instructions, tools, enabled, official == null ? null : official.name());
    }

    static String name(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw ApiException.badRequest(
                    "name must be 1-64 lower-case letters, digits and '-', starting with a letter or digit");
        }
        return name;
    }

    private static List<String> tools(JsonNode node) {
        if (!node.isArray()) {
            throw ApiException.badRequest("tools must be an array of tool names");
        }
        if (node.size() > MAX_TOOLS) {
            throw ApiException.badRequest("tools must name at most " + MAX_TOOLS + " tools");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode t : node) {
            if (!t.isTextual() || !TOOL.matcher(t.textValue()).matches()) {
                throw ApiException.badRequest("each tool must be a tool name of lower-case letters, digits and '_'");
            }
            if (!out.contains(t.textValue())) {
                out.add(t.textValue());
            }
        }
        return List.copyOf(out);
    }
}
