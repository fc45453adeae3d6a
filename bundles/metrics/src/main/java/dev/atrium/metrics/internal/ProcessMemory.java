package dev.atrium.metrics.internal;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process's CPU seconds, and its resident and virtual memory, as the Prometheus client libraries name them; Micrometer's own binders
 * see only the JVM's heaps and pools, not what the process holds (thread stacks, direct buffers, mapped indexes).
 */
final class ProcessMemory implements MeterBinder {

    private static final Path STATUS = Path.of("/proc/self/status");
    private static final Path STAT = Path.of("/proc/self/stat");

    @Override
    public void bindTo(MeterRegistry registry) {
        io.micrometer.core.instrument.FunctionCounter.builder("process.cpu", STAT, ProcessMemory::cpuSeconds)
                .description("CPU time the server's process used, user and system")
                .baseUnit("seconds")
                .register(registry);
        if (!Files.isReadable(STATUS)) {
            return;
        }
        Gauge.builder("process.resident.memory", () -> kibibytes("VmRSS:") * 1024)
                .description("Resident memory of the server's process")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder("process.virtual.memory", () -> kibibytes("VmSize:") * 1024)
                .description("Virtual memory of the server's process")
                .baseUnit("bytes")
                .register(registry);
    }

    /** utime and stime of /proc/self/stat, in the kernel's USER_HZ (100 per second on Linux's user ABI). */
    static double cpuSeconds(Path stat) {
        try {
            String text = Files.readString(stat);
            // the command name (field 2) may hold spaces; the fields counted from after its closing parenthesis
            String[] f = text.substring(text.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    static double kibibytes(String field) {
        try {
            for (String line : Files.readAllLines(STATUS)) {
                if (line.startsWith(field)) {
                    return Double.parseDouble(
                            line.substring(field.length()).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | NumberFormatException e) {
            return Double.NaN;
        }
        return Double.NaN;
    }
}
