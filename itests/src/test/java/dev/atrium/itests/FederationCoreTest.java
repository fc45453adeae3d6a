package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The federation core runs in the real runtime: the operator's view of the delivery queue answers, for the operator only. */
@SharedServer
class FederationCoreTest {

    @Test
    void theOperatorListsDeliveriesAndNobodyElseMay(AtriumServer server) {
        Http.Reply all = server.operator().get("/admin/federation/deliveries");
        assertEquals(200, all.status(), all.body());
        assertTrue(all.json().get("deliveries").isArray());
        assertEquals(
                200,
                server.operator()
                        .get("/admin/federation/deliveries?state=dead&limit=10")
                        .status());
        BadInputTest.assertSpecError(
                server.operator().get("/admin/federation/deliveries?state=lost"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(server.operator().get("/admin/federation/deliveries?limit=0"), 400, "BAD_REQUEST");
        BadInputTest.assertSpecError(
                server.operator().post("/admin/federation/deliveries/dlv_nothing/retry", Map.of()), 404, "NOT_FOUND");
        int user = server.newUser().http().get("/admin/federation/deliveries").status();
        assertTrue(user == 401 || user == 403 || user == 404, "a user read the delivery queue: " + user);
        assertEquals(401, server.anonymous().get("/admin/federation/deliveries").status());
    }
}
