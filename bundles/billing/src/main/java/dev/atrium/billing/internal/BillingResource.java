package dev.atrium.billing.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.billing.api.BillingGate.Decision;
import dev.atrium.billing.api.BillingProvider;
import dev.atrium.billing.api.BillingProvider.Invoice;
import dev.atrium.billing.api.Meters;
import dev.atrium.billing.internal.Accounts.Account;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NotJson;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.sql.DataSource;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /api/billing}: the caller's plan, credit and gate, the month's usage, checkout for a subscription or a
 * top-up, the provider's portal, and invoices. Billing is the Principal's own account data: reading needs
 * {@code account:read}, a change needs a full-scope token. Usage is kept whatever the provider; everything that
 * needs the provider answers {@code BILLING_NOT_CONFIGURED} without one.
 */
@Component(service = BillingResource.class)
@KernelResource
@Path("/api/billing")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class BillingResource {

    private static final Logger LOG = LoggerFactory.getLogger(BillingResource.class);
    private static final String INVOICE_NOT_FOUND = "invoice not found";

    private final BillingSettings settings;
    private final ProviderChoice choice;
    private final Accounts accounts;
    private final Gate gate;
    private final InvoiceDocuments documents;
    private final PrincipalDirectory principals;
    private final PublicUrls urls;
    private final Sql sql;

    @Activate
    public BillingResource(
            @Reference BillingSettings settings,
            @Reference ProviderChoice choice,
            @Reference Accounts accounts,
            @Reference Gate gate,
            @Reference InvoiceDocuments documents,
            @Reference PrincipalDirectory principals,
            @Reference PublicUrls urls,
            @Reference DataSource dataSource) {
        this.settings = settings;
        this.choice = choice;
        this.accounts = accounts;
        this.gate = gate;
        this.documents = documents;
        this.principals = principals;
        this.urls = urls;
        this.sql = new Sql(dataSource);
    }

    @RequiresScope("account:read")
    @GET
    @JsonShape(BillingJson.OneBilling.class)
    public Map<String, Object> billing(@Context SecurityContext sc) {
        String principal = Caller.from(sc).principalId();
        String message = "";
        boolean configured = false;
        if (!settings.billing()) {
            message = "billing is not configured on this server: nothing is metered against a plan";
        } else {
            try {
                choice.require();
                configured = true;
            } catch (ApiException e) {
                message = e.getMessage();
            }
        }
        if (!settings.plansError.isEmpty()) {
            message = (message.isEmpty() ? "" : message + "; ") + "the plans are misconfigured: " + settings.plansError;
        }
        Optional<Account> account = settings.billing() ? accounts.of(principal, settings.provider) : Optional.empty();
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("provider", choice.name());
        b.put("configured", configured);
        b.put("message", message);
        b.put("customer", account.map(a -> a.customerId() != null).orElse(false));
        b.put(
                "subscription",
                account.filter(a -> !a.subscriptionStatus().isEmpty())
                        .map(a -> {
                            Map<String, Object> s = new LinkedHashMap<>();
                            s.put("status", a.subscriptionStatus());
                            s.put(
                                    "plan",
                                    settings.planOfPrice(a.priceId())
                                            .map(BillingResource::plan)
                                            .orElse(null));
                            s.put(
                                    "period_end",
                                    a.periodEnd() == null ? null : a.periodEnd().toString());
                            return s;
                        })
                        .orElse(null));
        b.put(
                "credit",
                Map.of(
                        "amount_minor", account.map(Account::creditMinor).orElse(0L),
                        "currency",
                                account.map(Account::currency)
                                        .filter(c -> !c.isEmpty())
                                        .orElse(settings.topUpCurrency)));
        b.put("plans", settings.plans.stream().map(BillingResource::plan).toList());
        b.put(
                "top_up",
                Map.of(
                        "currency", settings.topUpCurrency,
                        "minimum", settings.topUpMinimum,
                        "maximum", settings.topUpMaximum));
        Map<String, Object> gates = new TreeMap<>();
        for (String meter : new TreeSet<>(Meters.all())) {
            Decision d = configured ? gate.decide(principal, meter) : Decision.allow(meter);
            gates.put(meter, Map.of("allowed", d.allowed(), "reason", d.reason()));
        }
        b.put("gate", gates);
        return Map.of("billing", b);
    }

    private static Map<String, Object> plan(BillingSettings.Plan p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", p.id());
        m.put("name", p.name());
        m.put("price", p.price().isEmpty() ? null : p.price());
        m.put("limits", p.limits());
        return m;
    }

    @RequiresScope("account:read")
    @GET
    @Path("usage")
    @JsonShape(BillingJson.OneUsage.class)
    public Map<String, Object> usage(@Context SecurityContext sc) {
        String principal = Caller.from(sc).principalId();
        Instant start = Instant.now()
                .atOffset(ZoneOffset.UTC)
                .withDayOfMonth(1)
                .toLocalDate()
                .atStartOfDay()
                .toInstant(ZoneOffset.UTC);
        Instant end = start.atOffset(ZoneOffset.UTC).plusMonths(1).toInstant();
        record Row(String meter, String space, String dimension, long quantity) {}
        List<Row> rows = sql.list(
                "SELECT meter, space_id, dimension, sum(q)::bigint AS q FROM ("
                        + " SELECT meter, space_id, dimension, quantity AS q FROM billing_usage_hours"
                        + " WHERE principal_id = ? AND hour >= " + UsageLedger.MONTH_START
                        + " UNION ALL SELECT meter, space_id, dimension, quantity FROM billing_usage_events"
                        + " WHERE NOT aggregated AND principal_id = ? AND occurred_at >= " + UsageLedger.MONTH_START
                        + ") u GROUP BY meter, space_id, dimension ORDER BY meter, space_id, dimension",
                rs -> new Row(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4)),
                principal,
                principal);
        Map<String, Long> limits = limits(principal);
        Map<String, Map<String, Object>> meters = new TreeMap<>();
        for (Row r : rows) {
            Map<String, Object> m = meters.computeIfAbsent(r.meter(), k -> {
                Map<String, Object> fresh = new LinkedHashMap<>();
                fresh.put("meter", k);
                fresh.put("quantity", 0L);
                fresh.put("limit", limits.get(k));
                fresh.put("dimensions", new TreeMap<String, Long>());
                fresh.put("workspaces", new TreeMap<String, Long>());
                return fresh;
            });
            m.put("quantity", (Long) m.get("quantity") + r.quantity());
            if (!r.dimension().isEmpty()) {
                @SuppressWarnings("unchecked")
                Map<String, Long> d = (Map<String, Long>) m.get("dimensions");
                d.merge(r.dimension(), r.quantity(), Long::sum);
            }
            @SuppressWarnings("unchecked")
            Map<String, Long> w = (Map<String, Long>) m.get("workspaces");
            w.merge(r.space(), r.quantity(), Long::sum);
        }
        Map<String, Object> u = new LinkedHashMap<>();
        u.put("period_start", start.toString());
        u.put("period_end", end.toString());
        u.put("meters", new ArrayList<>(meters.values()));
        return Map.of("usage", u);
    }

    /** The monthly caps of the plan that applies to the Principal now. */
    private Map<String, Long> limits(String principal) {
        if (!settings.billing()) {
            return Map.of();
        }
        Optional<Account> account = accounts.of(principal, settings.provider);
        if (account.isPresent() && account.get().subscribed()) {
            return settings.planOfPrice(account.get().priceId())
                    .map(BillingSettings.Plan::limits)
                    .orElse(Map.of());
        }
        if (account.isPresent() && account.get().creditMinor() > 0) {
            return Map.of();
        }
        return settings.freePlan().map(BillingSettings.Plan::limits).orElse(Map.of());
    }

    @POST
    @Path("subscribe")
    @JsonShape(BillingJson.OneCheckout.class)
    public Response subscribe(
            @Context SecurityContext sc, @Context UriInfo uri, @JsonShape(BillingJson.Subscribe.class) JsonNode body) {
        NulText.reject(body);
        BillingProvider provider = choice.require();
        String principal = Caller.from(sc).principalId();
        String planId = body == null ? "" : body.path("plan").asText("");
        if (planId.isEmpty()) {
            throw ApiException.badRequest("plan is required: one of " + priced());
        }
        BillingSettings.Plan plan = settings.plan(planId)
                .filter(p -> !p.price().isEmpty())
                .orElseThrow(
                        () -> ApiException.badRequest("no plan " + planId + " to subscribe to; plans: " + priced()));
        Optional<Account> account = accounts.of(principal, provider.name());
        if (account.isPresent() && account.get().subscribed()) {
            throw ApiException.conflict(
                    "a subscription is already " + account.get().subscriptionStatus()
                            + ": change or cancel it in the customer portal (POST /api/billing/portal)");
        }
        return checkout(provider, principal, uri, true, plan.price(), 0);
    }

    private List<String> priced() {
        return settings.plans.stream()
                .filter(p -> !p.price().isEmpty())
                .map(BillingSettings.Plan::id)
                .toList();
    }

    @POST
    @Path("credits/checkout")
    @JsonShape(BillingJson.OneCheckout.class)
    public Response topUp(
            @Context SecurityContext sc,
            @Context UriInfo uri,
            @JsonShape(BillingJson.CreditCheckout.class) JsonNode body) {
        BillingProvider provider = choice.require();
        JsonNode amount = body == null ? null : body.get("amount");
        if (amount == null || !amount.canConvertToLong() || !amount.isIntegralNumber()) {
            throw ApiException.badRequest("amount is required: a whole number of " + settings.topUpCurrency
                    + " minor units (cents), from " + settings.topUpMinimum + " to " + settings.topUpMaximum);
        }
        long minor = amount.asLong();
        if (minor < settings.topUpMinimum || minor > settings.topUpMaximum) {
            throw ApiException.badRequest("amount must be from " + settings.topUpMinimum + " to "
                    + settings.topUpMaximum + " " + settings.topUpCurrency + " minor units (cents); it is " + minor);
        }
        return checkout(provider, Caller.from(sc).principalId(), uri, false, "", minor);
    }

    private Response checkout(
            BillingProvider provider, String principal, UriInfo uri, boolean subscription, String price, long minor) {
        String base = urls.base(uri.getBaseUri());
        try {
            String customer = accounts.customer(principal, provider);
            BillingProvider.Checkout c = provider.checkout(new BillingProvider.CheckoutRequest(
                    customer,
                    subscription,
                    price,
                    minor,
                    settings.topUpCurrency,
                    base + "/?billing=checkout-complete",
                    base + "/?billing=checkout-cancelled",
                    principal));
            return Response.status(201)
                    .entity(Map.of("checkout", Map.of("id", c.id(), "url", c.url())))
                    .build();
        } catch (IOException e) {
            throw unreachable(provider, e);
        }
    }

    static ApiException unreachable(BillingProvider provider, IOException e) {
        LOG.warn("the payment provider {} failed: {}", provider.name(), e.getMessage());
        return ApiException.unavailable("the payment provider " + provider.name() + " failed: " + e.getMessage());
    }

    @POST
    @Path("portal")
    @JsonShape(BillingJson.OnePortal.class)
    public Response portal(@Context SecurityContext sc, @Context UriInfo uri) {
        BillingProvider provider = choice.require();
        try {
            String customer = accounts.customer(Caller.from(sc).principalId(), provider);
            String url = provider.portal(customer, urls.base(uri.getBaseUri()) + "/");
            return Response.status(201)
                    .entity(Map.of("portal", Map.of("url", url)))
                    .build();
        } catch (IOException e) {
            throw unreachable(provider, e);
        }
    }

    @RequiresScope("account:read")
    @GET
    @Path("invoices")
    @JsonShape(BillingJson.Invoices.class)
    public Map<String, Object> invoices(@Context SecurityContext sc) {
        BillingProvider provider = choice.require();
        Optional<String> customer = customerOf(Caller.from(sc).principalId(), provider);
        if (customer.isEmpty()) {
            return Map.of("invoices", List.of());
        }
        try {
            return Map.of(
                    "invoices",
                    provider.invoices(customer.get(), 100).stream()
                            .map(BillingResource::invoice)
                            .toList());
        } catch (IOException e) {
            throw unreachable(provider, e);
        }
    }

    private Optional<String> customerOf(String principal, BillingProvider provider) {
        return accounts.of(principal, provider.name()).map(Account::customerId);
    }

    static Map<String, Object> invoice(Invoice i) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", i.id());
        m.put("number", i.number());
        m.put("status", i.status());
        m.put("currency", i.currency());
        m.put("amount_due", i.amountDueMinor());
        m.put("amount_paid", i.amountPaidMinor());
        m.put("created", i.created() == null ? null : i.created().toString());
        m.put("hosted_url", i.hostedUrl().isEmpty() ? null : i.hostedUrl());
        return m;
    }

    private Invoice owned(BillingProvider provider, String principal, String id) throws IOException {
        Optional<String> customer = customerOf(principal, provider);
        if (customer.isEmpty() || id.isEmpty() || id.length() > 200) {
            throw ApiException.notFound(INVOICE_NOT_FOUND);
        }
        // the provider is asked for this customer's invoice: another customer's id is the same 404 as a missing one
        return provider.invoice(customer.get(), id).orElseThrow(() -> ApiException.notFound(INVOICE_NOT_FOUND));
    }

    @RequiresScope("account:read")
    @GET
    @Path("invoices/{id}/pdf")
    @Produces({"application/pdf", MediaType.APPLICATION_JSON})
    @NotJson("application/pdf")
    public Response pdf(@Context SecurityContext sc, @PathParam("id") String id) {
        BillingProvider provider = choice.require();
        try {
            Invoice invoice = owned(provider, Caller.from(sc).principalId(), id);
            byte[] pdf = documents.pdf(provider, invoice);
            return Response.ok(pdf, "application/pdf")
                    .header(
                            "Content-Disposition",
                            "inline; filename=\"invoice-"
                                    + (invoice.number().isEmpty() ? invoice.id() : invoice.number())
                                            .replaceAll("[^A-Za-z0-9._-]", "_")
                                    + ".pdf\"")
                    .header("Cache-Control", "private, no-store")
                    .build();
        } catch (IOException e) {
            throw unreachable(provider, e);
        }
    }

    @POST
    @Path("invoices/{id}/send")
    @JsonShape(BillingJson.OneSent.class)
    public Response send(@Context SecurityContext sc, @PathParam("id") String id) {
        BillingProvider provider = choice.require();
        if (!documents.mailConfigured()) {
            throw new ApiException(
                    404,
                    "MAIL_NOT_CONFIGURED",
                    "mail is not configured on this server (ATRIUM_SMTP_HOST, ATRIUM_SMTP_FROM)");
        }
        String principal = Caller.from(sc).principalId();
        Invoice invoice;
        byte[] pdf;
        try {
            invoice = owned(provider, principal, id);
            pdf = documents.pdf(provider, invoice);
        } catch (IOException e) {
            throw unreachable(provider, e);
        }
        // only to the account's own address: the server never mails an invoice where the caller names
        String to = principals
                .get(principal)
                .map(PrincipalDirectory.Entry::email)
                .filter(e -> e != null && !e.isBlank())
                .orElse(invoice.customerEmail());
        if (to == null || to.isBlank()) {
            throw ApiException.conflict("the account has no email address to send the invoice to");
        }
        try {
            documents.mail(invoice, pdf, to);
        } catch (IOException e) {
            LOG.warn("mailing invoice {} failed: {}", invoice.id(), e.getMessage());
            throw ApiException.unavailable("the invoice could not be mailed: " + e.getMessage());
        }
        return Response.accepted(Map.of("sent", Map.of("invoice", invoice.id(), "to", to)))
                .build();
    }
}
