package dev.atrium.kernel.api;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Questions to one named DNS server, for a capability that must not take the system resolver's word: a custom
 * domain's TXT challenge, the addresses of a host a check connects to. The kernel's egress guard asks the same way
 * when an operator names the resolver outbound fetches use. Every answer is read once and not cached.
 */
@ProviderType
public interface DnsLookup {

    /**
     * The TXT records of {@code name}, each record's strings joined; empty when the name or the records do not exist.
     *
     * @param server {@code host}, {@code host:port} or {@code [v6]:port}; blank: the system's first nameserver
     * @throws IOException when the server does not answer in {@code timeout}, or answers with an error
     * @throws IllegalArgumentException when {@code server} or {@code name} is not of that form
     */
    List<String> txt(String server, String name, Duration timeout) throws IOException;

    /**
     * The A and AAAA records of {@code name}; empty when it has none.
     *
     * @see #txt
     */
    List<InetAddress> addresses(String server, String name, Duration timeout) throws IOException;
}
