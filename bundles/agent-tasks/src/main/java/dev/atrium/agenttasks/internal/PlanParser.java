package dev.atrium.agenttasks.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.NulText;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a plan's steps out of a model's answer, leniently: models asked for {@code {"steps":[{"title","detail"}]}}
 * also wrap it in a code fence or a sentence, answer a bare array, use other field names, or write a numbered list.
 */
final class PlanParser {

    static final int MAX_STEPS = 50;
    static final int MAX_TITLE = 200;
    static final int MAX_DETAIL = 2_000;

    private static final ObjectMapper JSON = JsonMappers.create();
    private static final Pattern ITEM = Pattern.compile(
            "^\\s*(?:\\d{1,3}[.)]|[-*\u2022]|step\\s+\\d{1,3}[.:)]?)\\s+(.+)$", Pattern.CASE_INSENSITIVE);
    private static final Pattern TITLE_DETAIL = Pattern.compile("^(.{1,200}?)(?::\\s+|\\s+[-\u2013\u2014]\\s+)(.+)$");

    private PlanParser() {}

    record Step(String title, String detail) {}

    /** The steps of {@code answer}; empty when it holds none. */
    static List<Step> parse(String answer) {
        if (answer == null || answer.isBlank()) {
            return List.of();
        }
        List<Step> fromJson = fromJson(answer);
        return fromJson.isEmpty() ? fromList(answer) : fromJson;
    }

    /** The first JSON value in the text (an object with steps, or an array) that yields steps. */
    private static List<Step> fromJson(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c != '{' && c != '[') {
                continue;
            }
            JsonNode node;
            try {
                node = JSON.readTree(text.substring(i));
            } catch (IOException notJsonHere) {
                continue;
            }
            List<Step> steps = steps(node);
            if (!steps.isEmpty()) {
                return steps;
            }
        }
        return List.of();
    }

    private static List<Step> steps(JsonNode node) {
        JsonNode items = node;
        if (node.isObject()) {
            items = first(node, "steps", "plan", "tasks", "items");
            if (items != null && items.isObject()) {
                items = first(items, "steps", "items");
            }
        }
        if (items == null || !items.isArray()) {
            return List.of();
        }
        List<Step> out = new ArrayList<>();
        for (JsonNode item : items) {
            Step s = null;
            if (item.isTextual()) {
                s = step(item.asText(), "");
            } else if (item.isObject()) {
                JsonNode title = first(item, "title", "name", "step", "summary", "action");
                JsonNode detail = first(item, "detail", "details", "description", "desc", "notes");
                if (title != null && title.isValueNode()) {
                    s = step(title.asText(), detail != null && detail.isValueNode() ? detail.asText() : "");
                } else if (detail != null && detail.isValueNode()) {
                    s = step(detail.asText(), "");
                }
            }
            if (s != null && out.size() < MAX_STEPS) {
                out.add(s);
            }
        }
        return out;
    }

    private static JsonNode first(JsonNode object, String... names) {
        for (String n : names) {
            JsonNode v = object.get(n);
            if (v != null && !v.isNull()) {
                return v;
            }
        }
        return null;
    }

    /** Numbered or bulleted lines; a line under an item that is not an item itself adds to its detail. */
    private static List<Step> fromList(String text) {
        List<String[]> items = new ArrayList<>();
        for (String line : text.split("\\R")) {
            Matcher m = ITEM.matcher(line);
            if (m.matches()) {
                items.add(new String[] {m.group(1).trim(), ""});
            } else if (!items.isEmpty() && !line.isBlank() && Character.isWhitespace(line.charAt(0))) {
                String[] last = items.get(items.size() - 1);
                last[1] = (last[1] + " " + line.trim()).trim();
            }
        }
        List<Step> out = new ArrayList<>();
        for (String[] item : items) {
            String title = item[0].replace("**", "").trim();
            String detail = item[1];
            Matcher td = TITLE_DETAIL.matcher(title);
            if (detail.isEmpty() && td.matches()) {
                title = td.group(1);
                detail = td.group(2);
            }
            Step s = step(title, detail);
            if (s != null && out.size() < MAX_STEPS) {
                out.add(s);
            }
        }
        return out;
    }

    private static Step step(String title, String detail) {
        String t = clip(title, MAX_TITLE);
        if (t.isEmpty()) {
            return null;
        }
        return new Step(t, clip(detail, MAX_DETAIL));
    }

    private static String clip(String s, int max) {
        String t = NulText.clean(s == null ? "" : s).strip();
        return t.codePointCount(0, t.length()) <= max ? t : t.substring(0, t.offsetByCodePoints(0, max));
    }
}
