package dev.atrium.itests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The real {@code git} command line, isolated from the machine's configuration (own HOME, no system config,
 * no credential prompts), optionally sending a token with HTTP Basic as a user of Atrium would.
 */
final class GitClient {

    record Result(int exit, String out, String err) {
        String both() {
            return out + err;
        }
    }

    private final Path home;
    private final String token;

    GitClient(Path home, String token) {
        this.home = home;
        this.token = token;
    }

    static GitClient anonymous(Path home) {
        return new GitClient(home, null);
    }

    GitClient withToken(String other) {
        return new GitClient(home, other);
    }

    /** Runs {@code git args} in {@code dir}; never prompts. */
    Result run(Path dir, String... args) {
        return run(dir, List.of(), args);
    }

    Result run(Path dir, List<String> env, String... args) {
        List<String> command = new ArrayList<>();
        command.add("git");
        if (token != null) {
            String basic = Base64.getEncoder().encodeToString(("atrium:" + token).getBytes(StandardCharsets.UTF_8));
            command.add("-c");
            command.add("http.extraHeader=Authorization: Basic " + basic);
        }
        command.addAll(List.of(args));
        try {
            Files.createDirectories(home);
            ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
            pb.environment().put("HOME", home.toString());
            pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
            pb.environment().put("GIT_TERMINAL_PROMPT", "0");
            pb.environment().put("GIT_ASKPASS", "/bin/false");
            pb.environment().put("GIT_AUTHOR_NAME", "Tester");
            pb.environment().put("GIT_AUTHOR_EMAIL", "tester@example.com");
            pb.environment().put("GIT_COMMITTER_NAME", "Tester");
            pb.environment().put("GIT_COMMITTER_EMAIL", "tester@example.com");
            for (String kv : env) {
                int eq = kv.indexOf('=');
                pb.environment().put(kv.substring(0, eq), kv.substring(eq + 1));
            }
            Process p = pb.start();
            p.getOutputStream().close();
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(() -> drain(p.getInputStream()));
            CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> drain(p.getErrorStream()));
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("git " + String.join(" ", args) + " did not finish in 300 s");
            }
            return new Result(
                    p.exitValue(),
                    new String(out.join(), StandardCharsets.UTF_8),
                    new String(err.join(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** As {@link #run}, failing the test with git's output when git fails. */
    String ok(Path dir, String... args) {
        Result r = run(dir, args);
        if (r.exit() != 0) {
            throw new AssertionError("git " + String.join(" ", args) + " failed with " + r.exit() + ":\n" + r.both());
        }
        return r.out().strip();
    }

    private static byte[] drain(java.io.InputStream in) {
        try (in) {
            return in.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }

    /** A new working copy with one commit of {@code files} (name, content pairs) on {@code main}. */
    Path newWorkingCopy(Path dir, String... files) throws IOException {
        Files.createDirectories(dir);
        ok(dir, "init", "-q", "-b", "main");
        for (int i = 0; i < files.length; i += 2) {
            Path f = dir.resolve(files[i]);
            Files.createDirectories(f.getParent());
            Files.writeString(f, files[i + 1]);
        }
        ok(dir, "add", "-A");
        ok(dir, "commit", "-q", "-m", "initial");
        return dir;
    }
}
