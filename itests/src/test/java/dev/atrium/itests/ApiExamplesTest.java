package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicContainer.dynamicContainer;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.ApiExamples.Example;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The API pages in {@code docs/api} say what the server answers: every example of every page is sent, in page order,
 * as a fresh user, and must answer with its documented status and fields. The format is {@code docs/api/README.md}.
 */
@SharedServer
class ApiExamplesTest {

    static final Path PAGES = AtriumServer.ROOT.resolve("docs/api");
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** An answer quoted in a failure is cut here: a failure names the first difference anyway. */
    private static final int QUOTED_ANSWER_CHARS = 4_000;

    @TestFactory
    Stream<DynamicContainer> everyExampleOfTheApiPagesAnswersAsDocumented(AtriumServer server) throws IOException {
        List<Path> pages = pages();
        assertFalse(pages.isEmpty(), "docs/api has no pages");
        DocumentedShapes shapes = new DocumentedShapes(
                new Http(server.base(), null).get("/api/openapi.json").json());
        return Stream.concat(
                pages.stream().map(page -> examplesOf(server, shapes, page)),
                Stream.of(dynamicContainer(
                        "the documented shapes",
                        Stream.of(dynamicTest(
                                "the examples' answers were checked against their documented shapes",
                                () -> assertTrue(
                                        shapes.checkedAnswers() >= 40,
                                        shapes.checkedAnswers() + " answers had a shape to check"))))));
    }

    @Test
    void theIndexLinksEveryPageAndTheReadmeLinksTheIndex() throws IOException {
        String index = Files.readString(PAGES.resolve("README.md"));
        List<String> unlinked = pages().stream()
                .map(p -> p.getFileName().toString())
                .filter(name -> !index.contains("](" + name + ")"))
                .toList();
        assertEquals(List.of(), unlinked, "pages docs/api/README.md does not link");
        assertTrue(
                Files.readString(AtriumServer.ROOT.resolve("README.md")).contains("](docs/api/README.md)"),
                "README.md links the API examples' index, docs/api/README.md");
    }

    @Test
    void aMistypedExampleFailsTheRunInsteadOfBeingSkipped() {
        List<String> broken = List.of(
                "### No status line\n```http\nGET /api/me\n```\n",
                "### An ASCII arrow\n```http\nGET /api/me\n```\n-> 200\n",
                "### A status that is no number\n```http\nGET /api/me\n```\n→ OK\n",
                "### An unknown method\n```http\nFETCH /api/me\n```\n→ 200\n",
                "Prose, then a request without a title:\n```http\nGET /api/me\n```\n→ 200\n",
                "### A request block without its info string\n```\nGET /api/me\n```\n→ 200\n",
                "### A misspelt placeholder\n```http\nGET /api/memories/{memory_idd}\n```\n→ 200\n",
                "### A body that is no JSON\n```http\nPOST /api/spaces\n\n{name: x}\n```\n→ 201\n",
                "### An answer that is no JSON\n```http\nGET /api/me\n```\n→ 200\n```json\n{\"a\": }\n```\n",
                "### An answer before its status\n```http\nGET /api/me\n```\n```json\n{}\n```\n→ 200\n",
                "### A malformed capture\n```http\nGET /api/me\n```\n→ 200\n<!-- capture me=username -->\n",
                "### A block never closed\n```http\nGET /api/me\n");
        for (String page : broken) {
            assertThrows(ApiExamples.FormatError.class, () -> ApiExamples.parse(page), page);
        }
    }

    @Test
    void anAnswerHoldsAnExampleWhenItHasEveryDocumentedFieldWithItsValue() throws IOException {
        JsonNode answer = json("{'memory': {'id': 'mem_1', 'content': 'Deploys on Tuesdays', 'n': 2},"
                + " 'items': [1, 2, 3], 'next': null}");
        for (String holds : List.of(
                "{}",
                "{'memory': {'content': 'Deploys on Tuesdays'}}",
                "{'memory': {'id': '…'}}",
                "{'memory': {'content': 'Deploys …'}}",
                "{'memory': {'n': 2.0}}",
                "{'next': '…'}",
                "{'next': null}",
                "{'items': [1, 2, 3]}",
                "{'items': [1, '…']}")) {
            assertNull(ApiExamples.mismatch(json(holds), answer, ""), holds);
        }
        for (String differs : List.of(
                "{'memory': {'content': 'Deploys on Mondays'}}",
                "{'memory': {'tags': '…'}}",
                "{'memory': {'id': 'note_…'}}",
                "{'memory': {'n': '2'}}",
                "{'memory': []}",
                "{'next': 'null'}",
                "{'items': [1, 2]}",
                "{'items': [2, '…']}")) {
            assertNotNull(ApiExamples.mismatch(json(differs), answer, ""), differs);
        }
    }

    @Test
    void anAnswerOrBodyThatBreaksItsDocumentedShapeIsReported() throws IOException {
        DocumentedShapes shapes = new DocumentedShapes(json("{'paths': {"
                + "'/api/things/{id}': {'get': {'responses': {'2XX': {'content': {'application/json': {'schema':"
                + "  {'type': 'object', 'required': ['size'], 'properties': {'size': {'type': 'integer'},"
                + "   'name': {'type': ['string', 'null']}}}}}}}}},"
                + "'/api/things/special': {'get': {'responses': {'2XX': {'content': {'application/json': {'schema':"
                + "  {'type': 'array'}}}}}}},"
                + "'/api/things': {'post': {'requestBody': {'content': {'application/json': {'schema':"
                + "  {'type': 'object', 'properties': {'name': {'type': 'string'}}}}}}}}},"
                + "'components': {'schemas': {'Error': {'type': 'object', 'required': ['error']}}}}"));
        assertNull(shapes.answerProblem("GET", "/api/things/7?x=1", 200, json("{'size': 3, 'name': null}")));
        assertNotNull(shapes.answerProblem("GET", "/api/things/7", 200, json("{'size': '3'}")));
        assertNotNull(shapes.answerProblem("GET", "/api/things/7", 200, json("{'name': 'x'}")), "size is required");
        assertNull(shapes.answerProblem("GET", "/api/things/special", 200, json("[]")), "the most literal template");
        assertNull(shapes.answerProblem("GET", "/api/other", 200, json("{}")), "nothing documented");
        assertNull(shapes.answerProblem("GET", "/api/things/7", 404, json("{'error': {}}")));
        assertNotNull(shapes.answerProblem("GET", "/api/things/7", 404, json("{'message': 'gone'}")));
        assertNotNull(shapes.bodyProblem("POST", "/api/things", json("{'name': 7}")));
        assertNull(shapes.bodyProblem("POST", "/api/things", json("{'name': 'seven'}")));
    }

    /** JSON written with single quotes, which read better inside Java strings. */
    private static JsonNode json(String singleQuoted) throws IOException {
        return Http.JSON.readTree(singleQuoted.replace('\'', '"'));
    }

    /** The example pages: every Markdown file of docs/api but its index, in name order. */
    static List<Path> pages() throws IOException {
        try (Stream<Path> files = Files.list(PAGES)) {
            return files.filter(p -> p.toString().endsWith(".md")
                            && !p.getFileName().toString().equals("README.md"))
                    .sorted()
                    .toList();
        }
    }

    private static DynamicContainer examplesOf(AtriumServer server, DocumentedShapes shapes, Path file) {
        String page = "docs/api/" + file.getFileName();
        List<Example> examples;
        try {
            examples = ApiExamples.parse(Files.readString(file));
        } catch (ApiExamples.FormatError | IOException e) {
            return dynamicContainer(
                    page,
                    Stream.of(dynamicTest(
                            "the page follows the examples' format", () -> fail(page + ", " + e.getMessage()))));
        }
        if (examples.isEmpty()) {
            return dynamicContainer(
                    page,
                    Stream.of(dynamicTest(
                            "the page has examples",
                            () -> fail(page + " has no example (a ### title with an http block and a status line)"))));
        }
        PageRun run = new PageRun(server, shapes, page);
        return dynamicContainer(page, examples.stream().map(e -> dynamicTest(e.title(), () -> run.check(e))));
    }

    /**
     * One run of a page: its fresh user, made when its first example runs, and the values its examples captured. Every
     * example runs even after one failed, so that each failure is reported as itself; one that needs a value a failed
     * example did not capture says so.
     */
    private static final class PageRun {
        private final AtriumServer server;
        private final DocumentedShapes shapes;
        private final String page;
        private final Map<String, String> values = new HashMap<>();

        PageRun(AtriumServer server, DocumentedShapes shapes, String page) {
            this.server = server;
            this.shapes = shapes;
            this.page = page;
        }

        void check(Example example) throws Exception {
            if (values.isEmpty()) { // the page's first example
                AtriumServer.User user = server.newUser();
                values.put("token", user.http().token());
                values.put("space", user.defaultSpaceId());
                values.put("username", user.username());
                values.put("operator_token", server.operatorToken());
                values.put("new_username", "newuser" + Long.toString(Math.floorMod(System.nanoTime(), 1L << 40), 36));
            }
            String named = page + ", \"" + example.title() + "\" (line " + example.line() + "): ";
            String request;
            HttpRequest sent;
            try {
                request = ApiExamples.substitute(example.requestLine(), values);
                sent = request(example);
            } catch (IllegalStateException missing) {
                throw new AssertionError(named + missing.getMessage(), missing);
            }
            HttpResponse<String> response = CLIENT.send(sent, HttpResponse.BodyHandlers.ofString());
            List<String> problems = new ArrayList<>();
            if (response.statusCode() != example.status()) {
                problems.add("expected → " + example.status() + " but found → " + response.statusCode());
            }
            JsonNode json = json(response.body());
            String target = ApiExamples.substitute(example.target(), values);
            String shape = shapes.answerProblem(example.method(), target, response.statusCode(), json);
            if (shape != null) {
                problems.add(shape);
            }
            if (example.body() != null && jsonBody(sent)) {
                shape = shapes.bodyProblem(
                        example.method(), target, json(ApiExamples.substitute(example.body(), values)));
                if (shape != null) {
                    problems.add(shape);
                }
            }
            if (example.answer() != null) {
                String difference = difference(example, response.body(), json);
                if (difference != null) {
                    problems.add(difference);
                }
            }
            for (ApiExamples.Capture capture : example.captures()) {
                JsonNode value = json == null ? null : ApiExamples.at(json, capture.path());
                if (value == null || value.isNull() || value.isContainerNode()) {
                    problems.add("nothing to capture as {" + capture.name() + "} at " + capture.path());
                } else {
                    values.put(capture.name(), value.asText());
                }
            }
            if (!problems.isEmpty()) {
                String documented = example.answer() == null ? "(none shown)" : example.answer();
                fail(named + request + "\n" + String.join("\n", problems)
                        + "\nexpected answer (the fields that matter):\n" + documented
                        + "\nanswer:\n" + quoted(response.body()));
            }
        }

        private HttpRequest request(Example example) {
            URI uri = URI.create(server.base() + ApiExamples.substitute(example.target(), values));
            HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30));
            boolean authorization = false;
            boolean contentType = false;
            for (ApiExamples.Header header : example.headers()) {
                String value = ApiExamples.substitute(header.value(), values);
                authorization |= header.name().equalsIgnoreCase("Authorization");
                contentType |= header.name().equalsIgnoreCase("Content-Type");
                if (!(header.name().equalsIgnoreCase("Authorization") && value.equals("none"))) {
                    b.header(header.name(), value);
                }
            }
            if (!authorization) {
                b.header("Authorization", "Bearer " + values.get("token"));
            }
            if (example.body() == null) {
                return b.method(example.method(), HttpRequest.BodyPublishers.noBody())
                        .build();
            }
            if (!contentType) {
                b.header("Content-Type", "application/json");
            }
            String body = ApiExamples.substitute(example.body(), values);
            return b.method(example.method(), HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
                    .build();
        }

        private static boolean jsonBody(HttpRequest sent) {
            return sent.headers()
                    .firstValue("Content-Type")
                    .map(t -> t.startsWith("application/json"))
                    .orElse(false);
        }

        /** How the answer differs from the documented one, or null. */
        private String difference(Example example, String body, JsonNode json) throws IOException {
            if (example.answerKind().equals("text")) {
                String expected =
                        ApiExamples.substitute(example.answer(), values).stripTrailing();
                boolean same = ApiExamples.glob(expected, body.stripTrailing());
                return same ? null : "the answer is not the documented text";
            }
            if (json == null) {
                return "the answer is not JSON";
            }
            JsonNode expected = ApiExamples.substitute(Http.JSON.readTree(example.answer()), values);
            String mismatch = ApiExamples.mismatch(expected, json, "");
            return mismatch == null ? null : "the answer differs at " + mismatch;
        }

        private static JsonNode json(String body) {
            try {
                return body.isBlank() ? null : Http.JSON.readTree(body);
            } catch (IOException notJson) {
                return null; // a text answer; an example documenting JSON says the answer is not JSON
            }
        }

        private static String quoted(String body) {
            return body.length() <= QUOTED_ANSWER_CHARS ? body : body.substring(0, QUOTED_ANSWER_CHARS) + " (cut)";
        }
    }
}
