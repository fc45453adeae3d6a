package dev.atrium.itests;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * The JDK's TLS client against a loopback port, naming the server by SNI as a browser would for {@code https://<name>/}
 * (the name need not resolve: the socket goes to 127.0.0.1), checking the certificate's chain against the given trust
 * and its names against the SNI name (endpoint identification "HTTPS").
 */
final class TlsClient {

    /** {@code sessionCreated}: when the TLS session began; the same for a connection that resumed an earlier session. */
    record Answer(X509Certificate leaf, long sessionCreated, RawHttp.Response response) {
        String text() {
            return new String(response.body(), StandardCharsets.UTF_8);
        }
    }

    private TlsClient() {}

    /** A handshake naming {@code sni} (none when null); the certificate the server presented. */
    static X509Certificate handshake(int port, SSLContext trust, String sni) throws IOException {
        try (SSLSocket s = open(port, trust, sni)) {
            return (X509Certificate) s.getSession().getPeerCertificates()[0];
        }
    }

    /**
     * The serial of the certificate served for {@code sni}, or null when the handshake fails (no certificate for the
     * name); a closed port is an error, not a certificate withdrawn.
     */
    static java.math.BigInteger servedSerial(int port, SSLContext trust, String sni) {
        try {
            return handshake(port, trust, sni).getSerialNumber();
        } catch (javax.net.ssl.SSLException refused) {
            return null;
        } catch (IOException e) {
            throw new AssertionError("no TLS listener to ask (a closed port is not a dropped certificate)", e);
        }
    }

    /** {@code GET path} with {@code Host: host} over a connection naming {@code sni}. */
    static Answer get(int port, SSLContext trust, String sni, String host, String path) throws IOException {
        try (SSLSocket s = open(port, trust, sni)) {
            X509Certificate leaf = (X509Certificate) s.getSession().getPeerCertificates()[0];
            OutputStream out = s.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            return new Answer(
                    leaf, s.getSession().getCreationTime(), RawHttp.read(new BufferedInputStream(s.getInputStream())));
        }
    }

    private static SSLSocket open(int port, SSLContext trust, String sni) throws IOException {
        Socket raw = new Socket();
        try {
            raw.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            raw.setSoTimeout(30_000);
            SSLSocket s =
                    (SSLSocket) trust.getSocketFactory().createSocket(raw, sni == null ? "127.0.0.1" : sni, port, true);
            SSLParameters p = s.getSSLParameters();
            if (sni != null) {
                p.setServerNames(List.of(new SNIHostName(sni)));
                p.setEndpointIdentificationAlgorithm("HTTPS");
            } else {
                p.setServerNames(List.of());
            }
            s.setSSLParameters(p);
            s.startHandshake();
            return s;
        } catch (IOException | RuntimeException e) {
            raw.close();
            throw e;
        }
    }
}
