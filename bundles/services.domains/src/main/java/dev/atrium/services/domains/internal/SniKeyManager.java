package dev.atrium.services.domains.internal;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The server side of the services' HTTPS listener: the certificate a handshake gets is the one stored for the host name
 * the client asked for (SNI), chosen per handshake from the table {@link Certificates} replaces whenever a certificate is
 * issued, renewed or removed ({@link #serve}); the next handshake sees the new table, no restart. A name with no
 * certificate, or no name at all, gets none: the handshake fails (docs/decisions.md).
 *
 * <p>An alias is the name and a number of its table, so a chain and a key chosen together always belong together even
 * when the table is replaced between the JDK's calls: the table before the current one is kept for that.
 *
 * <p>A TLS session a client resumes (a session ticket or id) skips the choice. So when a name stops being served or its
 * certificate changes, the {@link #onWithdrawn} listeners are told, and the listener gives its connector a new
 * {@code SSLContext} (new session keys and cache): no session made before can be resumed, the next handshake chooses
 * again.
 */
final class SniKeyManager extends X509ExtendedKeyManager {

    /** One served certificate: its key and chain, leaf first. */
    record Entry(PrivateKey key, X509Certificate[] chain) {}

    private record Table(long number, Map<String, Entry> byName) {}

    private volatile Table current = new Table(0, Map.of());
    private volatile Table previous = current;
    private final List<Runnable> withdrawn = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Serves {@code byName} (lower-case host names) from the next handshake on. */
    @SuppressWarnings("ReferenceEquality") // whether an entry was replaced, not whether it changed
    void serve(Map<String, Entry> byName) {
        boolean dropped;
        synchronized (this) {
            Table was = current;
            Table next = new Table(was.number() + 1, Map.copyOf(byName));
            dropped =
                    was.byName().entrySet().stream().anyMatch(e -> next.byName().get(e.getKey()) != e.getValue());
            previous = was;
            current = next;
        }
        if (dropped) {
            for (Runnable r : withdrawn) {
                r.run();
            }
        }
    }

    /** {@code listener} runs after a name stopped being served or got another certificate. */
    void onWithdrawn(Runnable listener) {
        withdrawn.add(listener);
    }

    void removeOnWithdrawn(Runnable listener) {
        withdrawn.remove(listener);
    }

    /** The names served now. */
    java.util.Set<String> names() {
        return current.byName().keySet();
    }

    /** The host name a client asked for, lower case without a trailing dot; null when it named none. */
    static String requestedName(SSLSession handshake) {
        if (!(handshake instanceof ExtendedSSLSession e)) {
            return null;
        }
        List<SNIServerName> names = e.getRequestedServerNames();
        for (SNIServerName n : names == null ? List.<SNIServerName>of() : names) {
            if (n instanceof SNIHostName h) {
                String name = h.getAsciiName().toLowerCase(Locale.ROOT);
                return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
            }
        }
        return null;
    }

    private String choose(String keyType, SSLSession handshake) {
        String name = requestedName(handshake);
        if (name == null) {
            return null;
        }
        Table t = current;
        Entry e = t.byName().get(name);
        if (e == null || !matches(keyType, e.key().getAlgorithm())) {
            return null;
        }
        return name + "#" + t.number();
    }

    /** The JDK asks per key type of the signature schemes offered: "EC", "RSA", "RSASSA-PSS"… (TLS 1.2: "EC_EC", "ECDHE_RSA"…). */
    private static boolean matches(String keyType, String algorithm) {
        if (keyType == null) {
            return true;
        }
        String k = keyType.toUpperCase(Locale.ROOT);
        return "EC".equals(algorithm)
                ? k.equals("EC") || k.startsWith("EC_") || k.endsWith("_EC") || k.equals("ECDHE_ECDSA")
                : k.contains(algorithm.toUpperCase(Locale.ROOT));
    }

    private Entry entry(String alias) {
        int hash = alias == null ? -1 : alias.lastIndexOf('#');
        if (hash < 0) {
            return null;
        }
        long number;
        try {
            number = Long.parseLong(alias.substring(hash + 1));
        } catch (NumberFormatException e) {
            return null;
        }
        String name = alias.substring(0, hash);
        for (Table t : new Table[] {current, previous}) {
            if (t.number() == number) {
                return t.byName().get(name);
            }
        }
        return null;
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        return engine == null ? null : choose(keyType, engine.getHandshakeSession());
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        return socket instanceof SSLSocket s ? choose(keyType, s.getHandshakeSession()) : null;
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        Entry e = entry(alias);
        return e == null ? null : e.chain().clone();
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        Entry e = entry(alias);
        return e == null ? null : e.key();
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        Table t = current;
        return t.byName().entrySet().stream()
                .filter(e -> matches(keyType, e.getValue().key().getAlgorithm()))
                .map(e -> e.getKey() + "#" + t.number())
                .toArray(String[]::new);
    }

    // a server's key manager: never a client

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        return null;
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        return null;
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        return null;
    }
}
