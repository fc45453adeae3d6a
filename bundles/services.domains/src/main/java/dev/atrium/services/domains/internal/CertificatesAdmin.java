package dev.atrium.services.domains.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.OperatorOnly;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.MediaType;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code GET /admin/certificates} (operator): every custom domain of every service with its certificate, verified or
 * not, for the console's Operations view. Read with one query over the services' {@code service_domains} (whose rows
 * this bundle's certificate table already references) and their services' workspaces; the leaf of a stored chain is
 * parsed for its dates and issuer. Never key material.
 */
@Component(service = CertificatesAdmin.class, configurationPid = DomainsConfig.PID)
@KernelResource
@Path("/admin/certificates")
@Produces(MediaType.APPLICATION_JSON)
@OperatorOnly
public class CertificatesAdmin {

    private final CertificateTables store;
    /** Within this of its expiry a certificate is {@code near_expiry}: the health check's warning window. */
    private final Duration near;

    @Activate
    public CertificatesAdmin(DomainsConfig config, @Reference CertificateTables store) {
        this.store = store;
        this.near = Duration.ofDays(Math.max(0, config.certRenewBeforeDays())).dividedBy(2);
    }

    private record Row(
            String domainId,
            String domain,
            String serviceId,
            String spaceId,
            String domainStatus,
            Certificates.Ssl ssl) {}

    @GET
    @JsonShape(CertificateJson.Certificates.class)
    public Map<String, Object> list() {
        List<Row> rows = store.sql()
                .list(
                        "SELECT d.id, d.domain, d.service_id, s.space_id, d.status AS domain_status, "
                                + "coalesce(c.status, 'none') AS status, c.chain_pem, c.expires_at, c.issuer, c.error, "
                                + "coalesce(c.failures, 0) AS failures, c.retry_at, c.claimed_until "
                                + "FROM service_domains d JOIN services s ON s.id = d.service_id "
                                + "LEFT JOIN service_domain_certificates c ON c.domain_id = d.id "
                                + "ORDER BY c.expires_at NULLS LAST, d.domain, d.id",
                        rs -> new Row(
                                rs.getString("id"),
                                rs.getString("domain"),
                                rs.getString("service_id"),
                                rs.getString("space_id"),
                                rs.getString("domain_status"),
                                Certificates.Ssl.of(rs)));
        Instant now = Instant.now();
        return Map.of("certificates", rows.stream().map(r -> view(r, now)).toList());
    }

    private Map<String, Object> view(Row r, Instant now) {
        Map<String, Object> ssl = r.ssl().view(now);
        X509Certificate leaf = leaf(r.ssl().chainPem());
        Instant notAfter =
                leaf != null ? leaf.getNotAfter().toInstant() : r.ssl().expiresAt();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("domain_id", r.domainId());
        m.put("host", r.domain());
        m.put("service_id", r.serviceId());
        m.put("space_id", r.spaceId());
        m.put("domain_status", r.domainStatus());
        m.put("state", ssl.get("status"));
        // every certificate here was ordered through ACME; a chain whose leaf signed itself is told apart all the same
        m.put("source", r.ssl().chainPem() == null ? null : "acme");
        m.put(
                "issuer",
                leaf != null ? leaf.getIssuerX500Principal().getName() : r.ssl().issuer());
        m.put(
                "self_signed",
                leaf == null ? null : leaf.getIssuerX500Principal().equals(leaf.getSubjectX500Principal()));
        m.put(
                "not_before",
                leaf == null ? null : leaf.getNotBefore().toInstant().toString());
        m.put("not_after", notAfter == null ? null : notAfter.toString());
        m.put(
                "days_left",
                notAfter == null
                        ? null
                        : Math.floorDiv(Duration.between(now, notAfter).toHours(), 24));
        m.put("near_expiry", notAfter != null && notAfter.isBefore(now.plus(near)));
        m.put("error", ssl.get("error"));
        return m;
    }

    /** The first certificate of a PEM chain, or null when there is none or it does not parse. */
    static X509Certificate leaf(String chainPem) {
        if (chainPem == null || chainPem.isBlank()) {
            return null;
        }
        try {
            return (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(chainPem.getBytes(StandardCharsets.US_ASCII)));
        } catch (CertificateException | ClassCastException e) {
            return null;
        }
    }

    /** The JSON this route answers, for the API reference ({@link JsonShape}). */
    static final class CertificateJson {

        private CertificateJson() {}

        /**
         * A custom domain and its certificate: {@code domain_status} pending or verified; {@code state} none, pending,
         * active, expired or failed (as the domain's {@code ssl.status}); {@code source} {@code acme} when a certificate
         * is stored; {@code days_left} whole days to {@code not_after}, negative once past; {@code near_expiry} within
         * half the renewal window (the health check's warning).
         */
        record Certificate(
                @JsonProperty("domain_id") String domainId,
                String host,
                @JsonProperty("service_id") String serviceId,
                @JsonProperty("space_id") String spaceId,
                @JsonProperty("domain_status") String domainStatus,
                String state,
                String source,
                String issuer,
                @JsonProperty("self_signed") Boolean selfSigned,
                @JsonProperty("not_before") Instant notBefore,
                @JsonProperty("not_after") Instant notAfter,
                @JsonProperty("days_left") Long daysLeft,
                @JsonProperty("near_expiry") boolean nearExpiry,
                String error) {}

        record Certificates(List<Certificate> certificates) {}
    }
}
