package dev.atrium.containers.podman.internal;

import dev.atrium.deploy.api.LogBook;
import dev.atrium.runner.api.JobContainer.Output;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * A container's output bytes as log lines of its service: stdout's are {@code log}, stderr's {@code error}; a line
 * longer than 16 KiB is cut into several.
 */
final class OutputLines implements Output {

    private static final int MAX_LINE = 16 * 1024;

    private final LogBook logs;
    private final String serviceId;
    private final String deploymentId;
    private final ByteArrayOutputStream[] partial = {new ByteArrayOutputStream(), new ByteArrayOutputStream()};

    OutputLines(LogBook logs, String serviceId, String deploymentId) {
        this.logs = logs;
        this.serviceId = serviceId;
        this.deploymentId = deploymentId;
    }

    @Override
    public void write(boolean stderr, byte[] bytes, int offset, int length) {
        ByteArrayOutputStream line = partial[stderr ? 1 : 0];
        for (int i = offset; i < offset + length; i++) {
            if (bytes[i] == '\n' || line.size() >= MAX_LINE) {
                emit(stderr, line);
                if (bytes[i] == '\n') {
                    continue;
                }
            }
            line.write(bytes[i]);
        }
    }

    /** Emits what is left of an unterminated line (the container stopped). */
    void flush() {
        emit(false, partial[0]);
        emit(true, partial[1]);
    }

    private void emit(boolean stderr, ByteArrayOutputStream line) {
        if (line.size() > 0) {
            String text = line.toString(StandardCharsets.UTF_8).replaceAll("\r$", "");
            logs.append(serviceId, deploymentId, Instant.now(), stderr ? "error" : "log", text);
            line.reset();
        }
    }
}
