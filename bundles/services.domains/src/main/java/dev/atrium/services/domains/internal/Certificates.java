package dev.atrium.services.domains.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.KeyFile;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.Sealer;
import dev.atrium.kernel.api.Sql;
import dev.atrium.services.api.RoutesListener;
import dev.atrium.services.api.ServiceDomains;
import dev.atrium.services.api.ServiceDomains.Domain;
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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;
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

/**
 * Certificates of verified custom domains, ordered from the configured ACME directory with acme4j: the HTTP-01
 * challenge is answered by this server itself ({@link AcmeChallenges}), so the domain must already point here. One
 * account key per directory URL; every private key (the account's, each certificate's) is sealed with the services env
 * key ({@code <data>/keys/services/env.key}, which the services bundle seals secret variables with) before it is
 * stored. An order runs on the caller's thread, bounded by {@code acmeTimeoutSeconds};
 * one order per domain at a time across instances: an order claims the domain's row for longer than it may take
 * ({@code claimed_until}) and clears the claim when it ends.
 *
 * <p>The certificates of verified domains are also kept opened in memory for the HTTPS listener ({@link #keyManager},
 * picked per handshake by SNI): reloaded after every routing table the services capability publishes (a domain verified
 * or removed, here or on another instance: {@link RoutesListener}), after a certificate is issued here, and when another
 * instance says it issued one ({@code NOTIFY atrium_service_certificates}). A certificate is opened again only when its
 * stored chain or key changed.
 *
 * <p>Why one class of about 660 lines: ordering, storing and serving a certificate share the row claim and the sealing
 * of its key; split, each part would need the other's SQL and key handling.
 */
@Component(
        service = {Certificates.class, RoutesListener.class},
        configurationPid = DomainsConfig.PID)
@Designate(ocd = DomainsConfig.class)
public class Certificates implements RoutesListener {

    private static final Logger LOG = LoggerFactory.getLogger(Certificates.class);
    /** The associated data of a sealed account key is this and the directory URL; of a certificate key, the domain id and name. */
    private static final String ACCOUNT = "acme-account";

    private static final String CERT_KEY = "tls-key:";
    /** The id of the services' env key, which seals these keys too. */
    private static final String KEY_ID = "env1";

    static final String CHANNEL = "atrium_service_certificates";

    /** Columns of {@link Ssl#of}. */
    static final String SSL_COLUMNS = "status, chain_pem, expires_at, issuer, error, failures, retry_at, claimed_until";

    /** What a {@code pending} row whose claim lapsed says: the order ended without writing its outcome. */
    static final String ORDER_STOPPED =
            "the certificate order stopped before it finished (the instance running it stopped or"
                    + " lost the database); refresh-ssl orders again";

    record Ssl(
            String status,
            String chainPem,
            Instant expiresAt,
            String issuer,
            String error,
            int failures,
            Instant retryAt,
            Instant claimedUntil) {
        static Ssl of(ResultSet rs) throws SQLException {
            return new Ssl(
                    rs.getString("status"),
                    rs.getString("chain_pem"),
                    Sql.instant(rs, "expires_at"),
                    rs.getString("issuer"),
                    rs.getString("error"),
                    rs.getInt("failures"),
                    Sql.instant(rs, "retry_at"),
                    Sql.instant(rs, "claimed_until"));
        }

        static final Ssl NONE = new Ssl("none", null, null, null, null, 0, null, null);

        /**
         * {@code status}: none, pending (an order under way; a certificate issued before is still served), active, expired
         * (active but past {@code expires_at}), failed (the last order failed, {@code error} says why; a certificate issued
         * before is still served until it expires). {@code retry_at}: after failures, when the renewal task tries again.
         * A pending order whose claim lapsed never wrote its outcome (its instance was killed midway): failed, saying so.
         */
        Map<String, Object> view(Instant now) {
            boolean stopped = "pending".equals(status) && claimedUntil != null && claimedUntil.isBefore(now);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(
                    "status",
                    stopped
                            ? "failed"
                            : "active".equals(status) && expiresAt != null && expiresAt.isBefore(now)
                                    ? "expired"
                                    : status);
            m.put("expires_at", expiresAt == null ? null : expiresAt.toString());
            m.put("issuer", issuer);
            m.put("error", stopped ? ORDER_STOPPED : error);
            m.put("retry_at", retryAt == null ? null : retryAt.toString());
            return m;
        }
    }

    /**
     * A domain's certificate as served, with what it was opened from ({@code stored}: a digest of the stored chain and
     * sealed key); null entry when they do not open (logged once).
     */
    private record Loaded(String domain, String stored, SniKeyManager.Entry entry) {}

    private final DomainsConfig config;
    private final CertificateTables store;
    private final ServiceDomains domains;
    private final AcmeChallenges challenges;
    private final Sealer sealer;
    private final SniKeyManager served = new SniKeyManager();
    /** By domain id; guarded by this. */
    private final Map<String, Loaded> loaded = new HashMap<>();
    /** Reloads when another instance says so: never on the kernel's listening thread. */
    private final ExecutorService reloads =
            Executors.newSingleThreadExecutor(NamedThreads.factory("atrium-services-certificates"));

    private final String self = Ids.random("", 16);
    private final DatabaseChannels.Subscription subscription;

    @Activate
    public Certificates(
            DomainsConfig config,
            @Reference CertificateTables store,
            @Reference ServiceDomains domains,
            @Reference AcmeChallenges challenges,
            @Reference DatabaseChannels channels)
            throws IOException {
        this.config = config;
        this.store = store;
        this.domains = domains;
        this.challenges = challenges;
        this.sealer = Sealer.withKey(
                KEY_ID,
                KeyFile.readOrMake(Path.of(config.dataDirectory())
                        .toAbsolutePath()
                        .resolve("keys")
                        .resolve("services")
                        .resolve("env.key")));
        reload();
        this.subscription = channels.listen(CHANNEL, new DatabaseChannels.Listener() {
            @Override
            public void listening() {
                // one may have been issued elsewhere before this listened, or while it could not: the digests make a
                // reload that finds nothing new cheap
                reloadLater();
            }

            @Override
            public void notified(String payload) {
                if (!self.equals(payload)) {
                    reloadLater();
                }
            }
        });
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        subscription.close();
        reloads.shutdownNow();
        reloads.awaitTermination(10, TimeUnit.SECONDS);
        served.serve(Map.of());
    }

    @Override
    public void routesPublished() {
        reload();
    }

    private void reloadLater() {
        try {
            reloads.execute(this::reload);
        } catch (RejectedExecutionException stopping) {
            // deactivating
        }
    }

    /** After this instance stored a certificate: the other instances serve it too. */
    private void announce() {
        try {
            store.sql().one("SELECT pg_notify(?, ?)", rs -> 0, CHANNEL, self);
        } catch (RuntimeException e) {
            LOG.warn("services: the other instances could not be told of a new certificate: {}", e.toString());
        }
    }

    /** Picks the certificate of a handshake by its SNI name among those of verified domains. */
    SniKeyManager keyManager() {
        return served;
    }

    Ssl ssl(String domainId) {
        return store.sql()
                .one(
                        "SELECT " + SSL_COLUMNS + " FROM service_domain_certificates WHERE domain_id = ?",
                        Ssl::of,
                        domainId)
                .orElse(Ssl.NONE);
    }

    /**
     * How long an order may hold a domain's claim: longer than an order may take, so a claim outlives none. The steps
     * before the first deadline check and after the last wait (account, order, authorizations, trigger, finalize,
     * download) are bounded only by their own 30 s network timeouts: six of them are added to the order's timeout.
     */
    private long leaseSeconds() {
        return Math.max(5, config.acmeTimeoutSeconds()) + 6 * 30L;
    }

    /**
     * Orders a certificate for the verified domain {@code d} and stores it; the outcome either way is in {@link #ssl}.
     * 409 while another order for it runs (on this instance or another).
     */
    Ssl refresh(Domain d) {
        Optional<Instant> claim = store.sql()
                .one(
                        "INSERT INTO service_domain_certificates (domain_id, status, claimed_until) "
                                + "VALUES (?, 'pending', now() + ? * interval '1 second') ON CONFLICT (domain_id) DO UPDATE SET status = 'pending', error = NULL, "
                                + "claimed_until = EXCLUDED.claimed_until, updated_at = now() "
                                + "WHERE service_domain_certificates.claimed_until IS NULL OR service_domain_certificates.claimed_until < now() RETURNING claimed_until",
                        rs -> Sql.instant(rs, "claimed_until"),
                        d.id(),
                        leaseSeconds());
        if (claim.isEmpty()) {
            throw ApiException.conflict(
                    "a certificate for " + d.domain() + " is being ordered; try again when it is done");
        }
        return run(d, claim.get());
    }

    /** The database's clock. */
    Instant now() {
        return store.sql().one("SELECT now()", rs -> Sql.instant(rs, "now")).orElseThrow();
    }

    /**
     * Renews one certificate of a verified domain that expires within {@code window}, whose retry time (after failed
     * renewals) has come and whose row did not change since {@code since} (so a look renews each at most once), if one is
     * left that no order holds: the soonest to expire first. Empty when there is none.
     */
    Optional<Ssl> renewNext(Duration window, Instant since) {
        Optional<Claimed> id = store.sql()
                .one(
                        "UPDATE service_domain_certificates c SET status = 'pending', claimed_until = now() + ? * interval '1 second', "
                                + "updated_at = now() WHERE c.domain_id = (SELECT c2.domain_id FROM service_domain_certificates c2 "
                                + "WHERE c2.chain_pem IS NOT NULL "
                                + "AND c2.expires_at < now() + ? * interval '1 second' AND (c2.claimed_until IS NULL OR c2.claimed_until < now()) "
                                + "AND (c2.retry_at IS NULL OR c2.retry_at <= now()) AND c2.updated_at < ? ORDER BY c2.expires_at LIMIT 1 FOR UPDATE OF c2 SKIP LOCKED) "
                                + "AND (c.claimed_until IS NULL OR c.claimed_until < now()) RETURNING c.domain_id, c.claimed_until",
                        rs -> new Claimed(rs.getString(1), Sql.instant(rs, "claimed_until")),
                        leaseSeconds(),
                        window.toSeconds(),
                        since);
        if (id.isEmpty()) {
            return Optional.empty();
        }
        Optional<Domain> d = domains.domain(id.get().domainId()).filter(Domain::verified);
        if (d.isEmpty()) {
            return Optional.of(Ssl.NONE); // removed meanwhile (its row went with it)
        }
        LOG.info("services: renewing the certificate of {}", d.get().domain());
        return Optional.of(run(d.get(), id.get().until()));
    }

    /** A domain's row claimed for an order until {@code until}, which also tells this claim from a later one. */
    private record Claimed(String domainId, Instant until) {}

    /**
     * Orders a certificate for {@code d}, whose row this instance has claimed until {@code claim}, and releases the
     * claim; every write is only while the claim is still this one's (an order that outlived its lease changes nothing).
     */
    private Ssl run(Domain d, Instant claim) {
        try {
            order(d, claim);
        } catch (AcmeException | IOException | GeneralSecurityException | RuntimeException e) {
            String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            if (Thread.currentThread().isInterrupted()) {
                // this capability is stopping (the renewal task's thread): not the domain's failure, no back-off
                store.sql()
                        .update(
                                "UPDATE service_domain_certificates SET status = CASE WHEN chain_pem IS NULL THEN 'none' ELSE 'active' END, "
                                        + "claimed_until = NULL, updated_at = now() WHERE domain_id = ? AND claimed_until = ?",
                                d.id(),
                                claim);
                return ssl(d.id());
            }
            LOG.info("services: no certificate for {}: {}", d.domain(), why);
            // a certificate issued before stays stored (shown and served); the failure is what the last order said, and
            // the renewal task waits longer after each failure in a row: 10 minutes, 20, 40… at most a day
            store.sql()
                    .update(
                            "UPDATE service_domain_certificates SET status = 'failed', error = ?, claimed_until = NULL, failures = failures + 1, "
                                    + "retry_at = now() + LEAST(interval '10 minutes' * power(2, LEAST(failures, 10)), interval '24 hours'), updated_at = now() "
                                    + "WHERE domain_id = ? AND claimed_until = ?",
                            why.length() > 1000 ? why.substring(0, 1000) : why,
                            d.id(),
                            claim);
        }
        return ssl(d.id());
    }

    // ------------------------------------------------------------------ serving

    /** A served certificate's domain and when its leaf expires. */
    record Served(String domain, Instant expiresAt) {}

    /**
     * What {@link #served} answers: replaced at the end of every reload, and read without the lock a reload holds while
     * it asks the database (the health view asks while the database may be down).
     */
    private volatile List<Served> servedNow = List.of();

    /** The certificates served now. */
    List<Served> served() {
        return servedNow;
    }

    /** Opens the certificates of verified domains whose rows changed since the last time and serves the new table. */
    synchronized void reload() {
        record Row(String domainId, String domain, String stored) {}
        List<Row> rows = new ArrayList<>();
        try {
            Map<String, String> verified = new HashMap<>();
            domains.verified().forEach(d -> verified.put(d.id(), d.domain()));
            // opened again only when the certificate itself changed: an order's claim, a failed renewal and the status
            // change the row too, and a new entry for a name makes every listener replace its TLS context (and every
            // client then does a full handshake)
            store.sql()
                    .list(
                            "SELECT domain_id, md5(chain_pem || coalesce(key_id, '') || encode(key_sealed, 'base64')) "
                                    + "FROM service_domain_certificates WHERE chain_pem IS NOT NULL AND key_sealed IS NOT NULL",
                            rs -> new String[] {rs.getString(1), rs.getString(2)})
                    .forEach(r -> {
                        String domain = verified.get(r[0]);
                        if (domain != null) {
                            rows.add(new Row(r[0], domain, r[1]));
                        }
                    });
        } catch (RuntimeException e) {
            LOG.warn("services: the served certificates could not be reloaded: {}", e.toString());
            return;
        }
        Map<String, Loaded> next = new HashMap<>();
        Map<String, SniKeyManager.Entry> byName = new HashMap<>();
        for (Row r : rows) {
            Loaded l = loaded.get(r.domainId());
            if (l == null || !l.domain().equals(r.domain()) || !l.stored().equals(r.stored())) {
                l = new Loaded(r.domain(), r.stored(), open(r.domainId(), r.domain()));
            }
            if (l.entry() == null) {
                continue; // not kept: a failure to open it (the database, a key not there yet) is tried again next time
            }
            next.put(r.domainId(), l);
            byName.put(l.domain(), l.entry());
        }
        loaded.clear();
        loaded.putAll(next);
        served.serve(byName);
        servedNow = next.values().stream()
                .map(l -> new Served(
                        l.domain(), l.entry().chain()[0].getNotAfter().toInstant()))
                .toList();
    }

    /** The stored chain and unsealed key of a domain, or null (logged) when they do not open. */
    private SniKeyManager.Entry open(String domainId, String domain) {
        record Stored(String chainPem, String keyId, byte[] nonce, byte[] sealed) {}
        try {
            Optional<Stored> s = store.sql()
                    .one(
                            "SELECT chain_pem, key_id, key_nonce, key_sealed FROM service_domain_certificates WHERE domain_id = ?",
                            rs -> new Stored(rs.getString(1), rs.getString(2), rs.getBytes(3), rs.getBytes(4)),
                            domainId);
            if (s.isEmpty() || s.get().chainPem() == null || s.get().sealed() == null) {
                return null;
            }
            List<X509Certificate> chain = new ArrayList<>();
            for (java.security.cert.Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new java.io.ByteArrayInputStream(
                            s.get().chainPem().getBytes(java.nio.charset.StandardCharsets.US_ASCII)))) {
                chain.add((X509Certificate) c);
            }
            if (chain.isEmpty()) {
                return null;
            }
            KeyPair key = readKey(sealer.open(
                    new Sealer.Sealed(s.get().keyId(), s.get().nonce(), s.get().sealed()),
                    associated(domainId, CERT_KEY + domain)));
            return new SniKeyManager.Entry(key.getPrivate(), chain.toArray(X509Certificate[]::new));
        } catch (GeneralSecurityException | RuntimeException e) {
            LOG.warn("services: the certificate of {} is not served: {}", domain, e.toString());
            return null;
        }
    }

    private void order(Domain d, Instant claim) throws AcmeException, IOException, GeneralSecurityException {
        DomainsConfig c = config;
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
                    .orElseThrow(
                            () -> new AcmeException("the ACME server offers no http-01 challenge for " + d.domain()));
            challenges.put(ch.getToken(), d.domain(), ch.getAuthorization());
            try {
                ch.trigger();
                Status s = ch.waitForCompletion(left(deadline));
                if (s != Status.VALID) {
                    throw new AcmeException("the http-01 challenge failed: "
                            + ch.getError().map(Problem::toString).orElse(s.name()));
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
                throw new AcmeException("the order ended " + s
                        + order.getError().map(p -> ": " + p).orElse(""));
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
        Sealer.Sealed sealed = sealer.seal(keyText(key), associated(d.id(), CERT_KEY + d.domain()));
        int stored = store.sql()
                .update(
                        "UPDATE service_domain_certificates SET status = 'active', chain_pem = ?, key_id = ?, key_nonce = ?, key_sealed = ?, "
                                + "expires_at = ?, issuer = ?, error = NULL, failures = 0, retry_at = NULL, claimed_until = NULL, updated_at = now() "
                                + "WHERE domain_id = ? AND claimed_until = ?",
                        pem.toString(),
                        sealed.keyId(),
                        sealed.nonce(),
                        sealed.ciphertext(),
                        leaf.getNotAfter().toInstant(),
                        leaf.getIssuerX500Principal().getName(),
                        d.id(),
                        claim);
        if (stored == 0) {
            LOG.warn(
                    "services: the certificate ordered for {} is not kept: the order outlived its claim and another order holds the domain",
                    d.domain());
            return;
        }
        LOG.info(
                "services: certificate for {} issued by {}, expires {}",
                d.domain(),
                leaf.getIssuerX500Principal().getName(),
                leaf.getNotAfter());
        // served from the next handshake here, and on the other instances once they hear of it
        reload();
        announce();
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
        record Row(String keyId, byte[] nonce, byte[] sealed) {}
        Optional<Row> row = store.sql()
                .one(
                        "SELECT key_id, key_nonce, key_sealed FROM service_acme_accounts WHERE directory_url = ?",
                        rs -> new Row(rs.getString(1), rs.getBytes(2), rs.getBytes(3)),
                        directory);
        if (row.isEmpty()) {
            KeyPair fresh = newKey();
            Sealer.Sealed s = sealer.seal(keyText(fresh), associated(ACCOUNT, directory));
            store.sql()
                    .update(
                            "INSERT INTO service_acme_accounts (directory_url, key_id, key_nonce, key_sealed) VALUES (?, ?, ?, ?) "
                                    + "ON CONFLICT (directory_url) DO NOTHING",
                            directory,
                            s.keyId(),
                            s.nonce(),
                            s.ciphertext());
            row = store.sql()
                    .one(
                            "SELECT key_id, key_nonce, key_sealed FROM service_acme_accounts WHERE directory_url = ?",
                            rs -> new Row(rs.getString(1), rs.getBytes(2), rs.getBytes(3)),
                            directory);
        }
        Row r = row.orElseThrow();
        return readKey(
                sealer.open(new Sealer.Sealed(r.keyId(), r.nonce(), r.sealed()), associated(ACCOUNT, directory)));
    }

    /** What a sealed key is bound to, as the services bundle binds its sealed values: its owner and its name. */
    private static String associated(String owner, String name) {
        return owner + "\n" + name;
    }

    /** An EC P-256 key pair from the JDK (no BouncyCastle provider is registered in the JVM). */
    static KeyPair newKey() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        return g.generateKeyPair();
    }

    /** PKCS#8 private key, then the X.509 public key, both PEM. */
    static String keyText(KeyPair k) {
        return pem("PRIVATE KEY", k.getPrivate().getEncoded())
                + pem("PUBLIC KEY", k.getPublic().getEncoded());
    }

    static KeyPair readKey(String text) throws GeneralSecurityException {
        KeyFactory f = KeyFactory.getInstance("EC");
        return new KeyPair(
                f.generatePublic(new X509EncodedKeySpec(der(text, "PUBLIC KEY"))),
                f.generatePrivate(new PKCS8EncodedKeySpec(der(text, "PRIVATE KEY"))));
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der) + "\n-----END " + type + "-----\n";
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
            for (java.security.cert.Certificate cert :
                    CertificateFactory.getInstance("X.509").generateCertificates(in)) {
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
        ctx.init(null, new TrustManager[] {both}, null);
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
