package dev.atrium.services.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.shredzone.acme4j.Account;
import org.shredzone.acme4j.AccountBuilder;
import org.shredzone.acme4j.Authorization;
import org.shredzone.acme4j.Order;
import org.shredzone.acme4j.Problem;
import org.shredzone.acme4j.Session;
import org.shredzone.acme4j.Status;
import org.shredzone.acme4j.challenge.Http01Challenge;
import org.shredzone.acme4j.connector.HttpConnector;
import org.shredzone.acme4j.connector.NetworkSettings;
import org.shredzone.acme4j.exception.AcmeException;
import org.shredzone.acme4j.provider.GenericAcmeProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Sql;
import dev.atrium.services.internal.ServiceStore.DomainRow;

/**
 * Certificates of verified custom domains, ordered from the configured ACME directory with acme4j: the HTTP-01
 * challenge is answered by this server itself ({@link AcmeChallenges}), so the domain must already point here. One
 * account key per directory URL; every private key (the account's, each certificate's) is sealed with the services env
 * key ({@link Sealer}) before it is stored. An order runs on the caller's thread, bounded by {@code acmeTimeoutSeconds};
 * one order per domain at a time. Serving the certificate (TLS with SNI) is not done yet.
 */
@Component(service = Certificates.class)
public class Certificates {

    private static final Logger LOG = LoggerFactory.getLogger(Certificates.class);
    /** The associated data of a sealed account key is this and the directory URL; of a certificate key, the domain id and name. */
    private static final String ACCOUNT = "acme-account";
    private static final String CERT_KEY = "tls-key:";

    record Ssl(String status, String chainPem, Instant expiresAt, String issuer, String error) {
        static Ssl of(ResultSet rs) throws SQLException {
            return new Ssl(rs.getString("status"), rs.getString("chain_pem"), Sql.instant(rs, "expires_at"), rs.getString("issuer"),
                    rs.getString("error"));
        }

        static final Ssl NONE = new Ssl("none", null, null, null, null);

        Map<String, Object> view() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("status", status);
            m.put("expires_at", expiresAt == null ? null : expiresAt.toString());
            m.put("issuer", issuer);
            m.put("error", error);
            return m;
        }
    }

    private final ServiceStore store;
    private final Deployer deployer;
    private final AcmeChallenges challenges;
    private final Set<String> ordering = ConcurrentHashMap.newKeySet();

    @Activate
    public Certificates(@Reference ServiceStore store, @Reference Deployer deployer, @Reference AcmeChallenges challenges) {
        this.store = store;
        this.deployer = deployer;
        this.challenges = challenges;
    }

    Ssl ssl(String domainId) {
        return store.sql().one("SELECT status, chain_pem, expires_at, issuer, error FROM service_domain_certificates WHERE domain_id = ?",
                Ssl::of, domainId).orElse(Ssl.NONE);
    }

    /** Orders a certificate for the verified domain {@code d} and stores it; the outcome either way is in {@link #ssl}. */
    Ssl refresh(DomainRow d) {
        if (!ordering.add(d.id())) {
            throw ApiException.conflict("a certificate for " + d.domain() + " is being ordered; try again when it is done");
        }
        try {
            store.sql().update("INSERT INTO service_domain_certificates (domain_id, status) VALUES (?, 'pending') "
                    + "ON CONFLICT (domain_id) DO UPDATE SET status = 'pending', error = NULL, updated_at = now()", d.id());
            try {
                order(d);
            } catch (AcmeException | IOException | GeneralSecurityException | RuntimeException e) {
                String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
                LOG.info("services: no certificate for {}: {}", d.domain(), why);
                // a certificate issued before stays stored (and shown); the failure is what the last refresh said
                store.sql().update("UPDATE service_domain_certificates SET status = 'failed', error = ?, updated_at = now() WHERE domain_id = ?",
                        why.length() > 1000 ? why.substring(0, 1000) : why, d.id());
            }
            return ssl(d.id());
        } finally {
            ordering.remove(d.id());
        }
    }

    private void order(DomainRow d) throws AcmeException, IOException, GeneralSecurityException {
        Deployer.Config c = deployer.config();
        Instant deadline = Instant.now().plusSeconds(Math.max(5, c.acmeTimeoutSeconds()));
        String directory = c.acmeDirectoryUrl().trim();
        SSLContext tls = tls(c.acmeTrustedCaFile());
        GenericAcmeProvider provider = new GenericAcmeProvider() {
            @Override
            protected HttpConnector createHttpConnector(NetworkSettings settings) {
                return new HttpConnector(settings) {
                    @Override
                    public java.net.http.HttpClient.Builder createClientBuilder() {
                        java.net.http.HttpClient.Builder b = super.createClientBuilder();
                        return tls == null ? b : b.sslContext(tls);
                    }
                };
            }
        };
        Session session = new Session(URI.create(directory), provider);
        session.networkSettings().setTimeout(Duration.ofSeconds(Math.max(5, Math.min(30, c.acmeTimeoutSeconds()))));
        AccountBuilder ab = new AccountBuilder().agreeToTermsOfService().useKeyPair(accountKey(directory));
        if (!c.acmeContactEmail().isBlank()) {
            ab.addEmail(c.acmeContactEmail().trim());
        }
        Account account = ab.create(session);
        Order order = account.newOrder().domain(d.domain()).create();
        for (Authorization auth : order.getAuthorizations()) {
            if (auth.getStatus() == Status.VALID) {
                continue;
            }
            Http01Challenge ch = auth.findChallenge(Http01Challenge.class)
                    .orElseThrow(() -> new AcmeException("the ACME server offers no http-01 challenge for " + d.domain()));
            challenges.put(ch.getToken(), d.domain(), ch.getAuthorization());
            try {
                ch.trigger();
                Status s = ch.waitForCompletion(left(deadline));
                if (s != Status.VALID) {
                    throw new AcmeException("the http-01 challenge failed: " + ch.getError().map(Problem::toString).orElse(s.name()));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AcmeException("interrupted");
            } finally {
                challenges.remove(ch.getToken());
            }
        }
        KeyPair key = newKey();
        try {
            order.waitUntilReady(left(deadline));
            order.execute(key);
            Status s = order.waitForCompletion(left(deadline));
            if (s != Status.VALID) {
                throw new AcmeException("the order ended " + s + order.getError().map(p -> ": " + p).orElse(""));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AcmeException("interrupted");
        }
        List<X509Certificate> chain = order.getCertificate().getCertificateChain();
        X509Certificate leaf = chain.get(0);
        StringBuilder pem = new StringBuilder();
        for (X509Certificate x : chain) {
            pem.append(pem("CERTIFICATE", x.getEncoded()));
        }
        Sealer.Sealed sealed = deployer.sealer().seal(d.id(), CERT_KEY + d.domain(), keyText(key));
        store.sql().update("UPDATE service_domain_certificates SET status = 'active', chain_pem = ?, key_id = ?, key_nonce = ?, key_sealed = ?, "
                + "expires_at = ?, issuer = ?, error = NULL, updated_at = now() WHERE domain_id = ?", pem.toString(), sealed.keyId(),
                sealed.nonce(), sealed.ciphertext(), leaf.getNotAfter().toInstant(), leaf.getIssuerX500Principal().getName(), d.id());
        LOG.info("services: certificate for {} issued by {}, expires {}", d.domain(), leaf.getIssuerX500Principal().getName(), leaf.getNotAfter());
    }

    private static Duration left(Instant deadline) throws AcmeException {
        Duration d = Duration.between(Instant.now(), deadline);
        if (d.isNegative() || d.isZero()) {
            throw new AcmeException("the ACME server did not finish in time");
        }
        return d;
    }

    /** The account key of {@code directory}: made and stored (sealed) on first use. */
    private KeyPair accountKey(String directory) throws GeneralSecurityException {
        record Row(String keyId, byte[] nonce, byte[] sealed) {
        }
        Optional<Row> row = store.sql().one("SELECT key_id, key_nonce, key_sealed FROM service_acme_accounts WHERE directory_url = ?",
                rs -> new Row(rs.getString(1), rs.getBytes(2), rs.getBytes(3)), directory);
        if (row.isEmpty()) {
            KeyPair fresh = newKey();
            Sealer.Sealed s = deployer.sealer().seal(ACCOUNT, directory, keyText(fresh));
            store.sql().update("INSERT INTO service_acme_accounts (directory_url, key_id, key_nonce, key_sealed) VALUES (?, ?, ?, ?) "
                    + "ON CONFLICT (directory_url) DO NOTHING", directory, s.keyId(), s.nonce(), s.ciphertext());
            row = store.sql().one("SELECT key_id, key_nonce, key_sealed FROM service_acme_accounts WHERE directory_url = ?",
                    rs -> new Row(rs.getString(1), rs.getBytes(2), rs.getBytes(3)), directory);
        }
        Row r = row.orElseThrow();
        return readKey(deployer.sealer().open(ACCOUNT, directory, r.keyId(), r.nonce(), r.sealed()));
    }

    /** An EC P-256 key pair from the JDK (no BouncyCastle provider is registered in the JVM). */
    static KeyPair newKey() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    /** PKCS#8 private key, then the X.509 public key, both PEM. */
    static String keyText(KeyPair k) {
        return pem("PRIVATE KEY", k.getPrivate().getEncoded()) + pem("PUBLIC KEY", k.getPublic().getEncoded());
    }

    static KeyPair readKey(String text) throws GeneralSecurityException {
        KeyFactory f = KeyFactory.getInstance("EC");
        return new KeyPair(f.generatePublic(new X509EncodedKeySpec(der(text, "PUBLIC KEY"))), f.generatePrivate(new PKCS8EncodedKeySpec(der(text, "PRIVATE KEY"))));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] { '\n' }).encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    private static byte[] der(String text, String type) throws GeneralSecurityException {
        int from = text.indexOf("-----BEGIN " + type + "-----");
        int to = text.indexOf("-----END " + type + "-----");
        if (from < 0 || to < from) {
            throw new GeneralSecurityException("the stored key has no " + type);
        }
        return Base64.getMimeDecoder().decode(text.substring(from + type.length() + 16, to));
    }

    /** The JDK's trust plus the CAs of {@code caFile} (a PEM file), or null when there is no such file configured. */
    static SSLContext tls(String caFile) throws IOException, GeneralSecurityException {
        if (caFile == null || caFile.isBlank()) {
            return null;
        }
        KeyStore extra = KeyStore.getInstance(KeyStore.getDefaultType());
        extra.load(null, null);
        try (InputStream in = Files.newInputStream(Path.of(caFile.trim()))) {
            int i = 0;
            for (java.security.cert.Certificate cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                extra.setCertificateEntry("ca" + i++, cert);
            }
        }
        X509TrustManager jdk = trustManager(null);
        X509TrustManager mine = trustManager(extra);
        X509TrustManager both = new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                jdk.checkClientTrusted(chain, authType);
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                try {
                    mine.checkServerTrusted(chain, authType);
                } catch (CertificateException e) {
                    jdk.checkServerTrusted(chain, authType);
                }
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                List<X509Certificate> all = new ArrayList<>(List.of(jdk.getAcceptedIssuers()));
                all.addAll(List.of(mine.getAcceptedIssuers()));
                return all.toArray(X509Certificate[]::new);
            }
        };
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, new TrustManager[] { both }, null);
        return ctx;
    }

    private static X509TrustManager trustManager(KeyStore ks) throws GeneralSecurityException {
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init(ks);
        for (TrustManager t : f.getTrustManagers()) {
            if (t instanceof X509TrustManager x) {
                return x;
            }
        }
        throw new GeneralSecurityException("no X.509 trust manager");
    }
}
