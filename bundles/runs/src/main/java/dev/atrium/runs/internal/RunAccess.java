package dev.atrium.runs.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.runs.internal.RunStore.Run;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** Loads a run by id and proves its workspace through the kernel: a stranger's run is the same 404 as a missing one. */
@Component(service = RunAccess.class)
public class RunAccess {

    static final String NOT_FOUND = "run not found";
    private final OwnerScope ownerScope;
    final RunStore store;

    @Activate
    public RunAccess(@Reference OwnerScope ownerScope, @Reference RunStore store) {
        this.ownerScope = ownerScope;
        this.store = store;
    }

    Run owned(Caller caller, String id) {
        Run run = store.get(id).orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        try {
            ownerScope.require(caller, run.spaceId());
        } catch (ApiException e) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return run;
    }

    static long nonNegative(String name, String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            long v = Long.parseLong(value.trim());
            if (v < 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be a non-negative integer");
        }
    }

    static String cursor(Instant createdAt, String id) {
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString((createdAt + "|" + id).getBytes(StandardCharsets.UTF_8));
    }

    /** Earliest and latest instants a cursor may hold: PostgreSQL's timestamptz cannot hold all of {@link Instant}'s range. */
    private static final Instant CURSOR_MIN = Instant.parse("0001-01-01T00:00:00Z");

    private static final Instant CURSOR_MAX = Instant.parse("9999-12-31T23:59:59.999999Z");

    /** The instant of a cursor; an {@link IllegalArgumentException} when it is not one the database can compare. */
    static Instant cursorInstant(String text) {
        Instant at = Instant.parse(text);
        if (at.isBefore(CURSOR_MIN) || at.isAfter(CURSOR_MAX)) {
            throw new IllegalArgumentException("cursor instant out of range: " + text);
        }
        return at;
    }

    /** {created_at, id} of a runs cursor; 400 when it is not one. */
    static Object[] parseCursor(String cursor) {
        try {
            String s = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
            int bar = s.indexOf('|');
            return new Object[] {cursorInstant(s.substring(0, bar)), s.substring(bar + 1)};
        } catch (RuntimeException e) {
            throw ApiException.badRequest("cursor is not valid");
        }
    }
}
