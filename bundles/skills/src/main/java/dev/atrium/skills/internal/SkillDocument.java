package dev.atrium.skills.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A skill as a Markdown file with front matter, the official catalog's format:
 *
 * <pre>
 * ---
 * name: code-review
 * description: One line on when to use it.
 * tools: http_fetch, memory_add      (optional)
 * ---
 * The instructions, in Markdown.
 * </pre>
 */
record SkillDocument(String name, String description, List<String> tools, String instructions) {

    /** Parses {@code text}; {@link IllegalArgumentException} naming what is missing (a catalog file is the bundle's bug). */
    static SkillDocument parse(String text) {
        String t = text.replace("\r\n", "\n");
        if (!t.startsWith("---\n")) {
            throw new IllegalArgumentException("a skill file starts with a '---' front matter line");
        }
        int end = t.indexOf("\n---\n", 3);
        if (end < 0) {
            throw new IllegalArgumentException("the front matter has no closing '---' line");
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : t.substring(4, end).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("front matter line without 'key: value': " + line);
            }
            fields.put(
                    line.substring(0, colon).trim(), line.substring(colon + 1).trim());
        }
        String name = fields.get("name");
        String description = fields.get("description");
        String instructions = t.substring(end + 5).strip();
        if (name == null || !SkillInput.NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("name must match " + SkillInput.NAME.pattern() + ": " + name);
        }
        if (description == null || description.isEmpty() || instructions.isEmpty()) {
            throw new IllegalArgumentException("skill " + name + " needs a description and instructions");
        }
        List<String> tools = new ArrayList<>();
        String list = fields.getOrDefault("tools", "").replace("[", "").replace("]", "");
        for (String tool : list.split(",")) {
            if (!tool.isBlank()) {
                tools.add(tool.trim());
            }
        }
        return new SkillDocument(name, description, List.copyOf(tools), instructions);
    }

    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", name);
        m.put("name", name);
        m.put("description", description);
        m.put("instructions", instructions);
        m.put("tools", tools);
        m.put("official", true);
        return m;
    }
}
