package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceRegistration;

/**
 * Repositories publish EventAdmin events ({@code atrium/repo/*}) for pushes, branches, tags and their own
 * lifecycle. A handler registered in the running framework, as federation or workflows will register one,
 * receives them.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class RepositoryEventsTest {

    @TempDir
    Path tmp;

    /** An event as the handler saw it: its topic and properties. */
    record Seen(String topic, Map<String, Object> properties) {}

    @Test
    void pushesBranchesTagsAndRepositoryChangesAreEvents() throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp)) {
            runtime.assertHealthy(90_000);
            BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
            ServiceRegistration<?> handler = register(runtime, seen);
            try {
                Http operator = new Http(
                        runtime.base(),
                        Files.readString(runtime.data.resolve("operator.token")).trim());
                Http.Reply user = operator.post("/admin/users", Map.of("username", "eve"));
                assertEquals(201, user.status(), user.body());
                String space = user.get("space").get("id").asText();
                Http eve = new Http(
                        runtime.base(),
                        operator.post("/admin/users/eve/tokens", Map.of("scopes", "*"))
                                .get("token")
                                .asText());

                String id = eve.post("/api/spaces/" + space + "/repos", Map.of("name", "watched"))
                        .get("repository")
                        .get("id")
                        .asText();
                Seen created = next(seen, "atrium/repo/created");
                assertEquals(id, created.properties().get("repo_id"));
                assertEquals(space, created.properties().get("space_id"));

                GitClient git = new GitClient(tmp.resolve("home"), eve.token());
                Path work = git.newWorkingCopy(tmp.resolve("w"), "a.txt", "a\n");
                git.ok(work, "tag", "v1");
                String remote = runtime.base() + "/git/eve/watched.git";
                git.ok(work, "push", "-q", remote, "main", "v1");
                Seen pushed = next(seen, "atrium/repo/pushed");
                assertEquals(id, pushed.properties().get("repo_id"));
                String refs = String.valueOf(pushed.properties().get("refs"));
                assertTrue(refs.contains("refs/heads/main") && refs.contains("refs/tags/v1"), refs);
                String commits = String.valueOf(pushed.properties().get("commits"));
                assertTrue(commits.contains(git.ok(work, "rev-parse", "HEAD")) && commits.contains("initial"), commits);
                assertTrue(
                        String.valueOf(pushed.properties().get("principal_id")).startsWith("pr"), pushed.toString());
                assertEquals(
                        "refs/heads/main",
                        next(seen, "atrium/repo/branch_created").properties().get("ref"));
                assertEquals(
                        "refs/tags/v1",
                        next(seen, "atrium/repo/tag_created").properties().get("ref"));

                git.ok(work, "push", "-q", remote, ":refs/tags/v1");
                assertEquals(
                        "refs/tags/v1",
                        next(seen, "atrium/repo/tag_deleted").properties().get("ref"));
                assertEquals(
                        201,
                        eve.post("/api/repos/" + id + "/branches", Map.of("name", "topic"))
                                .status());
                assertEquals(
                        "refs/heads/topic",
                        next(seen, "atrium/repo/branch_created").properties().get("ref"));
                assertEquals(
                        200, eve.delete("/api/repos/" + id + "/branches/topic").status());
                assertEquals(
                        "refs/heads/topic",
                        next(seen, "atrium/repo/branch_deleted").properties().get("ref"));
                assertEquals(
                        200,
                        eve.patch("/api/repos/" + id, Map.of("description", "now described"))
                                .status());
                next(seen, "atrium/repo/updated");
                assertEquals(200, eve.delete("/api/repos/" + id).status());
                assertEquals(id, next(seen, "atrium/repo/deleted").properties().get("repo_id"));
            } finally {
                handler.unregister();
            }
        }
    }

    /** Skips events of other topics; fails after 10 s without one of {@code topic}. */
    private static Seen next(BlockingQueue<Seen> seen, String topic) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 10_000;
        while (System.currentTimeMillis() < deadline) {
            Seen s = seen.poll(100, TimeUnit.MILLISECONDS);
            if (s != null && s.topic().equals(topic)) {
                return s;
            }
        }
        throw new AssertionError("no event " + topic);
    }

    /** An EventHandler for atrium/repo/*: its interface comes from the framework, so it is a proxy. */
    private static ServiceRegistration<?> register(InFrameworkRuntime runtime, BlockingQueue<Seen> seen)
            throws Exception {
        Bundle eventAdmin = runtime.bundle("org.apache.felix.eventadmin");
        Class<?> handlerType = eventAdmin.loadClass("org.osgi.service.event.EventHandler");
        Object handler = Proxy.newProxyInstance(
                handlerType.getClassLoader(), new Class<?>[] {handlerType}, (proxy, method, args) -> {
                    if (method.getName().equals("handleEvent")) {
                        Object event = args[0];
                        String topic =
                                (String) event.getClass().getMethod("getTopic").invoke(event);
                        Map<String, Object> props = new java.util.HashMap<>();
                        for (String name : (String[])
                                event.getClass().getMethod("getPropertyNames").invoke(event)) {
                            props.put(
                                    name,
                                    event.getClass()
                                            .getMethod("getProperty", String.class)
                                            .invoke(event, name));
                        }
                        seen.add(new Seen(topic, props));
                        return null;
                    }
                    return switch (method.getName()) {
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> "test event handler";
                    };
                });
        Dictionary<String, Object> props = new Hashtable<>();
        props.put("event.topics", List.of("atrium/repo/*").toArray(new String[0]));
        return runtime.framework.getBundleContext().registerService(handlerType.getName(), handler, props);
    }
}
