package dev.atrium.operations.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code GET /admin/logs}: the server's last log lines from the in-memory ring ({@link LogRing}), after a line the
 * caller has ({@code after}, for a live tail), at a level or above and from loggers whose name contains a text;
 * {@code GET /admin/logs/download} the same as a text file.
 */
@Component(service = LogResource.class)
@KernelResource
@Path("/admin/logs")
@OperatorOnly
public class LogResource {

    static final int DEFAULT_LIMIT = 500;

    /** A log line: {@code time} null and {@code logger} {@code stderr} for output that is not SLF4J's. */
    public record LogLine(long seq, String time, String level, String logger, String thread, String message) {}

    /** The lines, oldest first, and the {@code seq} to ask after next time ({@code next}). */
    public record LogLines(
            List<LogLine> lines,
            long next,
            @JsonProperty("max_lines") int maxLines) {}

    private final LogRing ring;

    @Activate
    public LogResource(@Reference LogRing ring) {
        this.ring = ring;
    }

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public LogLines lines(
            @QueryParam("after") String after,
            @QueryParam("level") String level,
            @QueryParam("logger") String logger,
            @QueryParam("limit") String limit) {
        long from = after(after);
        LogRing.Tail tail = ring.tail(from, level(level), logger(logger), limit(limit, DEFAULT_LIMIT));
        List<LogLine> lines = tail.lines().stream()
                .map(l -> new LogLine(l.seq(), l.time(), l.level(), l.logger(), l.thread(), l.message()))
                .toList();
        // lines filtered out need not be read again; an "after" past the newest line (the server restarted) goes on
        // from the newest
        return new LogLines(lines, tail.last(), LogRing.MAX_LINES);
    }

    @GET
    @Path("download")
    @Produces("text/plain; charset=utf-8")
    public Response download(@QueryParam("level") String level, @QueryParam("logger") String logger) {
        StringBuilder text = new StringBuilder();
        for (LogRing.Line l : ring.lines(0, level(level), logger(logger), LogRing.MAX_LINES)) {
            text.append(l.text()).append('\n');
        }
        return Response.ok(text.toString().getBytes(StandardCharsets.UTF_8))
                .header("Content-Disposition", "attachment; filename=\"atrium.log\"")
                .build();
    }

    static long after(String after) {
        if (after == null || after.isEmpty()) {
            return 0;
        }
        if (!after.matches("[0-9]{1,18}")) {
            throw ApiException.badRequest("after must be a line's seq (a whole number)");
        }
        return Long.parseLong(after);
    }

    static String level(String level) {
        if (level == null || level.isEmpty()) {
            return null;
        }
        if (!LogRing.LEVELS.contains(level)) {
            throw ApiException.badRequest("level must be one of " + String.join(", ", LogRing.LEVELS));
        }
        return level;
    }

    static String logger(String logger) {
        if (logger == null || logger.isEmpty()) {
            return null;
        }
        if (logger.length() > 200) {
            throw ApiException.badRequest("logger may be at most 200 characters");
        }
        return logger;
    }

    static int limit(String limit, int otherwise) {
        if (limit == null || limit.isEmpty()) {
            return otherwise;
        }
        if (!limit.matches("[0-9]{1,5}")
                || Integer.parseInt(limit) < 1
                || Integer.parseInt(limit) > LogRing.MAX_LINES) {
            throw ApiException.badRequest("limit must be a whole number from 1 to " + LogRing.MAX_LINES);
        }
        return Integer.parseInt(limit);
    }
}
