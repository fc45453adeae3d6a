package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.atrium.itests.AtriumServer.User;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Two instances on one PostgreSQL and one blob store: a deployment made through one is served by the other (each runs every deployment on
 * its own provider and routes from the same rows; a NOTIFY tells the other to apply the new state). Needs the workerd
 * provider, like {@link ServicesWorkerdTest}.
 */
class ServicesInstancesTest {

    @Test
    void aChangeMadeThroughOneInstanceIsServedByTheOther() throws Throwable {
        TestDatabase db = TestDatabase.create();
        AtriumServer a = AtriumServer.launch(Files.createTempDirectory("atrium-svc-a-"), db);
        Path dataB = Files.createTempDirectory("atrium-svc-b-");
        AtriumServer b = null;
        try {
            Assumptions.assumeTrue(
                    ServicesWorkerdTest.workerdPresent(a), "the workerd deployment provider is not in the runtime");
            // instances share their blobs (a shared file system here; an S3-compatible bucket in production)
            Files.createSymbolicLink(dataB.resolve("blobs"), a.data.resolve("blobs"));
            b = AtriumServer.launch(dataB, null, Map.of("ATRIUM_DB_URL", db.url()));
            User u = a.newUser();
            String id = ServicesTest.createService(u, ServicesTest.unique("instances"));
            String host = u.http()
                    .get("/api/services/" + id)
                    .get("service")
                    .get("hostname")
                    .asText();
            assertEquals(
                    201,
                    u.http()
                            .post(
                                    "/api/services/" + id + "/deployments",
                                    Map.of("bundle", ServicesWorkerdTest.code("one")))
                            .status());
            assertEquals("version one", HostHttp.text(HostHttp.get(a.port, host, "/")));
            assertEquals("version one", eventually(b, host, "version one"));
            // and the other way round
            Http viaB = new Http(b.base(), u.http().token());
            assertEquals(
                    201,
                    viaB.post("/api/services/" + id + "/deployments", Map.of("bundle", ServicesWorkerdTest.code("two")))
                            .status());
            assertEquals("version two", HostHttp.text(HostHttp.get(b.port, host, "/")));
            assertEquals("version two", eventually(a, host, "version two"));
        } finally {
            if (b != null) {
                b.stop();
            }
            AtriumServer.deleteTree(dataB.toFile());
            a.close();
        }
    }

    private static String eventually(AtriumServer server, String host, String expected) throws Exception {
        String last = null;
        for (int i = 0; i < 100; i++) {
            RawHttp.Response r = HostHttp.get(server.port, host, "/");
            last = r.status() + " " + HostHttp.text(r);
            if (r.status() == 200 && HostHttp.text(r).equals(expected)) {
                return expected;
            }
            Thread.sleep(100);
        }
        return last;
    }
}
