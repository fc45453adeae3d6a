package dev.atrium.browser.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.EgressGuard;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RequestPolicyTest {

    /** A guard with the test switch on: loopback passes it, link-local does not; it records what it was asked. */
    private final List<URI> asked = new ArrayList<>();

    private final EgressGuard loopbackAllowed = url -> {
        asked.add(url);
        try {
            InetAddress a = InetAddress.getByName(url.getHost());
            if (a.isLinkLocalAddress()) {
                throw ApiException.badRequest("link-local addresses are not allowed");
            }
            return List.of(a);
        } catch (UnknownHostException e) {
            throw ApiException.badRequest("the host does not resolve");
        }
    };

    @Test
    void loopbackIsAllowedOnlyOnTheListedPorts() {
        RequestPolicy policy = new RequestPolicy(loopbackAllowed, Set.of(8123));
        assertNull(policy.refusal("http://127.0.0.1:8123/form?x=1"));
        assertEquals("loopback addresses are not allowed (port 5432)", policy.refusal("http://127.0.0.1:5432/"));
        assertNotNull(policy.refusal("http://127.0.0.1/"), "port 80 is not listed");
        assertNotNull(policy.refusal("http://[::1]:5432/"));
        assertNotNull(policy.refusal("http://[::ffff:127.0.0.1]:5432/"));
        assertNull(policy.refusal("http://[::1]:8123/"));
    }

    @Test
    void withNoPortListedNoLoopbackAtAll() {
        RequestPolicy policy = new RequestPolicy(loopbackAllowed, Set.of());
        assertNotNull(policy.refusal("http://127.0.0.1:8123/"));
        assertNotNull(policy.refusal("https://127.0.0.2/"));
    }

    @Test
    void theGuardsRefusalIsTheReason() {
        RequestPolicy policy = new RequestPolicy(loopbackAllowed, Set.of());
        assertEquals("link-local addresses are not allowed", policy.refusal("http://169.254.169.254/x.png"));
    }

    @Test
    void onlyTheOriginIsJudgedSoOddPathsStillAreChecked() {
        RequestPolicy policy = new RequestPolicy(loopbackAllowed, Set.of());
        asked.clear();
        assertNotNull(policy.refusal("http://169.254.169.254/a%zz|b?c=<d>#e"));
        assertEquals(List.of(URI.create("http://169.254.169.254:80/")), asked);
    }

    @Test
    void schemesWithoutNetworkPassOthersAreRefused() {
        RequestPolicy policy = new RequestPolicy(loopbackAllowed, Set.of());
        assertNull(policy.refusal("data:text/plain,hi"));
        assertNull(policy.refusal("about:blank"));
        assertNull(policy.refusal("blob:http://example.test/uuid"));
        assertTrue(policy.refusal("file:///etc/passwd").contains("not file"));
        assertTrue(policy.refusal("ftp://example.test/").contains("not ftp"));
        assertNotNull(policy.refusal("chrome://settings"));
        assertNotNull(policy.refusal(""));
        assertNotNull(policy.refusal("http://user:pw@example.test/"));
    }

    @Test
    void portsAreReadFromACommaSeparatedList() {
        assertEquals(Set.of(80, 8123), RequestPolicy.ports(" 8123, 80 ,x, 70000,"));
        assertEquals(Set.of(), RequestPolicy.ports(""));
        assertEquals(Set.of(), RequestPolicy.ports(null));
    }
}
