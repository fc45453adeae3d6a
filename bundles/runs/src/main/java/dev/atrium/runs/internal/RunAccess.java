package dev.atrium.runs.internal;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.runs.internal.RunStore.Run;

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
        return Base64.getUrlEncoder().withoutPadding().encodeToString((createdAt + "|" + id).getBytes(StandardCharsets.UTF_8));
    }

    /** {created_at, id} of a runs cursor; 400 when it is not one. */
    static Object[] parseCursor(String cursor) {
        try {
            String s = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
            int bar = s.indexOf('|');
            return new Object[] { Instant.parse(s.substring(0, bar)), s.substring(bar + 1) };
        } catch (RuntimeException e) {
            throw ApiException.badRequest("cursor is not valid");
        }
    }
}
