package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.itests.AtriumServer.User;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A deployed worker's outbound network is the egress guard's policy (docs/security.md, "The worker sandbox"): with a
 * listener of the test on every interface, a real worker on workerd can reach it neither with {@code fetch()} nor with
 * {@code connect()} from {@code cloudflare:sockets}, not at the machine's own addresses, not at loopback written as
 * NAT64, IPv4-compatible, IPv4-translated or 6to4, not at TEST-NET or benchmarking addresses; the listener sees no
 * connection. A public address is still tried, and the worker's binding still reaches its resource through the internal
 * endpoint. The deny list workerd was given is read back from the generated configuration.
 */
@SharedServer
class WorkerSandboxWorkerdTest {

    static final String WORKER = """
            // MARKER
            import { connect } from "cloudflare:sockets";
            const within = (ms, p) => Promise.race([p, new Promise((_, no) => setTimeout(() => no(new Error("timed out")), ms))]);
            export default {
              async fetch(request, env) {
                const url = new URL(request.url);
                const t = url.searchParams.get("t");
                if (url.pathname === "/kv") {
                  await env.CACHE.put("k", "through the binding");
                  return new Response(await env.CACHE.get("k"));
                }
                const out = {};
                try {
                  const r = await fetch("http://" + t + "/", { signal: AbortSignal.timeout(3000) });
                  out.fetch = "status " + r.status + " " + (await r.text());
                } catch (e) { out.fetch = "error " + e.message; }
                try {
                  const s = connect(t);
                  await within(3000, s.opened);
                  const w = s.writable.getWriter();
                  await w.write(new TextEncoder().encode("GET / HTTP/1.0\\r\\n\\r\\n"));
                  out.connect = "opened";
                  await s.close();
                } catch (e) { out.connect = "error " + e.message; }
                return Response.json(out);
              }
            };
            """;

    /** workerd's message for a connection its network filter refused carries a reference id per error. */
    private static final Pattern REFERENCE = Pattern.compile("; reference = \\w+");

    private static final Pattern DENY = Pattern.compile(
            "name = \"atrium-egress\", network = \\(allow = \\[\"public\"\\], deny = \\[([^\\]]*)\\]\\)");

    private AtriumServer server;

    @BeforeEach
    void needsWorkerd(AtriumServer server) throws Exception {
        this.server = server;
        Assumptions.assumeTrue(
                ServicesWorkerdTest.workerdPresent(server), "the workerd deployment provider is not in the runtime");
    }

    /** A listener on every interface (0.0.0.0 and ::) that answers any connection with 200 and records who came. */
    private static final class Listener implements AutoCloseable {
        final ServerSocket socket;
        final ConcurrentLinkedQueue<String> connections = new ConcurrentLinkedQueue<>();

        Listener() throws IOException {
            socket = new ServerSocket();
            socket.bind(new InetSocketAddress(0));
            Thread t = new Thread(
                    () -> {
                        while (!socket.isClosed()) {
                            try (Socket c = socket.accept()) {
                                connections.add(String.valueOf(c.getRemoteSocketAddress()));
                                OutputStream out = c.getOutputStream();
                                out.write("HTTP/1.0 200 OK\r\nContent-Length: 8\r\n\r\nlistener"
                                        .getBytes(StandardCharsets.US_ASCII));
                            } catch (IOException e) {
                                // closed, or the peer went away
                            }
                        }
                    },
                    "sandbox-listener");
            t.setDaemon(true);
            t.start();
        }

        int port() {
            return socket.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** The machine's own addresses, neither loopback nor link-local (those need a scope and are refused as ranges). */
    static List<InetAddress> ownAddresses() throws IOException {
        List<InetAddress> own = new ArrayList<>();
        for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!i.isUp()) {
                continue;
            }
            for (InetAddress a : Collections.list(i.getInetAddresses())) {
                if (!a.isLoopbackAddress() && !a.isLinkLocalAddress() && !a.isAnyLocalAddress()) {
                    own.add(InetAddress.getByAddress(a.getAddress()));
                }
            }
        }
        return own;
    }

    @Test
    void aWorkerReachesNeitherTheMachinesOwnAddressesNorLoopbackInDisguiseButStillThePublicNetworkAndItsBindings()
            throws Exception {
        List<InetAddress> own = ownAddresses();
        Inet4Address ownV4 = (Inet4Address)
                own.stream().filter(a -> a instanceof Inet4Address).findFirst().orElse(null);
        Assumptions.assumeTrue(ownV4 != null, "the machine has no IPv4 address besides loopback: " + own);
        User u = server.newUser();
        String serviceId = ServicesTest.createService(u, ServicesTest.unique("sandbox"));
        String host = u.http()
                        .get("/api/services/" + serviceId)
                        .get("service")
                        .get("slug")
                        .asText() + ".apps.localhost";
        String kv = ResourcesTest.create(u, ServicesTest.unique("sandbox-kv"), "kv");
        assertEquals(
                200,
                u.http()
                        .patch(
                                "/api/services/" + serviceId + "/bindings",
                                Map.of("bindings", List.of(Map.of("name", "CACHE", "resource_id", kv))))
                        .status());
        String marker = ServicesTest.unique("sandbox-probe");
        Http.Reply deployed = u.http()
                .post(
                        "/api/services/" + serviceId + "/deployments",
                        Map.of(
                                "bundle",
                                Base64.getEncoder()
                                        .encodeToString(
                                                WORKER.replace("MARKER", marker).getBytes(StandardCharsets.UTF_8))));
        assertEquals(201, deployed.status(), deployed.body());

        try (Listener listener = new Listener()) {
            int port = listener.port();
            byte[] v4 = ownV4.getAddress();
            String hex = String.format(
                    "%x:%x", ((v4[0] & 0xff) << 8) | (v4[1] & 0xff), ((v4[2] & 0xff) << 8) | (v4[3] & 0xff));
            String dotted = ownV4.getHostAddress();
            Map<String, String> refused = new LinkedHashMap<>();
            refused.put("the machine's own address", dotted + ":" + port);
            refused.put("it IPv4-mapped", "[::ffff:" + dotted + "]:" + port);
            refused.put("it IPv4-compatible", "[::" + dotted + "]:" + port);
            refused.put("it through NAT64", "[64:ff9b::" + hex + "]:" + port);
            refused.put("it as 6to4", "[2002:" + hex + "::]:" + port);
            refused.put("loopback through NAT64", "[64:ff9b::7f00:1]:" + port);
            refused.put("loopback IPv4-compatible", "[::127.0.0.1]:" + port);
            refused.put("loopback IPv4-translated", "[::ffff:0:127.0.0.1]:" + port);
            refused.put("loopback as 6to4", "[2002:7f00:1::]:" + port);
            refused.put("TEST-NET-2", "198.51.100.7:" + port);
            refused.put("TEST-NET-3", "203.0.113.7:" + port);
            refused.put("benchmarking", "198.18.0.7:" + port);
            for (InetAddress a : own) {
                if (a instanceof Inet6Address) {
                    refused.put("the machine's own " + a.getHostAddress(), "[" + a.getHostAddress() + "]:" + port);
                }
            }

            // loopback itself: refused by workerd without a connection before this change too, the shape of a refusal
            JsonNode control = probe(host, "127.0.0.1:" + port);
            String refusal = REFERENCE.matcher(control.get("fetch").asText()).replaceAll("");
            assertTrue(refusal.startsWith("error "), control.toString());
            assertTrue(control.get("connect").asText().startsWith("error "), control.toString());

            for (Map.Entry<String, String> e : refused.entrySet()) {
                JsonNode r = probe(host, e.getValue());
                String what = e.getKey() + " (" + e.getValue() + "): " + r;
                System.out.println("sandbox: " + what);
                // the filter refused it, as it refuses loopback, rather than a connection being tried
                assertEquals(refusal, REFERENCE.matcher(r.get("fetch").asText()).replaceAll(""), what);
                assertTrue(r.get("connect").asText().startsWith("error "), what);
            }
            Thread.sleep(500);
            assertEquals(List.of(), List.copyOf(listener.connections), "the listener saw no connection");

            // a public address is still tried (answered, or failing in the network, or timing out where there is none)
            JsonNode pub = probe(host, "1.1.1.1:80");
            System.out.println("sandbox: a public address (1.1.1.1:80): " + pub);
            assertNotEquals(
                    refusal,
                    REFERENCE.matcher(pub.get("fetch").asText()).replaceAll(""),
                    "a public address is tried: " + pub);
            // and the binding reaches its resource through the internal endpoint on loopback, which the network refuses
            RawHttp.Response viaBinding = HostHttp.get(server.port, host, "/kv");
            assertEquals(200, viaBinding.status(), HostHttp.text(viaBinding));
            assertEquals("through the binding", HostHttp.text(viaBinding));

            // what workerd was given: every refused target above is in its deny list, the public address is not
            List<String> deny = denyList(marker);
            assertTrue(deny.containsAll(List.of("private", "local")), deny.toString());
            assertTrue(deny.contains(dotted + "/32"), "the machine's own address is listed: " + deny);
            for (Map.Entry<String, String> e : refused.entrySet()) {
                String t = e.getValue();
                String literal =
                        t.startsWith("[") ? t.substring(1, t.indexOf(']')) : t.substring(0, t.lastIndexOf(':'));
                assertTrue(
                        deny.stream().anyMatch(r -> matches(r, literal)),
                        e.getKey() + " " + literal + " is denied by " + deny);
            }
            assertFalse(deny.stream().anyMatch(r -> matches(r, "1.1.1.1")), deny.toString());
        }
    }

    private JsonNode probe(String host, String target) throws Exception {
        RawHttp.Response r =
                HostHttp.get(server.port, host, "/probe?t=" + URLEncoder.encode(target, StandardCharsets.UTF_8));
        assertEquals(200, r.status(), target + " -> " + HostHttp.text(r));
        return Http.JSON.readTree(HostHttp.text(r));
    }

    /** The deny list of the global outbound in the configuration generated for the worker whose code holds {@code marker}. */
    private List<String> denyList(String marker) throws IOException {
        Path root = server.data.resolve("deploy-workerd");
        Path config;
        try (Stream<Path> files = Files.walk(root)) {
            config = files.filter(Files::isRegularFile)
                    .filter(p -> p.getParent().getFileName().toString().equals("m"))
                    .filter(p -> {
                        try {
                            return Files.readString(p, StandardCharsets.ISO_8859_1)
                                    .contains(marker);
                        } catch (IOException e) {
                            return false;
                        }
                    })
                    .map(p -> p.getParent().getParent().resolve("config.capnp"))
                    .filter(Files::exists)
                    .findFirst()
                    .orElseThrow();
        }
        Matcher m = DENY.matcher(Files.readString(config));
        assertTrue(m.find(), "no atrium-egress network in " + config);
        List<String> out = new ArrayList<>();
        Matcher item = Pattern.compile("\"([^\"]*)\"").matcher(m.group(1));
        while (item.find()) {
            out.add(item.group(1));
        }
        return out;
    }

    /** Whether a CIDR contains the address as workerd's filter (kj's CidrRange) matches: an IPv4 range also matches the IPv4-mapped form. */
    static boolean matches(String cidr, String literal) {
        int slash = cidr.indexOf('/');
        if (slash < 0) {
            return false; // "private", "local": workerd's own categories
        }
        byte[] range = sixteen(cidr.substring(0, slash));
        byte[] address = sixteen(literal);
        int bits = Integer.parseInt(cidr.substring(slash + 1)) + (cidr.indexOf(':') < 0 ? 96 : 0);
        for (int bit = 0; bit < bits; bit++) {
            int mask = 0x80 >>> (bit % 8);
            if ((range[bit / 8] & mask) != (address[bit / 8] & mask)) {
                return false;
            }
        }
        return true;
    }

    /** An address as 16 bytes, IPv4 as IPv4-mapped (Java reads ::ffff:a.b.c.d as IPv4 itself). */
    private static byte[] sixteen(String literal) {
        try {
            byte[] a = InetAddress.getByName(literal).getAddress();
            if (a.length == 16) {
                return a;
            }
            byte[] mapped = new byte[16];
            mapped[10] = (byte) 0xff;
            mapped[11] = (byte) 0xff;
            System.arraycopy(a, 0, mapped, 12, 4);
            return mapped;
        } catch (IOException e) {
            throw new AssertionError(literal, e);
        }
    }
}
