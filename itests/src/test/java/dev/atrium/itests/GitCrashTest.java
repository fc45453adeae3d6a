package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.itests.AtriumServer.User;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server killed with SIGKILL in the middle of a large push leaves a sound repository, and once it runs again, not the
 * push's temporary pack either.
 */
class GitCrashTest {

    @TempDir
    Path tmp;

    @Test
    void killingTheServerDuringAPushLeavesTheRepositoryConsistent() throws Throwable {
        TestDatabase db = TestDatabase.create();
        Path data = tmp.resolve("data");
        AtriumServer server = AtriumServer.launch(data, db);
        AtriumServer restarted = null;
        try {
            User u = server.newUser();
            Http.Reply created = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/repos", Map.of("name", "big"));
            assertEquals(201, created.status(), created.body());
            String id = created.get("repository").get("id").asText();
            Path bare = data.resolve("git").resolve(id + ".git");
            GitClient git = new GitClient(tmp.resolve("home"), u.http().token());
            String remote = server.base() + "/git/" + u.username() + "/big.git";

            Path work = git.newWorkingCopy(tmp.resolve("w"), "README.md", "small start\n");
            git.ok(work, "push", "-q", remote, "main");
            String oldHead = git.ok(work, "rev-parse", "HEAD");

            Random random = new Random(42);
            for (int i = 0; i < 6; i++) {
                byte[] noise = new byte[8 << 20];
                random.nextBytes(noise);
                Files.write(work.resolve("blob" + i + ".bin"), noise);
            }
            git.ok(work, "add", "-A");
            git.ok(work, "commit", "-q", "-m", "48 MiB of incompressible data");
            String newHead = git.ok(work, "rev-parse", "HEAD");
            CompletableFuture<GitClient.Result> push =
                    CompletableFuture.supplyAsync(() -> git.run(work, "push", remote, "main"));

            long deadline = System.currentTimeMillis() + 60_000;
            while (incomingBytes(bare) < (4 << 20)) {
                assertTrue(System.currentTimeMillis() < deadline, "the push never started writing a pack");
                assertTrue(!push.isDone(), "the push finished before the server could be killed: " + push.getNow(null));
                Thread.sleep(5);
            }
            server.killHard();
            GitClient.Result interrupted = push.get();
            assertTrue(interrupted.exit() != 0, "the push failed with the server: " + interrupted.both());

            assertTrue(incomingBytes(bare) > 0, "the killed push left its temporary pack");
            restarted = AtriumServer.launch(data, db);
            // the restarted server removes what the killed push left (before, it stayed through restarts and gc)
            for (long until = System.currentTimeMillis() + 30_000; incomingBytes(bare) > 0; Thread.sleep(100)) {
                assertTrue(
                        System.currentTimeMillis() < until,
                        "the killed push's temporary pack is still there 30 s after the restart");
            }
            git.ok(bare, "fsck", "--strict", "--no-dangling");
            String head = git.ok(bare, "rev-parse", "refs/heads/main");
            assertTrue(head.equals(oldHead) || head.equals(newHead), "main is the old or the new commit, not " + head);
            List<String> locks;
            try (Stream<Path> s = Files.walk(bare)) {
                locks = s.map(Path::toString).filter(p -> p.endsWith(".lock")).toList();
            }
            assertEquals(List.of(), locks, "no ref is left locked");

            String again = restarted.base() + "/git/" + u.username() + "/big.git";
            git.ok(work, "push", "-q", again, "main");
            assertEquals(newHead, git.ok(bare, "rev-parse", "refs/heads/main"));
            git.ok(bare, "fsck", "--strict", "--no-dangling");
        } finally {
            if (server.process.isAlive()) {
                server.killHard(); // the JVM too, not only the atrium script while it is the JVM's parent
            }
            if (restarted != null) {
                restarted.close();
            } else {
                db.close();
            }
        }
    }

    private static long incomingBytes(Path bare) throws IOException {
        if (!Files.isDirectory(bare)) {
            return 0;
        }
        try (Stream<Path> s = Files.walk(bare)) {
            return s.filter(p -> p.getFileName().toString().startsWith("incoming_"))
                    .mapToLong(p -> p.toFile().length())
                    .sum();
        } catch (java.io.UncheckedIOException raced) {
            return 0;
        }
    }
}
