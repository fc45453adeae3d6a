package dev.atrium.itests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs {@code ./atrium} as a user would, capturing its output and exit code. */
final class Commands {

    record Result(int exit, String stdout, String stderr) {
        String lastLine() {
            String[] lines = stdout.strip().split("\n");
            return lines[lines.length - 1];
        }
    }

    private Commands() {}

    static Result atrium(String... args) throws IOException, InterruptedException {
        return atriumIn(null, java.util.Map.of(), args);
    }

    /** In the directory {@code dir} (null: this one), with {@code env} added to the environment. */
    static Result atriumIn(java.nio.file.Path dir, java.util.Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(AtriumServer.ROOT.resolve("atrium").toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        if (dir != null) {
            pb.directory(dir.toFile());
        }
        pb.environment().put("ATRIUM_NO_BUILD", "1");
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("./atrium " + String.join(" ", args) + " did not finish");
        }
        return new Result(
                p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }
}
