package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.osgi.framework.ServiceRegistration;

/**
 * The file handlers' registration point, as an app (a later capability) uses it: any OSGi service carrying
 * {@code atrium.storage.file.handler} is listed while it is registered, after the built-in viewers.
 */
@ResourceLock(InFrameworkRuntime.LOCK)
class StorageFileHandlersTest {

    @Test
    void aServiceCarryingTheHandlerPropertiesIsListedWhileItIsRegistered(@TempDir Path tmp) throws Exception {
        try (InFrameworkRuntime runtime = InFrameworkRuntime.start(tmp.resolve("runtime"))) {
            runtime.assertHealthy(60_000);
            Http operator = new Http(
                    runtime.base(),
                    Files.readString(runtime.data.resolve("operator.token")).trim());
            assertEquals(
                    201,
                    operator.post("/admin/users", Map.of("username", "handlers-check"))
                            .status());
            Http user = operator.as(operator.post("/admin/users/handlers-check/tokens", Map.of())
                    .get("token")
                    .asText());
            String route = "/api/spaces/handlers-check/storage/file-handlers";

            Hashtable<String, Object> properties = new Hashtable<>();
            properties.put("atrium.storage.file.handler", "drawio");
            properties.put("atrium.storage.file.handler.name", "Diagrams");
            properties.put("atrium.storage.file.handler.app", "app_diagrams");
            properties.put("atrium.storage.file.handler.mime.types", new String[] {"application/vnd.jgraph.mxfile"});
            properties.put("atrium.storage.file.handler.extensions", new String[] {"drawio"});
            ServiceRegistration<?> app = runtime.framework
                    .getBundleContext()
                    .registerService(Object.class.getName(), new Object(), properties);
            try {
                JsonNode handlers = user.get(route).get("handlers");
                List<String> ids = new ArrayList<>();
                handlers.forEach(h -> ids.add(h.path("id").asText()));
                assertEquals(List.of("text", "markdown", "image", "pdf", "drawio"), ids);
                JsonNode drawio = handlers.get(4);
                assertEquals("Diagrams", drawio.path("name").asText());
                assertEquals("app", drawio.path("kind").asText());
                assertEquals("app_diagrams", drawio.path("app_id").asText());
                assertEquals(
                        "[\"application/vnd.jgraph.mxfile\"]",
                        drawio.path("mime_types").toString());
                assertEquals("[\"drawio\"]", drawio.path("extensions").toString());
            } finally {
                app.unregister();
            }
            assertFalse(user.get(route).body().contains("drawio"), "gone with its service");
            assertTrue(user.get(route).body().contains("\"markdown\""));
        }
    }
}
