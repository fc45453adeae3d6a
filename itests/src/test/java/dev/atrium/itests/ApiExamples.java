package dev.atrium.itests;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The examples of the API pages in {@code docs/api}, in the format {@code docs/api/README.md} describes: read from a
 * page's Markdown, and an answer compared with what an example documents. {@link ApiExamplesTest} sends them to a
 * server. Anything that looks like part of an example but breaks the format is a {@link FormatError}, never skipped.
 */
final class ApiExamples {

    /** Starts the line of an example's expected status: {@code → 201}. */
    static final String ARROW = "→";
    /** In an expected answer, stands for any value (alone) or any text (inside a string). */
    static final String ANY = "…";
    /** The values every page has without capturing them. */
    static final Set<String> GIVEN = Set.of("token", "space", "username", "operator_token", "new_username");

    private static final Pattern EXAMPLE_HEADING = Pattern.compile("### (.+)");
    private static final Pattern ANY_HEADING = Pattern.compile("#{1,6} .*");
    private static final Pattern REQUEST_LINE = Pattern.compile("(GET|POST|PUT|PATCH|DELETE) (/\\S*)");
    private static final Pattern HEADER = Pattern.compile("([A-Za-z][A-Za-z0-9-]*): (\\S.*)");
    private static final Pattern STATUS = Pattern.compile(ARROW + " ([1-5]\\d\\d)");
    private static final Pattern CAPTURE =
            Pattern.compile("<!-- capture ([a-z][a-z0-9_]*) = ([A-Za-z0-9_]+(?:\\.[A-Za-z0-9_]+)*) -->");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{([a-z][a-z0-9_]*)\\}");

    private ApiExamples() {}

    record Header(String name, String value) {}

    /** A value taken from an example's answer ({@code path}: field names and array indexes joined by dots). */
    record Capture(String name, String path) {}

    /**
     * One example: the request, its expected status and, when the page shows one, its answer ({@code answerKind}
     * {@code json} or {@code text}; null when the page shows none). {@code line} is where its heading is.
     */
    record Example(
            String title,
            int line,
            String method,
            String target,
            List<Header> headers,
            String body,
            int status,
            String answerKind,
            String answer,
            List<Capture> captures) {

        String requestLine() {
            return method + " " + target;
        }
    }

    /** Where a page breaks the format and how. */
    static final class FormatError extends Exception {
        private static final long serialVersionUID = 1L;

        FormatError(int line, String problem) {
            super("line " + line + ": " + problem);
        }
    }

    /** The examples of a page, in page order. */
    static List<Example> parse(String markdown) throws FormatError {
        List<String> lines = markdown.lines().toList();
        List<Example> examples = new ArrayList<>();
        Set<String> known = new HashSet<>(GIVEN);
        Draft draft = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int number = i + 1;
            if (line.startsWith("```")) {
                String info = line.substring(3).trim();
                int close = i + 1;
                while (close < lines.size() && !lines.get(close).equals("```")) {
                    close++;
                }
                if (close == lines.size()) {
                    throw new FormatError(number, "a ``` block that is never closed");
                }
                List<String> content = lines.subList(i + 1, close);
                i = close;
                if (draft == null) {
                    if (info.equals("http")) {
                        throw new FormatError(number, "an http block outside an example: put it under a ### title");
                    }
                    continue; // prose between examples may show any block
                }
                draft.block(number, info, content, known);
            } else if (ANY_HEADING.matcher(line).matches()) {
                if (draft != null) {
                    examples.add(draft.done(known));
                    draft = null;
                }
                Matcher heading = EXAMPLE_HEADING.matcher(line);
                if (heading.matches()) {
                    draft = new Draft(heading.group(1).trim(), number);
                }
            } else if (line.startsWith(ARROW)) {
                Matcher status = STATUS.matcher(line.strip());
                if (!status.matches()) {
                    throw new FormatError(number, "a status line is " + ARROW + " and three digits: " + ARROW + " 201");
                }
                if (draft == null) {
                    throw new FormatError(number, "a status line outside an example: put it under a ### title");
                }
                draft.status(number, Integer.parseInt(status.group(1)));
            } else if (line.startsWith("<!-- capture")) {
                Matcher capture = CAPTURE.matcher(line.strip());
                if (!capture.matches()) {
                    throw new FormatError(number, "a capture is <!-- capture name = field.path --> (name: lower case)");
                }
                if (draft == null || draft.status == 0) {
                    throw new FormatError(number, "a capture belongs after an example's status line and answer");
                }
                draft.captures.add(new Capture(capture.group(1), capture.group(2)));
            }
        }
        if (draft != null) {
            examples.add(draft.done(known));
        }
        return examples;
    }

    /** An example while its lines are read. */
    private static final class Draft {
        final String title;
        final int line;
        String method;
        String target;
        final List<Header> headers = new ArrayList<>();
        String body;
        int status;
        String answerKind;
        String answer;
        final List<Capture> captures = new ArrayList<>();

        Draft(String title, int line) {
            this.title = title;
            this.line = line;
        }

        void block(int number, String info, List<String> content, Set<String> known) throws FormatError {
            switch (info) {
                case "http" -> {
                    if (method != null) {
                        throw new FormatError(number, "a second http block in \"" + title + "\": one request each");
                    }
                    request(number, content, known);
                }
                case "json", "text" -> {
                    if (status == 0 || answer != null) {
                        throw new FormatError(
                                number,
                                "a " + info + " block in \"" + title
                                        + "\" that is not the answer: an example's answer follows its status line, once");
                    }
                    answerKind = info;
                    answer = String.join("\n", content);
                    if (info.equals("json")) {
                        json(number, answer, "the answer");
                    }
                    placeholders(number, answer, known);
                }
                default ->
                    throw new FormatError(
                            number,
                            "a block `" + info + "` in \"" + title
                                    + "\": an example holds an http block, then a json or text answer");
            }
        }

        private void request(int number, List<String> content, Set<String> known) throws FormatError {
            Matcher first = content.isEmpty() ? null : REQUEST_LINE.matcher(content.get(0));
            if (first == null || !first.matches()) {
                throw new FormatError(number + 1, "the request line is METHOD /path (GET, POST, PUT, PATCH or DELETE)");
            }
            method = first.group(1);
            target = first.group(2);
            int i = 1;
            for (; i < content.size() && !content.get(i).isBlank(); i++) {
                Matcher header = HEADER.matcher(content.get(i));
                if (!header.matches()) {
                    throw new FormatError(number + 1 + i, "a header is Name: value (a blank line before the body)");
                }
                headers.add(new Header(header.group(1), header.group(2).strip()));
            }
            int end = content.size();
            while (end > i && content.get(end - 1).isBlank()) {
                end--;
            }
            body = i + 1 < end ? String.join("\n", content.subList(i + 1, end)) : null;
            boolean json = headers.stream().noneMatch(h -> h.name().equalsIgnoreCase("Content-Type"));
            if (body != null && json) {
                json(number, body, "the body (give a Content-Type for another kind)");
            }
            placeholders(number, String.join("\n", content), known);
        }

        void status(int number, int value) throws FormatError {
            if (method == null) {
                throw new FormatError(number, "the status line of \"" + title + "\" comes before its http block");
            }
            if (status != 0) {
                throw new FormatError(number, "a second status line in \"" + title + "\"");
            }
            status = value;
        }

        Example done(Set<String> known) throws FormatError {
            if (method == null) {
                throw new FormatError(line, "\"" + title + "\" has no http block");
            }
            if (status == 0) {
                throw new FormatError(line, "\"" + title + "\" has no status line (" + ARROW + " 200)");
            }
            captures.forEach(c -> known.add(c.name()));
            return new Example(
                    title,
                    line,
                    method,
                    target,
                    List.copyOf(headers),
                    body,
                    status,
                    answerKind,
                    answer,
                    List.copyOf(captures));
        }
    }

    private static void json(int number, String text, String what) throws FormatError {
        try {
            Http.JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new FormatError(number, what + " is not JSON: " + e.getOriginalMessage());
        }
    }

    /** Every {name} must be given or captured by an earlier example: a misspelt one is an error, not a 404. */
    private static void placeholders(int number, String text, Set<String> known) throws FormatError {
        Matcher m = PLACEHOLDER.matcher(text);
        while (m.find()) {
            if (!known.contains(m.group(1))) {
                throw new FormatError(
                        number,
                        "{" + m.group(1) + "} is neither one of " + new TreeSet<>(GIVEN)
                                + " nor captured by an earlier example of the page");
            }
        }
    }

    /** {@code text} with each {name} replaced by its value; a name without one throws IllegalStateException. */
    static String substitute(String text, Map<String, String> values) {
        Matcher m = PLACEHOLDER.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String value = values.get(m.group(1));
            if (value == null) {
                throw new IllegalStateException("{" + m.group(1) + "} has no value: the example capturing it failed");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        return m.appendTail(out).toString();
    }

    /** {@code node} with the placeholders of its strings replaced: after parsing, so no value needs escaping. */
    static JsonNode substitute(JsonNode node, Map<String, String> values) {
        if (node.isTextual()) {
            return TextNode.valueOf(substitute(node.textValue(), values));
        }
        if (node.isObject()) {
            ObjectNode copy = Http.JSON.createObjectNode();
            node.fields().forEachRemaining(f -> copy.set(f.getKey(), substitute(f.getValue(), values)));
            return copy;
        }
        if (node.isArray()) {
            ArrayNode copy = Http.JSON.createArrayNode();
            node.forEach(e -> copy.add(substitute(e, values)));
            return copy;
        }
        return node;
    }

    /** The node at {@code path} (field names and array indexes joined by dots), or null. */
    static JsonNode at(JsonNode root, String path) {
        JsonNode node = root;
        for (String step : path.split("\\.")) {
            if (node == null) {
                return null;
            }
            boolean index = node.isArray() && step.chars().allMatch(Character::isDigit);
            node = index ? node.get(Integer.parseInt(step)) : node.get(step);
        }
        return node;
    }

    /**
     * Where {@code actual} departs from {@code expected}, or null when it holds all that is documented: every field of
     * an object (more are allowed), every element of an array in order (as many, unless the last documented one is
     * {@code "…"}: then any more), equal scalars, {@code "…"} for any value and {@code …} inside a string for any
     * text.
     */
    static String mismatch(JsonNode expected, JsonNode actual, String path) {
        String where = path.isEmpty() ? "its top level" : path;
        if (expected.isTextual() && expected.textValue().equals(ANY)) {
            return actual == null || actual.isMissingNode() ? where + ": missing" : null;
        }
        if (actual == null || actual.isMissingNode()) {
            return where + ": missing";
        }
        if (expected.isObject()) {
            if (!actual.isObject()) {
                return where + ": expected an object but found " + actual;
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = expected.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> field = it.next();
                String found = mismatch(field.getValue(), actual.get(field.getKey()), join(path, field.getKey()));
                if (found != null) {
                    return found;
                }
            }
            return null;
        }
        if (expected.isArray()) {
            if (!actual.isArray()) {
                return where + ": expected an array but found " + actual;
            }
            int size = expected.size();
            boolean open = size > 0 && ANY.equals(expected.get(size - 1).textValue());
            int documented = open ? size - 1 : size;
            if (open ? actual.size() < documented : actual.size() != documented) {
                return where + ": expected " + (open ? "at least " : "") + documented + " elements but found "
                        + actual.size() + ": " + actual;
            }
            for (int i = 0; i < documented; i++) {
                String found = mismatch(expected.get(i), actual.get(i), join(path, String.valueOf(i)));
                if (found != null) {
                    return found;
                }
            }
            return null;
        }
        if (expected.isTextual() && expected.textValue().contains(ANY)) {
            return actual.isTextual() && glob(expected.textValue(), actual.textValue())
                    ? null
                    : where + ": expected " + expected + " but found " + actual;
        }
        if (expected.isNumber() && actual.isNumber()) {
            return new BigDecimal(expected.asText()).compareTo(new BigDecimal(actual.asText())) == 0
                    ? null
                    : where + ": expected " + expected + " but found " + actual;
        }
        return expected.equals(actual) ? null : where + ": expected " + expected + " but found " + actual;
    }

    private static String join(String path, String step) {
        return path.isEmpty() ? step : path + "." + step;
    }

    /** Whether {@code text} is {@code pattern} with any text in place of each {@code …}. */
    static boolean glob(String pattern, String text) {
        String regex = Arrays.stream(pattern.split(ANY, -1)).map(Pattern::quote).collect(Collectors.joining(".*"));
        return Pattern.compile(regex, Pattern.DOTALL).matcher(text).matches();
    }
}
