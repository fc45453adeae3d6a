package dev.atrium.services.domains.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.DnsLookup;
import dev.atrium.kernel.api.EgressGuard;
import dev.atrium.services.api.ServiceDomains.Domain;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Proves that whoever added a custom domain controls it, in one of two ways:
 * <ul>
 * <li>{@code http}: {@code GET http://<domain>/.well-known/atrium-challenge/<token>} answers 200 with the token. The
 * domain's addresses come from the configured DNS server when there is one (else the system's), every one is approved
 * by the kernel's {@link EgressGuard} and only an approved address is connected to (no redirects followed);</li>
 * <li>{@code dns}: a TXT record {@code _atrium-challenge.<domain>} holds {@code atrium-verification=<token>}, asked
 * of the configured DNS server ({@code dnsResolver}).</li>
 * </ul>
 */
@Component(service = DomainVerifier.class, configurationPid = DomainsConfig.PID)
public class DomainVerifier {

    static final String CHALLENGE_PATH = "/.well-known/atrium-challenge/";
    static final String TXT_LABEL = "_atrium-challenge";
    static final String TXT_PREFIX = "atrium-verification=";
    private static final int MAX_BODY = 4096;

    record Result(boolean verified, String method, String detail) {}

    private final EgressGuard guard;
    private final DomainsConfig config;
    private final DnsLookup dns;

    @Activate
    public DomainVerifier(DomainsConfig config, @Reference EgressGuard guard, @Reference DnsLookup dns) {
        this.guard = guard;
        this.config = config;
        this.dns = dns;
    }

    Result verify(Domain d, String method) {
        List<String> failures = new ArrayList<>();
        if (method == null || method.equals("dns")) {
            String why = dns(d);
            if (why == null) {
                return new Result(true, "dns", "the TXT record " + TXT_LABEL + "." + d.domain() + " holds the token");
            }
            failures.add("dns: " + why);
        }
        if (method == null || method.equals("http")) {
            String why = http(d);
            if (why == null) {
                return new Result(true, "http", "http://" + d.domain() + CHALLENGE_PATH + "… answered the token");
            }
            failures.add("http: " + why);
        }
        return new Result(false, null, String.join("; ", failures));
    }

    private Duration dnsTimeout() {
        return Duration.ofSeconds(Math.max(1, config.verifyTimeoutSeconds()));
    }

    private String dns(Domain d) {
        try {
            List<String> records = dns.txt(config.dnsResolver(), TXT_LABEL + "." + d.domain(), dnsTimeout());
            if (records.contains(TXT_PREFIX + d.token())) {
                return null;
            }
            return records.isEmpty()
                    ? "no TXT record " + TXT_LABEL + "." + d.domain()
                    : "the TXT records do not hold the token";
        } catch (IOException | RuntimeException e) {
            return e.getMessage();
        }
    }

    private String http(Domain d) {
        DomainsConfig c = config;
        int port = c.challengeHttpPort();
        List<InetAddress> addresses;
        try {
            addresses = c.dnsResolver().isBlank()
                    ? List.of(InetAddress.getAllByName(d.domain()))
                    : dns.addresses(c.dnsResolver(), d.domain(), dnsTimeout());
        } catch (IOException | IllegalArgumentException e) {
            return "the domain does not resolve: " + e.getMessage();
        }
        if (addresses.isEmpty()) {
            return "the domain has no address";
        }
        String last = "no address answered";
        for (InetAddress a : addresses) {
            try {
                // the guard judges the address itself: a name the guard resolved again could answer differently
                guard.check(URI.create(
                        "http://" + (a.getAddress().length == 16 ? "[" + a.getHostAddress() + "]" : a.getHostAddress())
                                + ":" + port + "/"));
            } catch (ApiException e) {
                last = e.getMessage();
                continue;
            }
            try {
                String body = fetch(
                        new InetSocketAddress(a, port),
                        d.domain(),
                        CHALLENGE_PATH + d.token(),
                        Math.max(1, c.verifyTimeoutSeconds()) * 1000);
                if (body.trim().equals(d.token())) {
                    return null;
                }
                last = "the challenge URL did not answer the token";
            } catch (IOException e) {
                last = e.getMessage();
            }
        }
        return last;
    }

    /** A plain HTTP/1.1 GET to one approved address; the body when the status is 200. */
    static String fetch(InetSocketAddress address, String host, String path, int timeoutMillis) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(address, timeoutMillis);
            s.setSoTimeout(timeoutMillis);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: " + host
                            + (address.getPort() == 80 ? "" : ":" + address.getPort())
                            + "\r\nUser-Agent: Atrium domain check\r\nAccept: text/plain\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] all = in.readNBytes(MAX_BODY + 8192);
            String text = new String(all, StandardCharsets.ISO_8859_1);
            int headerEnd = text.indexOf("\r\n\r\n");
            if (!text.startsWith("HTTP/1.") || headerEnd < 0) {
                throw new IOException("the challenge URL did not answer HTTP");
            }
            String status = text.substring(0, text.indexOf("\r\n"));
            if (!status.matches("HTTP/1\\.[01] 200( .*)?")) {
                throw new IOException("the challenge URL answered " + status.replaceFirst("^HTTP/1\\.[01] ", ""));
            }
            String headers = text.substring(0, headerEnd).toLowerCase(java.util.Locale.ROOT);
            String body = text.substring(headerEnd + 4);
            if (headers.contains("transfer-encoding: chunked")) {
                body = dechunk(body);
            }
            return new String(body.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
        }
    }

    private static String dechunk(String body) {
        StringBuilder out = new StringBuilder();
        int i = 0;
        while (i < body.length()) {
            int eol = body.indexOf("\r\n", i);
            if (eol < 0) {
                break;
            }
            int size;
            try {
                size = Integer.parseInt(body.substring(i, eol).split(";")[0].trim(), 16);
            } catch (NumberFormatException e) {
                break;
            }
            if (size == 0) {
                break;
            }
            out.append(body, eol + 2, Math.min(body.length(), eol + 2 + size));
            i = eol + 2 + size + 2;
        }
        return out.toString();
    }
}
