package dev.atrium.deploy.workerd.internal;

import dev.atrium.deploy.api.Deployment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** A JVM that runs one worker and then waits to be killed: {@code OrphanProbe <binary> <directory>}. */
public final class OrphanProbe {

    private OrphanProbe() {}

    public static void main(String[] args) throws Exception {
        WorkerdRuntime runtime = new WorkerdRuntime(new WorkerdRuntime.Settings(
                args[0],
                Path.of(args[1]),
                Duration.ofSeconds(1),
                WorkerdRuntime.DEFAULT_COMPATIBILITY_DATE,
                Duration.ofSeconds(20),
                100));
        runtime.apply(List.of(new Deployment(
                "d1",
                "s1",
                "worker-bundle",
                "export default { fetch() { return new Response('probe'); } };".getBytes(StandardCharsets.UTF_8),
                null,
                List.of(),
                Map.of(),
                Map.of(),
                List.of())));
        System.out.println("workerd " + runtime.processes().get(0).pid() + " "
                + runtime.endpoint("d1").orElseThrow());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
