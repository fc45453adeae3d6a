package dev.atrium.kernel.internal.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ErrorBodyTest {

    @Test
    void everySpecStatusHasItsCode() {
        assertEquals("BAD_REQUEST", ErrorBody.codeFor(400));
        assertEquals("UNAUTHORIZED", ErrorBody.codeFor(401));
        assertEquals("FORBIDDEN", ErrorBody.codeFor(403));
        assertEquals("NOT_FOUND", ErrorBody.codeFor(404));
        assertEquals("CONFLICT", ErrorBody.codeFor(409));
        assertEquals("GONE", ErrorBody.codeFor(410));
        assertEquals("RATE_LIMITED", ErrorBody.codeFor(429));
        assertEquals("INTERNAL_ERROR", ErrorBody.codeFor(500));
        assertEquals("INTERNAL_ERROR", ErrorBody.codeFor(502));
    }

    @Test
    void onlyTheSpecShapeCountsAsAnErrorBody() {
        assertTrue(ErrorBody.isErrorBody(ErrorBody.bytes(404, "gone \"quoted\"")));
        assertFalse(ErrorBody.isErrorBody("No service was found.".getBytes(StandardCharsets.UTF_8)));
        assertFalse(ErrorBody.isErrorBody("{\"error\":\"not_found\"}".getBytes(StandardCharsets.UTF_8)));
        assertFalse(ErrorBody.isErrorBody(new byte[0]));
    }

    @Test
    void onlyApiAdminAndHealthAreCovered() {
        assertTrue(RequestEnvelope.covered("/api/spaces"));
        assertTrue(RequestEnvelope.covered("/admin/users"));
        assertTrue(RequestEnvelope.covered("/healthz"));
        assertTrue(
                RequestEnvelope.covered("/ap/stores/main"),
                "federation documents answer errors with the spec body too");
        assertTrue(RequestEnvelope.covered("/.well-known/webfinger"));
        assertFalse(RequestEnvelope.covered("/git/alice/repo.git/info/refs"));
        assertFalse(RequestEnvelope.covered("/apiary"));
    }
}
