package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the route-wide sweep needs on the server: Principal A owning one object of every kind a path parameter
 * can name (workspace, thread, message, run, artifact when a run lets one in, memory, repository with a branch
 * and a file, token, OAuth client, share, variable, notification, shortcut, shortcut group and item, reminder, custom skill, MCP server, browser session, agent task, file-sync session), Principal B (the stranger), and a third Principal the
 * operator routes act on. {@link #value} maps a path parameter of a route template to A's id for it.
 */
final class SweepFixtures {

    /** Objects named by the segment before a path parameter; their ids are what a stranger must not reach. */
    enum Kind {
        SPACE,
        THREAD,
        MEMORY,
        RUN,
        ARTIFACT,
        TOKEN,
        OAUTH_CLIENT,
        SHARE,
        REPO,
        /** A's (private) repository by name, under its owner's name: /api/users/:username/:repoName. */
        REPO_NAME,
        NOTIFICATION,
        SHORTCUT,
        SHORTCUT_GROUP,
        SHORTCUT_ITEM,
        FILE,
        RESOURCE,
        RESOURCE_NAME,
        RESOURCE_TOKEN,
        REMINDER,
        SKILL,
        MCP_SERVER,
        STORE_REGISTRY_ENTRY,
        SERVICE,
        DEPLOYMENT,
        DOMAIN,
        RELEASE_ASSET,
        PULL,
        ACTION_RUN,
        ACTION_JOB,
        ACTION_ARTIFACT,
        APP_GROUP,
        APP_DEPLOYMENT,
        APP,
        BROWSER_SESSION,
        AGENT_TASK,
        FOLLOW_REQUEST,
        SYNC_SESSION,
        NONE
    }

    static final String SKILL_NAME = "kept-skill";
    static final String RELEASE_TAG = "sweep-v1";
    static final String SWEEP_WORKFLOW = "sweep.yml";
    static final String SWEEP_APP = "apiVersion: atrium.dev/v1alpha1\nkind: App\nmetadata:\n  name: swept\nspec:\n"
            + "  version: \"1\"\n  resources:\n    store:\n      type: kv\n";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    final User a;
    final User b;
    final User adminTarget;
    final String operatorToken;
    final Map<Kind, String> ids = new LinkedHashMap<>();
    final String messageId;
    final String shareToken;
    final String commit;
    final String clonePath;
    /** A's published store and A's workspace slug (the owner in Model B's repository paths). */
    final String storeSlug;

    final String spaceSlug;
    /** A's uploaded avatar: public (anyone fetches it), so no owned id. */
    String avatarId;

    final List<String> notes = new ArrayList<>();

    SweepFixtures(AtriumServer server) {
        operatorToken = server.operatorToken();
        a = server.newUser();
        b = server.newUser();
        adminTarget = server.newUser();
        Http http = a.http();
        String space = a.defaultSpaceId();
        ids.put(Kind.SPACE, space);
        ok(http.patch("/api/spaces/" + space + "/model", Map.of("provider", "openai", "model", "sweep-model")), 200);
        ok(http.put("/api/spaces/" + space + "/common-env", Map.of("name", "SWEEP_VAR", "value", "kept")), 200);

        String thread = ok(http.post("/api/spaces/" + space + "/threads", Map.of("title", "swept thread")), 201)
                .path("thread")
                .path("id")
                .asText();
        ids.put(Kind.THREAD, thread);
        messageId = ok(http.post("/api/threads/" + thread + "/messages", Map.of("content", "kept message")), 201)
                .path("message")
                .path("id")
                .asText();
        JsonNode share = ok(http.post("/api/threads/" + thread + "/share", Map.of()), 201)
                .path("share");
        ids.put(Kind.SHARE, share.path("id").asText());
        shareToken = share.path("token").asText();
        ids.put(
                Kind.MEMORY,
                ok(http.post("/api/spaces/" + space + "/memories", Map.of("content", "kept memory")), 201)
                        .path("memory")
                        .path("id")
                        .asText());
        ids.put(
                Kind.FILE,
                ok(
                                http.post(
                                        "/api/spaces/" + space + "/storage/files",
                                        Map.of("path", "swept/kept.txt", "content", "kept file")),
                                201)
                        .path("file")
                        .path("id")
                        .asText());

        // no model answers on the shared server, so a run fails at once; an artifact gets in only while it is queued
        String run = null;
        String artifact = null;
        for (int i = 0; i < 20 && artifact == null; i++) {
            run = ok(http.post("/api/threads/" + thread + "/runs", Map.of("input", "hello")), 201)
                    .path("run")
                    .path("id")
                    .asText();
            Http.Reply added = http.post("/api/runs/" + run + "/artifacts", Map.of("name", "kept.txt", "content", "x"));
            if (added.status() == 201) {
                artifact = added.json().path("artifact").path("id").asText(null);
            }
        }
        ids.put(Kind.RUN, run);
        if (artifact == null) {
            artifact = "art_" + random(20);
            notes.add(
                    "no artifact could be added while a run was queued: /api/artifacts/{id} is swept with a random id");
        }
        ids.put(Kind.ARTIFACT, artifact);
        // the failed runs notified A (run.failed): one of those is A's notification
        String notification = null;
        for (int i = 0; i < 100 && notification == null; i++) {
            JsonNode n = http.get("/api/notifications?limit=1").json().path("notifications");
            if (n.size() > 0) {
                notification = n.get(0).path("id").asText();
            } else {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (notification == null) {
            notification = "ntf_" + random(20);
            notes.add("no notification arrived for the failed runs: /api/notifications/{id} is swept with a random id");
        }
        ids.put(Kind.NOTIFICATION, notification);
        ids.put(
                Kind.SHORTCUT,
                ok(http.post("/api/shortcuts", Map.of("title", "kept", "url", "/kept")), 201)
                        .path("shortcut")
                        .path("id")
                        .asText());
        JsonNode group = ok(
                        http.post(
                                "/api/spaces/" + space + "/shortcuts/groups",
                                Map.of("name", "kept", "items", List.of(Map.of("title", "kept", "url", "/kept")))),
                        201)
                .path("group");
        ids.put(Kind.SHORTCUT_GROUP, group.path("id").asText());
        ids.put(Kind.SHORTCUT_ITEM, group.path("items").get(0).path("id").asText());

        // a headless Chromium of A's, kept alive by the sweep's own requests (its idle timeout is the server's)
        ids.put(
                Kind.BROWSER_SESSION,
                ok(http.post("/api/spaces/" + space + "/browser-sessions", Map.of()), 201)
                        .path("browser_session")
                        .path("id")
                        .asText());

        // due tomorrow: it does not fire while the sweep runs, so A's snapshot stays the same
        ids.put(
                Kind.REMINDER,
                ok(
                                http.post(
                                        "/api/spaces/" + space + "/reminders",
                                        Map.of(
                                                "title",
                                                "kept",
                                                "at",
                                                java.time.Instant.now()
                                                        .plus(java.time.Duration.ofDays(1))
                                                        .toString())),
                                201)
                        .path("reminder")
                        .path("id")
                        .asText());
        ids.put(
                Kind.SKILL,
                ok(
                                http.post(
                                        "/api/spaces/" + space + "/skills",
                                        Map.of("name", SKILL_NAME, "description", "kept", "instructions", "kept")),
                                201)
                        .path("skill")
                        .path("id")
                        .asText());

        // an MCP server that answers (the sweep's GET of its tools is the same every time)
        try {
            ids.put(
                    Kind.MCP_SERVER,
                    ok(
                                    http.post(
                                            "/api/mcp/servers",
                                            Map.of("space_id", space, "name", "kept-mcp", "url", TinyMcpServer.url())),
                                    201)
                            .path("server")
                            .path("id")
                            .asText());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }

        ids.put(
                Kind.TOKEN,
                ok(http.post("/api/me/personal-access-tokens", Map.of("name", "swept")), 201)
                        .path("id")
                        .asText());
        ids.put(
                Kind.OAUTH_CLIENT,
                ok(
                                http.post(
                                        "/api/me/oauth/clients",
                                        Map.of(
                                                "client_name",
                                                "Swept app",
                                                "redirect_uris",
                                                List.of("http://127.0.0.1:9/cb"))),
                                201)
                        .path("client")
                        .path("client_id")
                        .asText());

        JsonNode repo =
                ok(http.post("/api/spaces/" + space + "/init-repo", null), 201).path("repository");
        String repoId = repo.path("id").asText();
        ids.put(Kind.REPO, repoId);
        ids.put(Kind.REPO_NAME, repo.path("name").asText());
        clonePath = java.net.URI.create(repo.path("clone_url").asText()).getPath();
        spaceSlug = clonePath.split("/")[2];
        storeSlug = "sweep-" + random(10).toLowerCase(java.util.Locale.ROOT);
        ok(http.post("/api/spaces/" + space + "/stores", Map.of("slug", storeSlug, "name", "Swept store")), 201);
        ids.put(
                Kind.STORE_REGISTRY_ENTRY,
                ok(
                                http.post(
                                        "/api/spaces/" + space + "/store-registry",
                                        Map.of("identifier", http.base() + "/ap/stores/" + storeSlug)),
                                201)
                        .path("store")
                        .path("id")
                        .asText());
        commit = ok(
                        http.post(
                                "/api/spaces/" + space + "/git/commit",
                                Map.of(
                                        "message",
                                        "kept",
                                        "changes",
                                        List.of(
                                                Map.of("path", "README.md", "content", "kept\n"),
                                                Map.of("path", "app.yml", "content", SWEEP_APP)))),
                        201)
                .path("commit")
                .path("sha")
                .asText();
        ok(http.post("/api/repos/" + repoId + "/branches", Map.of("name", "feature", "from", "main")), 201);
        // a file-sync session of A's on the feature branch (README.md is in its work tree); its idle timeout is the
        // server's default, longer than the sweep
        ids.put(
                Kind.SYNC_SESSION,
                ok(http.post("/api/spaces/" + space + "/sessions", Map.of("repo", repoId, "branch", "feature")), 201)
                        .path("session")
                        .path("id")
                        .asText());
        // the app platform: an app deployment of A's repository (a kv resource, no worker), its group and app
        JsonNode appDeployment = ok(
                        http.post(
                                "/api/spaces/" + space + "/app-deployments",
                                Map.of("source", Map.of("kind", "git_ref", "repository_id", repoId, "ref", "main"))),
                        201)
                .path("app_deployment");
        ids.put(Kind.APP_DEPLOYMENT, appDeployment.path("id").asText());
        ids.put(Kind.APP_GROUP, appDeployment.path("group").path("id").asText());
        for (JsonNode app : ok(http.get("/api/apps"), 200).path("apps")) {
            if (!app.path("builtin").asBoolean()) {
                ids.put(Kind.APP, app.path("id").asText());
            }
        }
        ok(http.post("/api/repos/" + repoId + "/star", null), 200, 201, 204);
        ids.put(
                Kind.PULL,
                String.valueOf(ok(
                                http.post(
                                        "/api/repos/" + repoId + "/pulls",
                                        Map.of("title", "Swept", "head", "feature", "base", "main")),
                                201)
                        .path("pull_request")
                        .path("number")
                        .asInt()));
        ok(http.post("/api/repos/" + repoId + "/releases", Map.of("tag_name", RELEASE_TAG)), 201);
        String boundary = "sweepBoundary" + random(12);
        ids.put(
                Kind.RELEASE_ASSET,
                ok(
                                http.send(
                                        "POST",
                                        "/api/repos/" + repoId + "/releases/" + RELEASE_TAG + "/assets",
                                        "--" + boundary + "\r\nContent-Disposition: form-data; name=\"attachment\";"
                                                + " filename=\"kept.txt\"\r\n\r\nkept asset\r\n--" + boundary
                                                + "--\r\n",
                                        "multipart/form-data; boundary=" + boundary),
                                201)
                        .path("asset")
                        .path("id")
                        .asText());

        // Actions: a secret, a workflow, a finished run of it with its job and artifact
        ok(http.put("/api/repos/" + repoId + "/actions/secrets/SWEEP_VAR", Map.of("value", "kept secret")), 201);
        ok(
                http.send(
                        "PUT",
                        "/api/repos/" + repoId + "/workflows/" + SWEEP_WORKFLOW,
                        "on: workflow_dispatch\njobs:\n  kept:\n    runs-on: busybox\n    steps:\n"
                                + "      - run: echo kept > kept.txt\n      - uses: actions/upload-artifact@v4\n"
                                + "        with:\n          name: kept\n          path: kept.txt\n",
                        "text/yaml"),
                201);
        String actionRun = ok(
                        http.post("/api/repos/" + repoId + "/actions/runs", Map.of("workflow", SWEEP_WORKFLOW)), 201)
                .path("workflow_run")
                .path("id")
                .asText();
        ids.put(Kind.ACTION_RUN, actionRun);
        for (long deadline = System.nanoTime() + 120_000_000_000L; System.nanoTime() < deadline; ) {
            JsonNode r = ok(http.get("/api/repos/" + repoId + "/actions/runs/" + actionRun), 200)
                    .path("workflow_run");
            if (r.path("status").asText().equals("completed")) {
                assertEquals("success", r.path("conclusion").asText(), r.toString());
                break;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        ids.put(
                Kind.ACTION_JOB,
                ok(http.get("/api/repos/" + repoId + "/actions/runs/" + actionRun + "/jobs"), 200)
                        .path("jobs")
                        .path(0)
                        .path("id")
                        .asText());
        ids.put(
                Kind.ACTION_ARTIFACT,
                ok(http.get("/api/repos/" + repoId + "/actions/runs/" + actionRun + "/artifacts"), 200)
                        .path("artifacts")
                        .path(0)
                        .path("id")
                        .asText());

        // a kv resource with an entry and a token (its binding is made with the service below); its second workspace
        // holds a read grant
        String resource = ok(http.post("/api/resources", Map.of("name", RESOURCE_NAME, "type", "kv")), 201)
                .path("resource")
                .path("id")
                .asText();
        ids.put(Kind.RESOURCE, resource);
        ids.put(Kind.RESOURCE_NAME, RESOURCE_NAME);
        ok(
                http.send(
                        "PUT",
                        "/api/resources/" + resource + "/kv/entries/" + KV_KEY,
                        "kept".getBytes(),
                        "application/octet-stream"),
                200);
        ids.put(
                Kind.RESOURCE_TOKEN,
                ok(http.post("/api/resources/" + resource + "/tokens", Map.of("permission", "read")), 201)
                        .path("token")
                        .path("id")
                        .asText());
        grantedSpace = ok(http.post("/api/spaces", Map.of("name", "sweep granted")), 201)
                .path("space")
                .path("id")
                .asText();
        // in the workspace without a model: its plan answers 409 instead of asking a model the shared server does
        // not script (a 502), and without a thread its run answers 409
        ids.put(
                Kind.AGENT_TASK,
                ok(http.post("/api/spaces/" + grantedSpace + "/agent-tasks", Map.of("title", "kept task")), 201)
                        .path("agent_task")
                        .path("id")
                        .asText());
        // people: a follow request of A's to an account that approves its followers, and A's avatar
        User approving = server.newUser();
        ok(approving.http().patch("/api/me/settings", Map.of("private_account", true)), 200);
        ids.put(
                Kind.FOLLOW_REQUEST,
                ok(http.post("/api/users/" + approving.username() + "/follow", Map.of()), 200)
                        .path("follow_request_id")
                        .asText());
        avatarId = ok(http.send("PUT", "/api/me/avatar", pixel(), "image/png"), 200)
                .path("avatar_url")
                .asText()
                .replaceFirst(".*/", "");
        ok(
                http.post(
                        "/api/resources/" + resource + "/access",
                        Map.of("space_id", grantedSpace, "permission", "read")),
                201);

        // a service with a custom domain and, when a worker provider is installed, a deployment
        String service = ok(http.post("/api/services", Map.of("name", "swept service", "space_id", space)), 201)
                .path("service")
                .path("id")
                .asText();
        ids.put(Kind.SERVICE, service);
        // the kv resource bound to it (a binding needs a service the caller owns)
        ok(http.post("/api/resources/" + resource + "/bind", Map.of("service_id", service)), 201);
        ids.put(
                Kind.DOMAIN,
                ok(
                                http.post(
                                        "/api/services/" + service + "/custom-domains",
                                        Map.of(
                                                "domain",
                                                "sweep-" + random(8).toLowerCase(java.util.Locale.ROOT)
                                                        + ".example.test")),
                                201)
                        .path("domain")
                        .path("id")
                        .asText());
        Http.Reply deployed = http.post(
                "/api/services/" + service + "/deployments",
                Map.of(
                        "bundle",
                        java.util.Base64.getEncoder()
                                .encodeToString("export default { fetch() { return new Response('swept') } }"
                                        .getBytes(java.nio.charset.StandardCharsets.UTF_8))));
        if (deployed.status() == 201) {
            ids.put(
                    Kind.DEPLOYMENT,
                    deployed.json().path("deployment").path("id").asText());
        } else {
            ids.put(Kind.DEPLOYMENT, "dep_" + random(20));
            notes.add(
                    "no deployment provider runs worker bundles: /api/services/{id}/deployments/{deploymentId} is swept with a random id");
        }
    }

    /** A one-pixel PNG. */
    private static byte[] pixel() {
        try {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            javax.imageio.ImageIO.write(
                    new java.awt.image.BufferedImage(1, 1, java.awt.image.BufferedImage.TYPE_INT_RGB), "png", out);
            return out.toByteArray();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static final String RESOURCE_NAME = "swept-kv";
    static final String KV_KEY = "kept-key";
    String grantedSpace;

    private static JsonNode ok(Http.Reply r, int... expected) {
        for (int e : expected) {
            if (r.status() == e) {
                return r.json();
            }
        }
        assertEquals(expected[0], r.status(), r.body());
        return r.json();
    }

    /** The kind of object a path parameter names, from the literal segment before it. */
    static Kind kindOf(String previousSegment, String param) {
        switch (param) {
            case "actionRunId" -> {
                return Kind.ACTION_RUN; // /api/repos/{repoId}/actions/runs/{actionRunId}
            }
            case "jobId" -> {
                return Kind.ACTION_JOB;
            }
            case "actionArtifactId" -> {
                return Kind.ACTION_ARTIFACT;
            }
            case "repoName" -> {
                return Kind.REPO_NAME; // /api/users/{username}/{repoName}, explore's by-name and packages routes
            }
            case "appGroupId" -> {
                return Kind.APP_GROUP; // /api/spaces/{spaceId}/groups/{appGroupId}
            }
            default -> {
                // named by the segment before it
            }
        }
        if (param.startsWith("fileId")) {
            return Kind.FILE; // storage's /storage/{fileId}, /storage/download/{fileId}, /storage/upload/{fileId}
        }
        return switch (previousSegment) {
            case "spaces", "workspaces" -> Kind.SPACE;
            case "threads" -> Kind.THREAD;
            case "memories" -> Kind.MEMORY;
            case "runs" -> Kind.RUN;
            case "artifacts" -> Kind.ARTIFACT;
            case "personal-access-tokens" -> Kind.TOKEN;
            case "clients", "consents", "register" -> Kind.OAUTH_CLIENT;
            case "shares" -> Kind.SHARE;
            case "repos" -> Kind.REPO;
            case "by-repo" -> Kind.REPO; // /api/explore/packages/by-repo/{repoId}/reviews
            case "notifications" -> Kind.NOTIFICATION;
            case "shortcuts" -> Kind.SHORTCUT;
            case "groups" -> Kind.SHORTCUT_GROUP;
            case "items" -> Kind.SHORTCUT_ITEM;
            case "resources" -> Kind.RESOURCE;
            case "shared" -> Kind.SPACE;
            case "tokens" -> Kind.RESOURCE_TOKEN;
            case "by-name" -> Kind.RESOURCE_NAME;
            case "reminders" -> Kind.REMINDER;
            case "servers" -> Kind.MCP_SERVER; // /api/mcp/servers/{id}
            case "services", "workers" -> Kind.SERVICE; // /api/services/{id}, /api/workers/{id}/deployments
            case "space" -> Kind.SPACE; // /api/services/space/{spaceId}
            case "deployments" -> Kind.DEPLOYMENT;
            case "custom-domains" -> Kind.DOMAIN;
            case "pulls" -> Kind.PULL; // /api/repos/{repoId}/pulls/{number}
            case "assets" -> Kind.RELEASE_ASSET; // /api/repos/{repoId}/releases/{tag}/assets/{assetId}
            case "store-registry" -> Kind.STORE_REGISTRY_ENTRY;
            case "app-deployments" -> Kind.APP_DEPLOYMENT;
            case "apps" -> Kind.APP;
            case "browser-sessions" -> Kind.BROWSER_SESSION;
            case "agent-tasks" -> Kind.AGENT_TASK;
            case "follow-requests" -> Kind.FOLLOW_REQUEST; // /api/users/{username}/follow-requests/{id}/accept
            case "sessions" -> Kind.SYNC_SESSION; // /api/sessions/{sessionId}
            case "id" -> "skillId".equals(param) ? Kind.SKILL : Kind.NONE; // /skills/id/{skillId}
            default -> Kind.NONE;
        };
    }

    /**
     * A's value for {@code param} after {@code previousSegment} in {@code template}; null for a parameter the sweep
     * does not know yet (the sweep fails on it until it is mapped here or its route is exempted).
     */
    String value(String template, String previousSegment, String param) {
        Kind kind = kindOf(previousSegment, param);
        if (kind != Kind.NONE) {
            return ids.get(kind);
        }
        String name =
                param.contains(":") ? param.substring(0, param.indexOf(':')).trim() : param;
        if (template.startsWith("/api/resources/")) {
            switch (name) {
                case "name":
                    return RESOURCE_NAME;
                case "spaceId":
                    return grantedSpace;
                case "serviceId":
                    return ids.get(Kind.SERVICE);
                case "key":
                    return KV_KEY;
                case "type":
                    return "kv";
                case "tableName":
                    return "sweep_table";
                default:
                    break;
            }
        }
        return switch (name) {
            case "token" -> shareToken;
            case "ref" -> "main";
            case "tag" -> RELEASE_TAG;
            case "branch" -> "feature";
            case "path" -> template.contains("/workflows/") ? SWEEP_WORKFLOW : "README.md";
            case "baseHead" -> "main...feature";
            case "commitId" -> commit;
            case "username" ->
                template.startsWith("/admin/")
                        ? adminTarget.username()
                        // a repository by its owner's name: A's, which the stranger B asks for
                        : template.startsWith("/api/users/{username}/{repoName}")
                                        || template.startsWith("/api/explore/")
                                ? a.username()
                                : b.username();
            case "seedId" -> "seed_sweepNoSuchSeed0";
            // operator-only: a job the kernel never started (the jobs are in memory, none has a known id)
            case "jobId" -> "job_sweepNoSuchJob0000000";
            case "name" ->
                template.startsWith("/admin/features")
                        ? "sweep-no-such-feature"
                        : template.startsWith("/admin/identity") ? "sweep-no-such-provider" : "SWEEP_VAR";
            case "symbolicName" -> "dev.atrium.sweep.no.such.bundle";
            // operator-only configuration: a PID that does not exist, so a PUT changes nothing on the shared server
            case "pid" -> "dev.atrium.sweep.no.such.pid";
            case "property" -> "sweepNoSuchProperty";
            case "provider" -> "sweep-no-such-provider";
            case "skillId" -> "research"; // an official skill (a custom one's id is Kind.SKILL)
            case "skillName" -> SKILL_NAME;
            // a published store: its /ap pages are public, so the name is no owned id (strangers read them too)
            case "storeSlug" -> storeSlug;
            case "slug" -> template.startsWith("/ap/stores/") ? storeSlug : null;
            // Model A's store actor and its canonical repository actors (/ap/repos/:owner/:repo)
            case "store" -> template.startsWith("/ap/stores/") ? storeSlug : null;
            case "owner" -> template.startsWith("/ap/") ? spaceSlug : null;
            case "repo" ->
                template.startsWith("/ap/") ? clonePath.replaceFirst(".*/", "").replace(".git", "") : null;
            // operator-only: a delivery that does not exist (strangers are refused before the id matters)
            // an invoice is the payment provider's: the shared server has none (billing answers BILLING_NOT_CONFIGURED
            // to everyone alike; BillingTest covers another customer's invoice against its fake Stripe)
            case "id" ->
                template.startsWith("/api/avatars/")
                        ? avatarId
                        : template.startsWith("/admin/federation/deliveries/")
                                ? "dlv_sweepNoSuchDelivery0"
                                : template.startsWith("/api/billing/invoices/") ? "in_sweepNoProvider0" : null;
            // an activity of a Model A outbox that does not exist (public: strangers read them too)
            case "activityId" -> template.startsWith("/ap/") ? "act_sweepNoSuchActivity0" : null;
            default -> null;
        };
    }

    /** A well-formed id of the same shape as {@code id} (its prefix kept, the rest random) that names nothing. */
    static String missingLike(String id) {
        int underscore = id.indexOf('_');
        String prefix = underscore >= 0 && underscore < 8 ? id.substring(0, underscore + 1) : "";
        return prefix + random(id.length() - prefix.length());
    }

    static String random(int n) {
        StringBuilder sb = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            sb.append(BASE62.charAt(RANDOM.nextInt(BASE62.length())));
        }
        return sb.toString();
    }
}
