package dev.atrium.services.domains.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.OwnerScope;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.services.api.ServiceDomains;
import dev.atrium.services.api.ServiceDomains.Domain;
import dev.atrium.services.api.ServiceRoutes;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/services/:id/custom-domains…}: a service's custom domains, their verification and their certificates. The
 * service is resolved to its workspace by the services capability ({@link ServiceDomains#spaceOf}) and proven through
 * the kernel's {@link OwnerScope}: another Principal's service or domain answers exactly like a missing one (404).
 * Changing a domain is what {@code repos:write} allows, as for the rest of a service; reading needs {@code repos:read}.
 */
@Component(service = DomainsApi.class, configurationPid = DomainsConfig.PID)
@KernelResource
@Path("/api/services/{id}/custom-domains")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class DomainsApi {

    static final String SERVICE_NOT_FOUND = "service not found";
    static final String NOT_FOUND = "domain not found";
    private static final String READ = "repos:read";
    private static final String WRITE = "repos:write";
    private static final Pattern LABEL = Pattern.compile("[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?");

    private final OwnerScope ownerScope;
    private final ServiceDomains domains;
    private final ServiceRoutes routes;
    private final DomainVerifier verifier;
    private final Certificates certificates;
    private final int challengePort;

    @Activate
    public DomainsApi(
            DomainsConfig config,
            @Reference OwnerScope ownerScope,
            @Reference ServiceDomains domains,
            @Reference ServiceRoutes routes,
            @Reference DomainVerifier verifier,
            @Reference Certificates certificates) {
        this.ownerScope = ownerScope;
        this.domains = domains;
        this.routes = routes;
        this.verifier = verifier;
        this.certificates = certificates;
        this.challengePort = config.challengeHttpPort();
    }

    @GET
    @RequiresScope(READ)
    @JsonShape(DomainJson.Page.class)
    public Map<String, Object> list(@Context SecurityContext sc, @PathParam("id") String id) {
        String serviceId = owned(Caller.from(sc), id);
        return Map.of(
                "domains", domains.domains(serviceId).stream().map(this::view).toList());
    }

    @POST
    @RequiresScope(WRITE)
    @JsonShape(DomainJson.One.class)
    public Response add(
            @Context SecurityContext sc, @PathParam("id") String id, @JsonShape(DomainJson.Add.class) JsonNode body) {
        NulText.reject(body);
        String name = hostName(JsonBody.of(body).text("domain", 1, 253));
        String serviceId = owned(Caller.from(sc), id);
        try {
            Domain d = domains.add(serviceId, name);
            return Response.status(201).entity(Map.of("domain", view(d))).build();
        } catch (ServiceDomains.AlreadyAdded e) {
            throw ApiException.conflict(e.getMessage());
        }
    }

    @GET
    @Path("{domainId}")
    @RequiresScope(READ)
    @JsonShape(DomainJson.One.class)
    public Map<String, Object> get(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("domainId") String domainId) {
        return Map.of("domain", view(owned(Caller.from(sc), id, domainId)));
    }

    @DELETE
    @Path("{domainId}")
    @RequiresScope(WRITE)
    @JsonShape(DomainJson.Removed.class)
    public Map<String, Object> remove(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("domainId") String domainId) {
        Domain d = owned(Caller.from(sc), id, domainId);
        if (!domains.remove(d.id())) {
            throw ApiException.notFound(NOT_FOUND);
        }
        return Map.of("success", true);
    }

    /** {@code {"method"?: "http" | "dns"}}: checks the token (both ways when no method is named). */
    @POST
    @Path("{domainId}/verify")
    @RequiresScope(WRITE)
    @Consumes(MediaType.WILDCARD)
    @JsonShape(DomainJson.Checked.class)
    public Map<String, Object> verify(
            @Context SecurityContext sc,
            @PathParam("id") String id,
            @PathParam("domainId") String domainId,
            @JsonShape(DomainJson.Verify.class) String text) {
        JsonNode body = JsonBody.optional(text);
        String method = null;
        if (body != null) {
            NulText.reject(body);
            method = JsonBody.of(body).oneOf("method", Set.of("http", "dns")).orElse(null);
        }
        Domain d = owned(Caller.from(sc), id, domainId);
        if (!d.verified() && domains.verifiedElsewhere(d.domain(), d.serviceId())) {
            throw ApiException.conflict(new ServiceDomains.VerifiedElsewhere(d.domain()).getMessage());
        }
        DomainVerifier.Result r = verifier.verify(d, method);
        Domain checked;
        try {
            checked = domains.checked(d.id(), r.verified(), r.method(), r.detail())
                    .orElseThrow(() -> ApiException.notFound(NOT_FOUND));
        } catch (ServiceDomains.VerifiedElsewhere e) {
            throw ApiException.conflict(e.getMessage());
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("verified", r.verified());
        m.put("detail", r.detail());
        m.put("domain", view(checked));
        return m;
    }

    /**
     * Orders a certificate for a verified domain through ACME and answers when the order has ended (bounded by
     * {@code acmeTimeoutSeconds}): 200 with the domain ({@code ssl.status} "active"), or 502 when the ACME server refused
     * or failed (the reason is also the domain's {@code ssl.error}); 409 before verification or while another order runs.
     */
    @POST
    @Path("{domainId}/refresh-ssl")
    @RequiresScope(WRITE)
    @Consumes(MediaType.WILDCARD)
    @JsonShape(DomainJson.One.class)
    public Map<String, Object> refreshSsl(
            @Context SecurityContext sc, @PathParam("id") String id, @PathParam("domainId") String domainId) {
        Domain d = owned(Caller.from(sc), id, domainId);
        if (!d.verified()) {
            throw ApiException.conflict("verify the domain before asking for a certificate");
        }
        Certificates.Ssl ssl = certificates.refresh(d);
        if (!"active".equals(ssl.status())) {
            throw new ApiException(
                    502,
                    "CERTIFICATE_FAILED",
                    "the ACME server issued no certificate for " + d.domain() + ": " + ssl.error());
        }
        return Map.of("domain", view(d));
    }

    /** The id of a service the caller may see, else 404 as for a missing one. */
    private String owned(Caller caller, String serviceId) {
        String spaceId = domains.spaceOf(serviceId).orElseThrow(() -> ApiException.notFound(SERVICE_NOT_FOUND));
        try {
            ownerScope.require(caller, spaceId);
        } catch (ApiException e) {
            throw ApiException.notFound(SERVICE_NOT_FOUND);
        }
        return serviceId;
    }

    private Domain owned(Caller caller, String serviceId, String domainId) {
        String owned = owned(caller, serviceId);
        return domains.domain(domainId)
                .filter(d -> d.serviceId().equals(owned))
                .orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    /** A host name of at least two labels, lower case, without the root's dot; never an IP address or an apps name. */
    private String hostName(String raw) {
        String d = raw.toLowerCase(Locale.ROOT);
        if (d.endsWith(".")) {
            d = d.substring(0, d.length() - 1);
        }
        String[] labels = d.split("\\.", -1);
        if (labels.length < 2 || d.length() > 253) {
            throw ApiException.badRequest("domain must be a host name with at least two labels, e.g. www.example.com");
        }
        for (String l : labels) {
            if (!LABEL.matcher(l).matches()) {
                throw ApiException.badRequest(
                        "domain must be a host name: labels of letters, digits and inner hyphens, 1 to 63 characters each");
            }
        }
        if (labels[labels.length - 1].matches("\\d+")) {
            throw ApiException.badRequest("domain must be a host name, not an IP address");
        }
        String apps = routes.appsDomain();
        if (d.equals(apps) || d.endsWith("." + apps)) {
            throw ApiException.badRequest("names under " + apps + " are the services' own; add a domain of yours");
        }
        return d;
    }

    private Map<String, Object> view(Domain d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", d.id());
        m.put("service_id", d.serviceId());
        m.put("domain", d.domain());
        m.put("status", d.status());
        m.put("verified_by", d.verifiedBy());
        m.put("verified_at", d.verifiedAt() == null ? null : d.verifiedAt().toString());
        m.put("last_check", d.lastCheck());
        Map<String, Object> v = new LinkedHashMap<>();
        v.put(
                "http",
                Map.of(
                        "url",
                        "http://" + d.domain() + (challengePort == 80 ? "" : ":" + challengePort)
                                + DomainVerifier.CHALLENGE_PATH + d.token(),
                        "body",
                        d.token()));
        v.put(
                "dns",
                Map.of(
                        "type",
                        "TXT",
                        "name",
                        DomainVerifier.TXT_LABEL + "." + d.domain(),
                        "value",
                        DomainVerifier.TXT_PREFIX + d.token()));
        m.put("verification", v);
        m.put("ssl", certificates.ssl(d.id()).view(Instant.now()));
        m.put("created_at", d.createdAt().toString());
        return m;
    }

    /** The JSON these routes take and answer, for the API reference ({@link JsonShape}). */
    static final class DomainJson {

        private DomainJson() {}

        record Add(String domain) {}

        /** {@code method}: "http" or "dns"; without it (or without a body) both are tried. */
        record Verify(String method) {}

        record HttpChallenge(String url, String body) {}

        record DnsChallenge(String type, String name, String value) {}

        /** How to prove the domain: serve {@code http.body} at {@code http.url}, or publish the TXT record. */
        record Verification(HttpChallenge http, DnsChallenge dns) {}

        /** {@link Certificates.Ssl#view}: {@code status} none, pending, active, expired or failed. */
        record Ssl(
                String status,
                @JsonProperty("expires_at") Instant expiresAt,
                String issuer,
                String error,
                @JsonProperty("retry_at") Instant retryAt) {}

        /** {@code status}: pending or verified; {@code verified_by}: http or dns. */
        record View(
                String id,
                @JsonProperty("service_id") String serviceId,
                String domain,
                String status,
                @JsonProperty("verified_by") String verifiedBy,
                @JsonProperty("verified_at") Instant verifiedAt,
                @JsonProperty("last_check") String lastCheck,
                Verification verification,
                Ssl ssl,
                @JsonProperty("created_at") Instant createdAt) {}

        record One(View domain) {}

        record Page(List<View> domains) {}

        record Checked(boolean verified, String detail, View domain) {}

        record Removed(boolean success) {}
    }
}
