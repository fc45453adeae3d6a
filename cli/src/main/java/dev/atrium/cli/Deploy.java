package dev.atrium.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.apps.internal.manifest.ManifestParser;
import dev.atrium.apps.internal.manifest.ManifestProblem;
import dev.atrium.cli.Main.Admin;
import dev.atrium.cli.Main.Failure;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code atrium deploy …} and {@code atrium install …}: whole-app deploys from a Git ref through
 * {@code /api/spaces/:spaceId/app-deployments}, as a user (a personal access token), following the rollout until it
 * ends; {@code deploy validate} checks an {@code app.yml} here with the server's own parser. Exit status as the rest of
 * the CLI: 0 done, 1 the server refused or the rollout failed or was aborted, 2 bad usage.
 */
final class Deploy {

    /** The options that take no value. */
    static final Set<String> FLAGS = Set.of("--canary", "--no-wait");

    private static final Set<String> REF_TYPES = Set.of("branch", "tag", "commit");
    private static final Set<String> APPROVALS = Set.of("oauth", "source");
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}|[0-9a-f]{64}");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Set<String> ENDED = Set.of("completed", "failed", "aborted");

    private final Main main;
    private final PrintStream out;
    private final long pollMillis;

    Deploy(Main main, PrintStream out, long pollMillis) {
        this.main = main;
        this.out = out;
        this.pollMillis = pollMillis;
    }

    void run(List<String> words, Map<String, String> options, Map<String, List<String>> repeated, Set<String> flags)
            throws Failure {
        String sub = words.size() > 1 ? words.get(1) : "";
        if (words.get(0).equals("install")) {
            if (words.size() != 2) {
                throw new Failure(2, "install needs one STORE/[OWNER/]REPO[@TAG] and --space ID\n" + Main.USAGE);
            }
            install(words.get(1), options, repeated, flags);
            return;
        }
        switch (sub) {
            case "" -> deploy(options, repeated, flags);
            case "validate" -> {
                if (words.size() > 3) {
                    throw new Failure(2, "deploy validate takes at most one FILE");
                }
                validate(Path.of(words.size() == 3 ? words.get(2) : "app.yml"));
            }
            case "status" -> {
                requireNoMore(words, 2, "deploy status takes no argument");
                status(options);
            }
            case "rollback" -> {
                if (words.size() != 3) {
                    throw new Failure(2, "deploy rollback needs one APP_DEPLOYMENT_ID and --space ID");
                }
                rollback(words.get(2), options, repeated, flags);
            }
            default -> throw new Failure(2, "unknown command 'deploy " + sub + "'\n" + Main.USAGE);
        }
    }

    private static void requireNoMore(List<String> words, int size, String message) throws Failure {
        if (words.size() > size) {
            throw new Failure(2, message);
        }
    }

    // ------------------------------------------------------------------ deploy validate (local)

    /** Prints {@code FILE:LINE: PATH: MESSAGE} per problem (exit 1), else {@code valid: NAME VERSION}. */
    void validate(Path file) throws Failure {
        String yaml;
        try {
            yaml = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new Failure(2, "no " + file + " here (give the manifest's path: atrium deploy validate FILE)");
        } catch (IOException e) {
            throw new Failure(2, "cannot read " + file + ": " + e.getMessage());
        }
        ManifestParser.Result result;
        try {
            result = ManifestParser.parse(yaml);
        } catch (RuntimeException e) {
            // the parser promises not to throw for bad input; if it does, say so rather than print a stack trace
            throw new Failure(1, "the manifest parser failed on " + file + ": " + e);
        }
        if (!result.valid()) {
            for (ManifestProblem p : result.problems()) {
                out.println(problemLine(file.toString(), p));
            }
            throw new Failure(
                    1,
                    file + " is not a valid app manifest (" + result.problems().size() + " problem"
                            + (result.problems().size() == 1 ? "" : "s") + ")");
        }
        out.println(
                "valid: " + result.manifest().name() + " " + result.manifest().version());
    }

    /** {@code app.yml:12: spec.workers.web: message}; the line and path are left out when unknown. */
    static String problemLine(String file, ManifestProblem p) {
        return file + ":" + (p.line() > 0 ? p.line() + ":" : "") + " "
                + (p.path() == null || p.path().isEmpty() ? "" : p.path() + ": ") + p.message();
    }

    // ------------------------------------------------------------------ deploy, install, rollback

    private void deploy(Map<String, String> options, Map<String, List<String>> repeated, Set<String> flags)
            throws Failure {
        String space = required(options, "space", "deploy needs --space ID, --repo REPO_ID|URL and --ref REF");
        String repo = required(options, "repo", "deploy needs --space ID, --repo REPO_ID|URL and --ref REF");
        String ref = required(options, "ref", "deploy needs --space ID, --repo REPO_ID|URL and --ref REF");
        Map<String, Object> source = new LinkedHashMap<>();
        source.put("kind", "git_ref");
        // a URL (or scp-like git@host:path) is a repository elsewhere; anything else is one of the workspace's ids
        if (repo.contains("://") || repo.matches("[^/@:]+@[^/:]+:.+")) {
            source.put("repository_url", repo);
        } else {
            source.put("repository_id", repo);
        }
        String[] typed = refAndType(ref, options.get("ref-type"));
        source.put("ref", typed[0]);
        source.put("ref_type", typed[1]);
        create(space, body(source, options, repeated, flags), options, flags);
    }

    /**
     * The ref and its type: {@code --ref-type} when given, else {@code refs/tags/X} is tag X, {@code refs/heads/X}
     * branch X, a full hexadecimal object id a commit, and anything else a branch.
     */
    static String[] refAndType(String ref, String refType) throws Failure {
        if (refType != null && !REF_TYPES.contains(refType)) {
            throw new Failure(2, "--ref-type is branch, tag or commit, not '" + refType + "'");
        }
        if (ref.startsWith("refs/tags/") && (refType == null || refType.equals("tag"))) {
            return new String[] {ref.substring("refs/tags/".length()), "tag"};
        }
        if (ref.startsWith("refs/heads/") && (refType == null || refType.equals("branch"))) {
            return new String[] {ref.substring("refs/heads/".length()), "branch"};
        }
        if (refType != null) {
            return new String[] {ref, refType};
        }
        return new String[] {ref, COMMIT.matcher(ref).matches() ? "commit" : "branch"};
    }

    /** The create body's parts every deploy shares: group, env, provider, strategy and steps, approvals. */
    static Map<String, Object> body(
            Map<String, Object> source,
            Map<String, String> options,
            Map<String, List<String>> repeated,
            Set<String> flags)
            throws Failure {
        Map<String, Object> body = new LinkedHashMap<>();
        if (options.containsKey("group")) {
            body.put("group_name", nonBlank(options, "group"));
        }
        body.put("source", source);
        List<String> envs = repeated.getOrDefault("env", List.of());
        if (!envs.isEmpty()) {
            Map<String, String> env = new LinkedHashMap<>();
            for (String e : envs) {
                int eq = e.indexOf('=');
                if (eq <= 0 || !ENV_NAME.matcher(e.substring(0, eq)).matches()) {
                    throw new Failure(2, "--env takes NAME=VALUE (NAME: letters, digits and _), not '" + e + "'");
                }
                env.put(e.substring(0, eq), e.substring(eq + 1));
            }
            body.put("env", env);
        }
        if (options.containsKey("provider")) {
            body.put("provider", Map.of("name", nonBlank(options, "provider")));
        }
        // --steps says a canary's steps, so it implies --canary
        if (flags.contains("canary") || options.containsKey("steps")) {
            body.put("strategy", "canary");
            if (options.containsKey("steps")) {
                body.put("canary", Map.of("steps", steps(options.get("steps"))));
            }
        }
        List<String> approve = repeated.getOrDefault("approve", List.of());
        for (String a : approve) {
            if (!APPROVALS.contains(a)) {
                throw new Failure(2, "--approve is oauth or source, not '" + a + "'");
            }
        }
        if (!approve.isEmpty()) {
            body.put("approve", approve.stream().distinct().toList());
        }
        return body;
    }

    /**
     * {@code 10:30,50:30}: each step a share of requests (1-100 %) for the new version and the seconds it is held;
     * a step without {@code :SECONDS} is held until promoted.
     */
    static List<Map<String, Object>> steps(String text) throws Failure {
        List<Map<String, Object>> steps = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String[] wh = part.trim().split(":", -1);
            try {
                if (wh.length > 2) {
                    throw new NumberFormatException();
                }
                int weight = Integer.parseInt(wh[0].trim());
                Map<String, Object> step = new LinkedHashMap<>();
                step.put("weight", weight);
                if (wh.length == 2) {
                    int hold = Integer.parseInt(wh[1].trim());
                    if (hold < 0) {
                        throw new NumberFormatException();
                    }
                    step.put("hold_seconds", hold);
                }
                if (weight < 1 || weight > 100) {
                    throw new NumberFormatException();
                }
                steps.add(step);
            } catch (NumberFormatException e) {
                throw new Failure(
                        2,
                        "--steps takes WEIGHT[:SECONDS],… (a weight from 1 to 100 %, seconds held from 0), not '" + text
                                + "'");
            }
        }
        return steps;
    }

    private void install(
            String storeRef, Map<String, String> options, Map<String, List<String>> repeated, Set<String> flags)
            throws Failure {
        String space = required(options, "space", "install needs --space ID");
        for (String o : List.of("repo", "ref", "ref-type")) {
            if (options.containsKey(o)) {
                throw new Failure(2, "install takes the repository and tag from STORE/[OWNER/]REPO[@TAG], not --" + o);
            }
        }
        StoreRef ref = StoreRef.parse(storeRef);
        Admin api = main.user(options);
        StoreRef.Resolved found = ref.resolve(api, space);
        String tag = ref.tag() != null ? ref.tag() : StoreRef.newestTag(found.cloneUrl());
        out.println("installing " + found.owner() + "/" + found.name() + "@" + tag + " from " + found.store() + " ("
                + found.cloneUrl() + ")");
        Map<String, Object> source = new LinkedHashMap<>();
        source.put("kind", "git_ref");
        source.put("repository_url", found.cloneUrl());
        source.put("ref", tag);
        source.put("ref_type", "tag");
        create(space, body(source, options, repeated, flags), options, flags);
    }

    private void create(String space, Map<String, Object> body, Map<String, String> options, Set<String> flags)
            throws Failure {
        Admin api = main.user(options);
        JsonNode answer;
        try {
            answer = api.post(base(space), body);
        } catch (Failure f) {
            throw approvalHint(f);
        }
        follow(api, space, answer, flags);
    }

    private void rollback(String id, Map<String, String> options, Map<String, List<String>> repeated, Set<String> flags)
            throws Failure {
        String space = required(options, "space", "deploy rollback needs --space ID");
        Map<String, Object> body = new LinkedHashMap<>();
        List<String> approve = repeated.getOrDefault("approve", List.of());
        for (String a : approve) {
            if (!APPROVALS.contains(a)) {
                throw new Failure(2, "--approve is oauth or source, not '" + a + "'");
            }
        }
        if (!approve.isEmpty()) {
            body.put("approve", approve.stream().distinct().toList());
        }
        Admin api = main.user(options);
        JsonNode answer;
        try {
            answer = api.post(base(space) + "/" + encode(id) + "/rollback", body);
        } catch (Failure f) {
            throw approvalHint(f);
        }
        out.println("rollback of " + id);
        follow(api, space, answer, flags);
    }

    /** A refusal for want of approval, with what to pass: the server's message says which change needs it. */
    static Failure approvalHint(Failure f) {
        if (!"APPROVAL_REQUIRED".equals(f.code)) {
            return f;
        }
        String m = f.getMessage().toLowerCase(java.util.Locale.ROOT);
        boolean oauth = m.contains("oauth");
        boolean source = m.contains("source") || m.contains("provenance");
        String pass = oauth == source
                ? "--approve oauth and/or --approve source"
                : oauth ? "--approve oauth" : "--approve source";
        return new Failure(1, f.getMessage() + "\nthis change needs your approval: run it again with " + pass, f.code);
    }

    /** Prints what the create (or rollback) did, then, unless --no-wait, the rollout's progress until it ends. */
    private void follow(Admin api, String space, JsonNode answer, Set<String> flags) throws Failure {
        JsonNode d = answer.path("app_deployment");
        String id = d.path("id").asText();
        JsonNode src = d.path("source");
        out.println("app deployment " + id + " of group "
                + d.path("group").path("name").asText("?") + ": "
                + d.path("status").asText()
                + (d.hasNonNull("manifest_version")
                        ? ", version " + d.path("manifest_version").asText()
                        : "")
                + (src.hasNonNull("ref")
                        ? ", " + src.path("ref_type").asText("ref") + " "
                                + src.path("ref").asText()
                        : "")
                + (src.hasNonNull("commit_sha")
                        ? " at " + shortSha(src.path("commit_sha").asText())
                        : ""));
        JsonNode result = answer.path("apply_result");
        if (result.path("applied").size() > 0) {
            out.println("applied: " + join(result.path("applied")));
        }
        if (result.path("skipped").size() > 0) {
            out.println("unchanged: " + join(result.path("skipped")));
        }
        out.flush();
        if (d.path("status").asText().equals("failed")) {
            throw new Failure(1, "app deployment " + id + " failed");
        }
        if (flags.contains("no-wait")) {
            out.println("follow it with: atrium deploy status --space " + space);
            return;
        }
        JsonNode rollout = watch(api, base(space) + "/" + encode(id) + "/rollout");
        String state = rollout.path("state").asText();
        JsonNode now = find(api, space, id);
        JsonNode hostnames = (now == null ? d : now).path("hostnames");
        if (!state.equals("completed")) {
            throw new Failure(
                    1,
                    "the rollout of " + id + " " + state
                            + (rollout.hasNonNull("message")
                                    ? ": " + rollout.path("message").asText()
                                    : ""));
        }
        out.println(hostnames.size() == 0 ? "no hostnames" : "serving at " + join(hostnames));
    }

    /** Polls the rollout, printing each change of its state, step or weight, until it has ended. */
    private JsonNode watch(Admin api, String path) throws Failure {
        String last = null;
        for (; ; ) {
            JsonNode rollout = api.get(path).path("rollout");
            String line = progress(rollout);
            if (!line.equals(last)) {
                out.println(line);
                out.flush();
                last = line;
            }
            if (ENDED.contains(rollout.path("state").asText())) {
                return rollout;
            }
            try {
                Thread.sleep(pollMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Failure(1, "interrupted; the rollout goes on (atrium deploy status shows it)");
            }
        }
    }

    /** One line of a rollout's state: {@code canary 10% (step 1/2, holding 30 s)}. */
    static String progress(JsonNode r) {
        String state = r.path("state").asText("?");
        JsonNode steps = r.path("steps");
        int step = r.path("step").asInt(0);
        int weight = r.path("weight").asInt(0);
        String where = steps.size() > 0 ? "step " + (step + 1) + "/" + steps.size() : null;
        String message = r.hasNonNull("message") ? ": " + r.path("message").asText() : "";
        return switch (state) {
            case "progressing" -> {
                if (!"canary".equals(r.path("strategy").asText()) || where == null) {
                    yield "rolling out (" + r.path("strategy").asText("direct") + ")" + message;
                }
                JsonNode hold = steps.path(Math.min(step, steps.size() - 1)).path("hold_seconds");
                yield "canary " + weight + "% (" + where + ", "
                        + (hold.isNumber() ? "holding " + hold.asInt() + " s" : "until promoted") + ")" + message;
            }
            case "paused" -> "paused at " + weight + "%" + (where == null ? "" : " (" + where + ")") + message;
            case "completed" -> "completed: the new version takes all requests" + message;
            case "aborted" -> "aborted: the old version takes all requests again" + message;
            case "failed" -> "failed at " + weight + "%" + message;
            default -> state + " at " + weight + "%" + message;
        };
    }

    private JsonNode find(Admin api, String space, String id) throws Failure {
        for (JsonNode d : api.get(base(space)).path("app_deployments")) {
            if (d.path("id").asText().equals(id)) {
                return d;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ deploy status

    private void status(Map<String, String> options) throws Failure {
        String space = required(options, "space", "deploy status needs --space ID");
        JsonNode list = main.user(options).get(base(space)).path("app_deployments");
        if (list.size() == 0) {
            out.println("no app deployments in " + space);
            return;
        }
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("ID", "GROUP", "STATUS", "VERSION", "HOSTNAMES", "CREATED"));
        for (JsonNode d : list) {
            rows.add(List.of(
                    d.path("id").asText(),
                    d.path("group").path("name").asText("-"),
                    d.path("status").asText()
                            + (d.hasNonNull("rollback_of_app_deployment_id")
                                    ? " (rollback of "
                                            + d.path("rollback_of_app_deployment_id")
                                                    .asText() + ")"
                                    : ""),
                    d.path("manifest_version").asText("-"),
                    d.path("hostnames").size() == 0
                            ? "-"
                            : join(d.path("hostnames")).replace(", ", ","),
                    d.path("created_at").asText("-")));
        }
        main.table(rows);
    }

    // ------------------------------------------------------------------ helpers

    private static String base(String space) {
        return "/api/spaces/" + encode(space) + "/app-deployments";
    }

    static String encode(String s) {
        return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String required(Map<String, String> options, String name, String usage) throws Failure {
        String v = options.get(name);
        if (v == null || v.isBlank()) {
            throw new Failure(2, usage);
        }
        return v.trim();
    }

    private static String nonBlank(Map<String, String> options, String name) throws Failure {
        return required(options, name, "--" + name + " needs a value");
    }

    private static String join(JsonNode array) {
        List<String> parts = new ArrayList<>();
        array.forEach(n -> parts.add(n.isTextual() ? n.asText() : n.toString()));
        return String.join(", ", parts);
    }

    private static String shortSha(String sha) {
        return sha.length() > 12 ? sha.substring(0, 12) : sha;
    }
}
