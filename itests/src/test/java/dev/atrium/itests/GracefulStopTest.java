package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A request in flight when the server is told to stop (SIGTERM) is answered in full before the server goes (issue 32,
 * finding 14). Before, an upload that finished during the stop was stored but answered 200 with an empty body: the
 * first bundle to stop is Aries' whiteboard, and with it went what writes the answer.
 */
class GracefulStopTest {

    @TempDir
    Path tmp;

    @Test
    void anUploadThatFinishesWhileTheServerStopsIsAnsweredWithItsRecord() throws Throwable {
        TestDatabase db = TestDatabase.create();
        AtriumServer server = AtriumServer.launch(tmp.resolve("data"), db);
        try {
            User u = server.newUser();
            String space = "/api/spaces/" + u.defaultSpaceId();
            Http.Reply created =
                    u.http().post(space + "/storage/files", Map.of("path", "slow.bin", "content", "first"));
            assertEquals(201, created.status(), created.body());
            String fileId = created.json().path("file").path("id").asText();

            byte[] content = new byte[2 << 20];
            Arrays.fill(content, (byte) 'x');
            try (Socket s = new Socket("127.0.0.1", server.port)) {
                s.setSoTimeout(60_000);
                OutputStream out = s.getOutputStream();
                out.write(("PUT " + space + "/storage/" + fileId + "/content HTTP/1.1\r\nHost: 127.0.0.1:" + server.port
                                + "\r\nAuthorization: Bearer " + u.http().token()
                                + "\r\nContent-Type: application/octet-stream\r\nContent-Length: "
                                + content.length + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                int sent = 64 << 10;
                out.write(content, 0, sent);
                out.flush();
                Thread.sleep(500);
                server.process.destroy(); // SIGTERM, as a service manager sends it
                // the rest of the body, over about two seconds, while the server stops
                for (int chunk = 128 << 10; sent < content.length; sent += chunk) {
                    out.write(content, sent, Math.min(chunk, content.length - sent));
                    out.flush();
                    Thread.sleep(120);
                }
                InputStream in = s.getInputStream();
                RawHttp.Response r = RawHttp.read(in);
                String body = new String(r.body(), StandardCharsets.UTF_8);
                assertEquals(200, r.status(), body);
                JsonNode file = Http.JSON.readTree(body).path("file");
                assertEquals(fileId, file.path("id").asText(), "the answer is the file's record: " + body);
                assertEquals(content.length, file.path("size").asLong(), body);
            }
            assertTrue(server.process.waitFor(30, TimeUnit.SECONDS), "the server stopped");
        } finally {
            server.close();
        }
    }
}
