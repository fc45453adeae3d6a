package dev.atrium.kernel.internal.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RelayHeadsTest {

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static RelayHeads.Request request(String head) {
        byte[] a = bytes(head);
        int end = RelayHeads.headEnd(a, 0, a.length);
        assertEquals(a.length, end, "the test's head ends where its text does");
        return RelayHeads.request(a, 0, end);
    }

    private static String upstream(String head, Set<String> dropped) {
        byte[] a = bytes(head);
        RelayHeads.Request r = RelayHeads.request(a, 0, RelayHeads.headEnd(a, 0, a.length));
        assertNotNull(r, head);
        return new String(r.forUpstream(a, "/base", dropped, "10.0.0.7"), StandardCharsets.ISO_8859_1);
    }

    @Test
    void aHeadIsCompleteOnlyAtItsBlankLine() {
        byte[] a = bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /next");
        assertEquals(27, RelayHeads.headEnd(a, 0, a.length));
        assertEquals(-1, RelayHeads.headEnd(a, 0, 20));
        assertEquals(-1, RelayHeads.headEnd(a, 27, a.length));
    }

    @Test
    void theUpstreamGetsTheClientsHeadersLessForwardedAndDroppedOnesThenOurs() {
        String out = upstream(
                "POST /a?b=%C3%A9 HTTP/1.1\r\nHost: Svc.Apps.Localhost:8080\r\nX-Forwarded-For: 1.2.3.4\r\n"
                        + "x-forwarded-host: evil\r\nX-Secret: s\r\nContent-Length: 3\r\nAccept: */*\r\n\r\n",
                Set.of("x-secret"));
        assertEquals(
                "POST /base/a?b=%C3%A9 HTTP/1.1\r\nHost: Svc.Apps.Localhost:8080\r\nContent-Length: 3\r\nAccept: */*\r\n"
                        + "x-forwarded-for: 1.2.3.4, 10.0.0.7\r\nx-forwarded-proto: http\r\n"
                        + "x-forwarded-host: Svc.Apps.Localhost:8080\r\n\r\n",
                out);
        RelayHeads.Request r = request("GET / HTTP/1.1\r\nHost: Svc.Apps.Localhost:8080\r\n\r\n");
        assertEquals("svc.apps.localhost", r.host, "lower case, no port: as the routers' claims are");
    }

    @Test
    void framingAndCloseAreRead() {
        RelayHeads.Request chunked = request("PUT /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n");
        assertTrue(chunked.chunked);
        assertEquals(-1, chunked.contentLength);
        RelayHeads.Request length =
                request("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\nConnection: close\r\n\r\n");
        assertEquals(12, length.contentLength);
        assertTrue(length.close);
        assertTrue(request("HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n").head);
    }

    @Test
    void anH2cUpgradeIsDeclinedByLeavingItOut() {
        String out = upstream(
                "GET / HTTP/1.1\r\nConnection: Upgrade, HTTP2-Settings\r\nHost: h\r\nHTTP2-Settings: AAEA\r\n"
                        + "Upgrade: h2c\r\nUser-Agent: Java-http-client/17\r\n\r\n",
                Set.of());
        assertFalse(out.toLowerCase().contains("upgrade"), out);
        assertFalse(out.toLowerCase().contains("http2-settings"), out);
        assertTrue(out.contains("User-Agent: Java-http-client/17\r\n"), out);
    }

    @Test
    void whatIsNotPlainHttp11IsLeftToJetty() {
        String[] heads = {
            "GET / HTTP/1.0\r\nHost: h\r\n\r\n",
            "GET / HTTP/2.0\r\nHost: h\r\n\r\n",
            "GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n",
            "GET / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n",
            "GET / HTTP/1.1\r\nHost:\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nTE: trailers\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nX-Folded: a\r\n b\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nBad Name: a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\nX: a\u0000b\r\n\r\n",
            "G@T / HTTP/1.1\r\nHost: h\r\n\r\n",
        };
        for (String head : heads) {
            assertNull(request(head), head);
        }
        byte[] bareLf = bytes("GET / HTTP/1.1\nHost: h\r\n\r\n");
        assertNull(RelayHeads.request(bareLf, 0, bareLf.length), "a bare LF");
    }

    @Test
    void targetsTheServletStackWouldNormaliseOrRefuseAreNotRelayed() {
        String[] odd = {
            "/a/../b",
            "/a/./b",
            "/a/..",
            "/..",
            "/a//b",
            "/a;jsessionid=1",
            "/a/%2e%2E/b",
            "/a%2fb",
            "/a%5Cb",
            "/a%00",
            "/a%0a",
            "/a%7f",
            "/a%zz",
            "/a%4",
            "/a\\b",
            "/a#frag",
            "/a|b",
            "/a\"b",
            "/a{b}",
            "*",
            ""
        };
        for (String target : odd) {
            byte[] a = bytes(target);
            assertFalse(RelayHeads.plainTarget(a, 0, a.length), target);
        }
        String[] plain = {"/", "/a/b.c/d..e", "/a?x=/../y;z", "/%C3%A9t%C3%A9?q=%20", "/a/.well-known/x", "/~user/a-b_c"
        };
        for (String target : plain) {
            byte[] a = bytes(target);
            assertTrue(RelayHeads.plainTarget(a, 0, a.length), target);
        }
    }

    private static RelayHeads.Response response(String head, boolean requestWasHead) {
        byte[] a = bytes(head);
        return RelayHeads.response(a, 0, RelayHeads.headEnd(a, 0, a.length), requestWasHead);
    }

    @Test
    void aResponsesBodyEndsByItsLengthItsChunksOrTheConnectionsEnd() {
        RelayHeads.Response length = response("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", false);
        assertEquals(200, length.status);
        assertEquals(5, length.contentLength);
        assertFalse(length.close);
        RelayHeads.Response chunked =
                response("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", false);
        assertTrue(chunked.chunked, "chunked wins over a length (RFC 9112 6.3)");
        RelayHeads.Response open = response("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", false);
        assertTrue(open.untilClose);
        assertTrue(open.close);
        assertTrue(open.stream);
        assertEquals(0, response("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true).contentLength, "HEAD");
        assertEquals(0, response("HTTP/1.1 204 No Content\r\n\r\n", false).contentLength);
        assertEquals(
                0, response("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", false).contentLength);
        assertTrue(response("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\n", false).close);
        assertFalse(response("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n", false).close);
        assertTrue(response("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n", false).close);
        assertEquals(100, response("HTTP/1.1 100 Continue\r\n\r\n", false).status);
        assertNull(response("SSH-2.0-x\r\n\r\n", false));
    }

    @Test
    void aResponseHeadWithBareLfLinesOrOfHttp10IsRewrittenToHttp11WithCrlf() {
        // busybox's httpd: its own status line, then a CGI script's LF lines
        byte[] cgi = bytes("HTTP/1.0 200 OK\r\nContent-Type: text/plain\nX-A: 1\n\nhello");
        int end = RelayHeads.responseHeadEnd(cgi, 0, cgi.length);
        assertEquals(cgi.length - 5, end);
        RelayHeads.Response r = RelayHeads.response(cgi, 0, end, false);
        assertNotNull(r);
        assertEquals(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-A: 1\r\n\r\n",
                new String(r.rewritten, StandardCharsets.ISO_8859_1));
        assertTrue(r.untilClose, "no length: the body ends with the connection");
        byte[] plain = bytes("HTTP/1.1 204 No Content\r\nX: y\r\n\r\n");
        assertEquals(plain.length, RelayHeads.responseHeadEnd(plain, 0, plain.length));
        assertNull(
                RelayHeads.response(plain, 0, plain.length, false).rewritten,
                "a plain HTTP/1.1 head passes as it came");
        byte[] partial = bytes("HTTP/1.1 200 OK\r\nX: y\r\n");
        assertEquals(-1, RelayHeads.responseHeadEnd(partial, 0, partial.length));
    }

    @Test
    void aChunkedBodyEndsAfterItsLastChunkAndTrailersWhereverTheBytesAreSplit() {
        String body = "5;ext=a\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: 1\r\n\r\n";
        byte[] a = bytes(body + "NEXT");
        for (int split = 0; split <= body.length(); split++) {
            RelayHeads.Chunks c = new RelayHeads.Chunks();
            int first = c.feed(a, 0, split);
            int end = first >= 0 ? first : c.feed(a, split, a.length);
            assertEquals(body.length(), end, "split at " + split);
        }
        RelayHeads.Chunks plain = new RelayHeads.Chunks();
        byte[] b = bytes("0\r\n\r\n");
        assertEquals(5, plain.feed(b, 0, b.length));
        for (String broken : new String[] {"x\r\n", "5\r\nhelloXX", "5\nhello", "1234567890123456\r\n"}) {
            byte[] x = bytes(broken);
            assertEquals(-2, new RelayHeads.Chunks().feed(x, 0, x.length), broken);
        }
    }
}
