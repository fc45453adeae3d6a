package dev.atrium.kernel.internal.egress;

import dev.atrium.kernel.api.DnsLookup;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.osgi.service.component.annotations.Component;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.ResolverConfig;
import org.xbill.DNS.Section;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.TXTRecord;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * The one DNS client, on dnsjava: a query goes to the named server over UDP (TCP when the answer is truncated), its
 * answer is taken only from that server with the query's id and question (dnsjava checks both), and read once.
 */
@Component(service = DnsLookup.class)
public class DnsQueries implements DnsLookup {

    @Override
    public List<String> txt(String server, String name, Duration timeout) throws IOException {
        List<String> out = new ArrayList<>();
        for (Record r : query(server(server), name, Type.TXT, timeout)) {
            if (r instanceof TXTRecord t) {
                out.add(String.join("", t.getStrings()));
            }
        }
        return out;
    }

    @Override
    public List<InetAddress> addresses(String server, String name, Duration timeout) throws IOException {
        return addresses(server(server), name, timeout);
    }

    List<InetAddress> addresses(InetSocketAddress server, String name, Duration timeout) throws IOException {
        List<InetAddress> out = new ArrayList<>();
        for (int type : new int[] {Type.A, Type.AAAA}) {
            for (Record r : query(server, name, type, timeout)) {
                if (r instanceof ARecord a) {
                    out.add(InetAddress.getByAddress(name, a.getAddress().getAddress()));
                } else if (r instanceof AAAARecord a) {
                    out.add(InetAddress.getByAddress(name, a.getAddress().getAddress()));
                }
            }
        }
        return out;
    }

    /** The answer section's records of {@code type}; none for a name that does not exist. */
    private static List<Record> query(InetSocketAddress server, String name, int type, Duration timeout)
            throws IOException {
        Name n;
        try {
            n = Name.fromString(name, Name.root);
        } catch (TextParseException e) {
            throw new IllegalArgumentException(name + " is not a valid host name: " + e.getMessage());
        }
        SimpleResolver resolver = new SimpleResolver(server);
        resolver.setTimeout(timeout);
        Message answer;
        Thread thread = Thread.currentThread();
        ClassLoader context = thread.getContextClassLoader();
        // dnsjava starts its selector thread and shutdown hook on first use: they must not hold the caller's class
        // loader
        thread.setContextClassLoader(null);
        try {
            answer = resolver.send(Message.newQuery(Record.newRecord(n, type, DClass.IN)));
        } catch (IOException e) {
            throw new IOException("the DNS server " + server + " did not answer: " + e.getMessage(), e);
        } finally {
            thread.setContextClassLoader(context);
        }
        int rcode = answer.getRcode();
        if (rcode == Rcode.NXDOMAIN) {
            return List.of();
        }
        if (rcode != Rcode.NOERROR) {
            throw new IOException("the DNS server " + server + " answered " + Rcode.string(rcode) + " for " + name);
        }
        List<Record> out = new ArrayList<>();
        for (Record r : answer.getSection(Section.ANSWER)) {
            if (r.getType() == type) {
                out.add(r);
            }
        }
        return out;
    }

    /**
     * {@code host}, {@code host:port}, {@code v6}, {@code [v6]} or {@code [v6]:port} (port 53 unless given); blank: the
     * system's first nameserver ({@code /etc/resolv.conf}).
     *
     * @throws IllegalArgumentException when the setting is not of that form
     */
    static InetSocketAddress server(String setting) {
        String s = setting == null ? "" : setting.trim();
        if (s.isEmpty()) {
            List<InetSocketAddress> system = ResolverConfig.getCurrentConfig().servers();
            if (system.isEmpty()) {
                throw new IllegalArgumentException("the system names no DNS server (/etc/resolv.conf): name one");
            }
            return system.get(0);
        }
        String host = s;
        String port = null;
        if (s.startsWith("[")) {
            int close = s.indexOf(']');
            if (close < 0 || (close + 1 < s.length() && s.charAt(close + 1) != ':')) {
                throw new IllegalArgumentException("not host:port: " + setting);
            }
            host = s.substring(1, close);
            port = close + 1 < s.length() ? s.substring(close + 2) : null;
        } else if (s.indexOf(':') >= 0 && s.indexOf(':') == s.lastIndexOf(':')) {
            host = s.substring(0, s.indexOf(':'));
            port = s.substring(s.indexOf(':') + 1);
        }
        int p;
        try {
            p = port == null ? 53 : Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not host:port: " + setting);
        }
        if (p < 1 || p > 65535 || host.isEmpty()) {
            throw new IllegalArgumentException("not host:port: " + setting);
        }
        return new InetSocketAddress(host, p);
    }
}
