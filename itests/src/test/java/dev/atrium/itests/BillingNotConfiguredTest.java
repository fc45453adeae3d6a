package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * With no payment provider (the default, {@code none}), nothing is gated, usage is still counted, and every billing
 * route that needs the provider answers the clear {@code BILLING_NOT_CONFIGURED} error.
 */
@SharedServer
class BillingNotConfiguredTest {

    @Test
    void withoutAProviderNothingIsGatedAndTheProviderRoutesSayBillingIsNotConfigured(AtriumServer server) {
        User u = server.newUser();
        JsonNode b = u.http().get("/api/billing").json().path("billing");
        assertEquals("none", b.path("provider").asText(), b.toString());
        assertFalse(b.path("configured").asBoolean());
        assertTrue(b.path("message").asText().contains("not configured"), b.toString());
        b.path("gate").forEach(g -> assertTrue(g.path("allowed").asBoolean(), b.toString()));
        assertTrue(u.http()
                .get("/api/billing/usage")
                .json()
                .path("usage")
                .path("meters")
                .isArray());

        for (Http.Reply r : new Http.Reply[] {
            u.http().post("/api/billing/subscribe", Map.of("plan", "pro")),
            u.http().post("/api/billing/credits/checkout", Map.of("amount", 1000)),
            u.http().post("/api/billing/portal", Map.of()),
            u.http().get("/api/billing/invoices"),
            u.http().get("/api/billing/invoices/in_1/pdf"),
            u.http().post("/api/billing/invoices/in_1/send", Map.of()),
            server.anonymous().post("/api/billing/webhook", Map.of("id", "evt_1"))
        }) {
            assertEquals(404, r.status(), r.body());
            assertEquals(
                    "BILLING_NOT_CONFIGURED",
                    r.json().path("error").path("code").asText(),
                    r.body());
            assertTrue(r.json().path("error").path("message").asText().contains("ATRIUM_BILLING_PROVIDER"), r.body());
        }
        // a run is not gated
        String thread = u.http()
                .post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "free"))
                .json()
                .path("thread")
                .path("id")
                .asText();
        assertEquals(
                201,
                u.http()
                        .post("/api/threads/" + thread + "/runs", Map.of("input", "hi"))
                        .status());
    }
}
