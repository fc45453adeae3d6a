package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An r2 resource bound to a service is {@code env.BUCKET} in its worker, served by workerd's own {@code R2Bucket}
 * binding through the internal binding endpoint: what the worker writes is the resource's object (read back through the
 * resources API), and what the API writes the worker reads.
 */
@SharedServer
class R2BindingsWorkerdTest {

    static final String WORKER = """
            export default {
              async fetch(request, env) {
                const url = new URL(request.url);
                const q = url.searchParams;
                const k = q.get("k");
                if (url.pathname === "/put") {
                  const o = await env.BUCKET.put(k, await request.text(), { httpMetadata: { contentType: "text/plain" } });
                  return Response.json({ key: o.key, size: o.size, etag: o.etag });
                }
                if (url.pathname === "/get") { const o = await env.BUCKET.get(k); return new Response(o === null ? "null" : await o.text()); }
                if (url.pathname === "/range") {
                  const o = await env.BUCKET.get(k, { range: { offset: Number(q.get("o")), length: Number(q.get("l")) } });
                  return new Response(await o.text());
                }
                if (url.pathname === "/suffix") { const o = await env.BUCKET.get(k, { range: { suffix: 5 } }); return new Response(await o.text()); }
                if (url.pathname === "/head") {
                  const o = await env.BUCKET.head(k);
                  return Response.json(o === null ? null : { key: o.key, size: o.size, etag: o.etag, type: o.httpMetadata.contentType ?? null,
                    uploaded: o.uploaded.getTime() > 0 });
                }
                if (url.pathname === "/list") {
                  const l = await env.BUCKET.list({ prefix: q.get("p") ?? "", limit: Number(q.get("limit") ?? "1000") });
                  return Response.json({ keys: l.objects.map(o => o.key), truncated: l.truncated, cursor: l.truncated ? l.cursor : null });
                }
                if (url.pathname === "/list-after") {
                  const l = await env.BUCKET.list({ prefix: q.get("p") ?? "", cursor: q.get("c") });
                  return Response.json({ keys: l.objects.map(o => o.key), truncated: l.truncated });
                }
                if (url.pathname === "/delete") { await env.BUCKET.delete(k); return new Response("ok"); }
                if (url.pathname === "/conditional") {
                  try { await env.BUCKET.get(k, { onlyIf: { etagMatches: "nope" } }); return new Response("no error"); }
                  catch (e) { return new Response("error " + e.message); }
                }
                return new Response("?", { status: 404 });
              }
            };
            """;

    private AtriumServer server;

    @BeforeEach
    void needsWorkerd(AtriumServer server) throws Exception {
        this.server = server;
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
    }

    private String call(String host, String path, String body) throws Exception {
        RawHttp.Response r = body == null
                ? HostHttp.get(server.port, host, path)
                : HostHttp.send(
                        server.port,
                        host,
                        "POST",
                        path,
                        Map.of("Content-Type", "text/plain"),
                        body.getBytes(StandardCharsets.UTF_8));
        assertEquals(200, r.status(), path + " -> " + HostHttp.text(r));
        return HostHttp.text(r);
    }

    @Test
    void aWorkerPutsGetsListsAndDeletesTheObjectsOfItsBoundR2Resource() throws Exception {
        User u = server.newUser();
        Http http = u.http();
        String serviceId = ServicesTest.createService(u, ServicesTest.unique("r2-worker"));
        String slug = http.get("/api/services/" + serviceId)
                .get("service")
                .get("slug")
                .asText();
        String host = slug + ".apps.localhost";
        String r2 = ResourcesTest.create(u, ServicesTest.unique("bucket"), "r2");
        assertEquals(
                200,
                http.patch(
                                "/api/services/" + serviceId + "/bindings",
                                Map.of("bindings", List.of(Map.of("name", "BUCKET", "resource_id", r2))))
                        .status());
        Http.Reply deployed = http.post(
                "/api/services/" + serviceId + "/deployments",
                Map.of("bundle", Base64.getEncoder().encodeToString(WORKER.getBytes(StandardCharsets.UTF_8))));
        assertEquals(201, deployed.status(), deployed.body());

        // put: the object's metadata comes back; the resources API serves the same bytes
        JsonNode put = Http.JSON.readTree(call(host, "/put?k=docs/a.txt", "hello world"));
        assertEquals("docs/a.txt", put.get("key").asText());
        assertEquals(11, put.get("size").asInt());
        String objects = "/api/resources/" + r2 + "/objects";
        assertEquals("hello world", http.get(objects + "/docs/a.txt").body());

        // get, ranges, head
        assertEquals("hello world", call(host, "/get?k=docs/a.txt", null));
        assertEquals("llo w", call(host, "/range?k=docs/a.txt&o=2&l=5", null));
        assertEquals("world", call(host, "/suffix?k=docs/a.txt", null));
        JsonNode head = Http.JSON.readTree(call(host, "/head?k=docs/a.txt", null));
        assertEquals(11, head.get("size").asInt());
        assertEquals("text/plain", head.get("type").asText());
        assertEquals(put.get("etag").asText(), head.get("etag").asText());
        assertTrue(head.get("uploaded").asBoolean(), head.toString());
        assertEquals("null", call(host, "/get?k=docs/missing.txt", null));
        assertEquals("null", call(host, "/head?k=docs/missing.txt", null));

        // what the API writes, the worker reads; list by prefix, in pages
        assertEquals(
                200,
                http.send("PUT", objects + "/docs/b.txt", "from the api".getBytes(StandardCharsets.UTF_8), "text/plain")
                        .status());
        assertEquals(
                200,
                http.send("PUT", objects + "/other/c.txt", "elsewhere".getBytes(StandardCharsets.UTF_8), "text/plain")
                        .status());
        assertEquals("from the api", call(host, "/get?k=docs/b.txt", null));
        JsonNode all = Http.JSON.readTree(call(host, "/list?p=docs/", null));
        assertEquals(List.of("docs/a.txt", "docs/b.txt"), toList(all.get("keys")));
        assertEquals(false, all.get("truncated").asBoolean());
        JsonNode first = Http.JSON.readTree(call(host, "/list?p=docs/&limit=1", null));
        assertEquals(List.of("docs/a.txt"), toList(first.get("keys")));
        assertTrue(first.get("truncated").asBoolean(), first.toString());
        JsonNode rest = Http.JSON.readTree(call(
                host,
                "/list-after?p=docs/&c="
                        + java.net.URLEncoder.encode(first.get("cursor").asText(), StandardCharsets.UTF_8),
                null));
        assertEquals(List.of("docs/b.txt"), toList(rest.get("keys")));

        // what is not kept here is refused with a message, not ignored
        String conditional = call(host, "/conditional?k=docs/a.txt", null);
        assertTrue(conditional.startsWith("error ") && conditional.contains("onlyIf"), conditional);

        // delete: gone for the worker and for the API
        assertEquals("ok", call(host, "/delete?k=docs/a.txt", null));
        assertEquals("null", call(host, "/get?k=docs/a.txt", null));
        assertEquals(404, http.get(objects + "/docs/a.txt").status());
    }

    private static List<String> toList(JsonNode array) {
        List<String> out = new java.util.ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
