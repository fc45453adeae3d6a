package dev.atrium.billing.stripe.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.stripe.StripeClient;
import com.stripe.exception.SignatureVerificationException;
import com.stripe.exception.StripeException;
import com.stripe.model.Customer;
import com.stripe.model.Event;
import com.stripe.model.StripeCollection;
import com.stripe.model.Subscription;
import com.stripe.model.SubscriptionItem;
import com.stripe.net.RequestOptions;
import com.stripe.net.Webhook;
import com.stripe.param.CustomerBalanceTransactionCreateParams;
import com.stripe.param.CustomerCreateParams;
import com.stripe.param.InvoiceListParams;
import com.stripe.param.SubscriptionListParams;
import com.stripe.param.billing.MeterEventCreateParams;
import com.stripe.param.checkout.SessionCreateParams;
import dev.atrium.billing.api.BillingProvider;
import dev.atrium.kernel.api.JsonMappers;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Stripe behind the billing port, through the official client: customers, Checkout (a subscription, or a one-off
 * payment for credit that becomes a negative customer balance), the Billing Portal, invoices, usage as Billing Meter
 * events, and {@link Webhook#constructEvent} for webhook signatures and their tolerance. Every call that creates
 * something carries an idempotency key, so that a retry after a crash creates nothing twice.
 */
@Component(
        service = BillingProvider.class,
        configurationPid = "dev.atrium.billing.stripe",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = StripeBilling.Config.class)
public class StripeBilling implements BillingProvider {

    private static final ObjectMapper JSON = JsonMappers.create();
    /** Subscription states that hold the customer's current subscription, best first. */
    private static final List<String> CURRENT =
            List.of("active", "trialing", "past_due", "unpaid", "paused", "incomplete");

    @ObjectClassDefinition(name = "Atrium billing: Stripe")
    public @interface Config {
        @AttributeDefinition(description = "Stripe secret API key (ATRIUM_STRIPE_SECRET_KEY)")
        String secretKey() default "";

        @AttributeDefinition(description = "Signing secret of the webhook endpoint (ATRIUM_STRIPE_WEBHOOK_SECRET)")
        String webhookSecret() default "";

        @AttributeDefinition(description = "Stripe's API base URL (ATRIUM_STRIPE_API_BASE)")
        String apiBase() default "https://api.stripe.com";

        @AttributeDefinition(
                description = "Seconds a webhook's signature stays valid (ATRIUM_STRIPE_WEBHOOK_TOLERANCE_S)")
        long toleranceSeconds() default 300;

        @AttributeDefinition(
                description = "Billing Meter event names by meter, meter=event_name separated by commas; a meter not"
                        + " named reports under its own name (ATRIUM_STRIPE_METER_EVENTS)")
        String meterEvents() default "";
    }

    private final String secretKey;
    private final String webhookSecret;
    private final String apiBase;
    private final long toleranceSeconds;
    private final Map<String, String> meterEvents;
    private final StripeClient client;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Activate
    public StripeBilling(Config config) {
        secretKey = config.secretKey().trim();
        webhookSecret = config.webhookSecret().trim();
        String base = config.apiBase().trim();
        apiBase = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        toleranceSeconds = Math.max(1, config.toleranceSeconds());
        meterEvents = parseMeterEvents(config.meterEvents());
        client = StripeClient.builder()
                .setApiKey(secretKey.isEmpty() ? "sk_unset" : secretKey)
                .setApiBase(apiBase)
                .setFilesBase(apiBase)
                .setMeterEventsBase(apiBase)
                .setConnectBase(apiBase)
                .setConnectTimeout(10_000)
                .setReadTimeout(30_000)
                .setMaxNetworkRetries(2)
                .build();
    }

    static Map<String, String> parseMeterEvents(String text) {
        Map<String, String> out = new HashMap<>();
        for (String pair : text.split(",")) {
            int eq = pair.indexOf('=');
            if (eq > 0 && eq < pair.length() - 1) {
                out.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
            }
        }
        return Map.copyOf(out);
    }

    @Override
    public String name() {
        return "stripe";
    }

    @Override
    public boolean configured() {
        return missing().isEmpty();
    }

    @Override
    public String missing() {
        if (secretKey.isEmpty() && webhookSecret.isEmpty()) {
            return "ATRIUM_STRIPE_SECRET_KEY and ATRIUM_STRIPE_WEBHOOK_SECRET";
        }
        if (secretKey.isEmpty()) {
            return "ATRIUM_STRIPE_SECRET_KEY";
        }
        return webhookSecret.isEmpty() ? "ATRIUM_STRIPE_WEBHOOK_SECRET" : "";
    }

    private static RequestOptions key(String idempotencyKey) {
        return RequestOptions.builder().setIdempotencyKey(idempotencyKey).build();
    }

    /** Stripe's failure as the port's: what Stripe said, never the key. */
    private static IOException failed(String what, StripeException e) {
        String said = e.getStripeError() != null && e.getStripeError().getMessage() != null
                ? e.getStripeError().getMessage()
                : e.getMessage();
        return new IOException(
                what + ": " + (e.getStatusCode() == null ? "" : "HTTP " + e.getStatusCode() + ", ") + said, e);
    }

    @Override
    public String createCustomer(String principalId, String name, String email, String idempotencyKey)
            throws IOException {
        CustomerCreateParams.Builder p = CustomerCreateParams.builder().putMetadata("atrium_principal", principalId);
        if (name != null && !name.isBlank()) {
            p.setName(name);
        }
        if (email != null && !email.isBlank()) {
            p.setEmail(email);
        }
        try {
            return client.v1()
                    .customers()
                    .create(p.build(), key("atrium-customer-" + idempotencyKey))
                    .getId();
        } catch (StripeException e) {
            throw failed("creating the customer failed", e);
        }
    }

    @Override
    public Checkout checkout(CheckoutRequest r) throws IOException {
        SessionCreateParams.Builder p = SessionCreateParams.builder()
                .setCustomer(r.customerId())
                .setSuccessUrl(r.successUrl())
                .setCancelUrl(r.cancelUrl())
                .setClientReferenceId(r.principalId());
        if (r.subscription()) {
            p.setMode(SessionCreateParams.Mode.SUBSCRIPTION)
                    .putMetadata("atrium_kind", "subscription")
                    .addLineItem(SessionCreateParams.LineItem.builder()
                            .setPrice(r.priceId())
                            .setQuantity(1L)
                            .build());
        } else {
            p.setMode(SessionCreateParams.Mode.PAYMENT)
                    .putMetadata("atrium_kind", "credit_topup")
                    .addLineItem(SessionCreateParams.LineItem.builder()
                            .setQuantity(1L)
                            .setPriceData(SessionCreateParams.LineItem.PriceData.builder()
                                    .setCurrency(r.currency())
                                    .setUnitAmount(r.amountMinor())
                                    .setProductData(SessionCreateParams.LineItem.PriceData.ProductData.builder()
                                            .setName("Atrium credit")
                                            .build())
                                    .build())
                            .build());
        }
        try {
            com.stripe.model.checkout.Session s =
                    client.v1().checkout().sessions().create(p.build());
            return new Checkout(s.getId(), s.getUrl());
        } catch (StripeException e) {
            throw failed("creating the checkout session failed", e);
        }
    }

    @Override
    public String portal(String customerId, String returnUrl) throws IOException {
        try {
            return client.v1()
                    .billingPortal()
                    .sessions()
                    .create(com.stripe.param.billingportal.SessionCreateParams.builder()
                            .setCustomer(customerId)
                            .setReturnUrl(returnUrl)
                            .build())
                    .getUrl();
        } catch (StripeException e) {
            throw failed("creating the portal session failed", e);
        }
    }

    @Override
    public AccountState account(String customerId) throws IOException {
        try {
            Customer customer = client.v1().customers().retrieve(customerId);
            long balance = customer.getBalance() == null ? 0 : customer.getBalance();
            StripeCollection<Subscription> subs = client.v1()
                    .subscriptions()
                    .list(SubscriptionListParams.builder()
                            .setCustomer(customerId)
                            .setStatus(SubscriptionListParams.Status.ALL)
                            .setLimit(20L)
                            .build());
            Optional<Subscription> current = subs.getData().stream()
                    .filter(s -> CURRENT.contains(s.getStatus()))
                    .min(Comparator.comparingInt((Subscription s) -> CURRENT.indexOf(s.getStatus()))
                            .thenComparing(s -> -(s.getCreated() == null ? 0 : s.getCreated())));
            String status = current.map(Subscription::getStatus).orElse("");
            String price = "";
            Instant periodEnd = null;
            if (current.isPresent()
                    && current.get().getItems() != null
                    && !current.get().getItems().getData().isEmpty()) {
                SubscriptionItem item = current.get().getItems().getData().get(0);
                price = item.getPrice() == null ? "" : item.getPrice().getId();
                periodEnd =
                        item.getCurrentPeriodEnd() == null ? null : Instant.ofEpochSecond(item.getCurrentPeriodEnd());
            }
            String currency = customer.getCurrency() == null ? "" : customer.getCurrency();
            // a negative balance is credit the customer holds
            return new AccountState(status, price, periodEnd, Math.max(0, -balance), currency);
        } catch (StripeException e) {
            throw failed("reading the customer failed", e);
        }
    }

    @Override
    public List<Invoice> invoices(String customerId, int limit) throws IOException {
        try {
            return client
                    .v1()
                    .invoices()
                    .list(InvoiceListParams.builder()
                            .setCustomer(customerId)
                            .setLimit((long) Math.max(1, Math.min(100, limit)))
                            .build())
                    .getData()
                    .stream()
                    .map(StripeBilling::invoice)
                    .toList();
        } catch (StripeException e) {
            throw failed("listing invoices failed", e);
        }
    }

    private static Invoice invoice(com.stripe.model.Invoice i) {
        return new Invoice(
                i.getId(),
                i.getNumber() == null ? "" : i.getNumber(),
                i.getStatus() == null ? "" : i.getStatus(),
                i.getCurrency() == null ? "" : i.getCurrency(),
                i.getAmountDue() == null ? 0 : i.getAmountDue(),
                i.getAmountPaid() == null ? 0 : i.getAmountPaid(),
                i.getCreated() == null ? null : Instant.ofEpochSecond(i.getCreated()),
                i.getInvoicePdf() == null ? "" : i.getInvoicePdf(),
                i.getHostedInvoiceUrl() == null ? "" : i.getHostedInvoiceUrl(),
                i.getCustomerEmail() == null ? "" : i.getCustomerEmail());
    }

    @Override
    public Optional<Invoice> invoice(String customerId, String invoiceId) throws IOException {
        if (!invoiceId.matches("[A-Za-z0-9_]{1,100}")) {
            return Optional.empty();
        }
        try {
            com.stripe.model.Invoice i = client.v1().invoices().retrieve(invoiceId);
            return customerId.equals(i.getCustomer()) ? Optional.of(invoice(i)) : Optional.empty();
        } catch (com.stripe.exception.InvalidRequestException e) {
            if (e.getStatusCode() != null && e.getStatusCode() == 404) {
                return Optional.empty();
            }
            throw failed("reading the invoice failed", e);
        } catch (StripeException e) {
            throw failed("reading the invoice failed", e);
        }
    }

    @Override
    public Optional<InputStream> invoicePdf(Invoice invoice) throws IOException {
        if (invoice.pdfUrl().isEmpty()) {
            return Optional.empty();
        }
        URI uri = URI.create(invoice.pdfUrl());
        if (!trustedPdfHost(uri)) {
            throw new IOException("the invoice PDF is served from an unexpected address: " + uri.getHost());
        }
        try {
            HttpResponse<InputStream> r = http.send(
                    HttpRequest.newBuilder(uri)
                            .timeout(Duration.ofSeconds(30))
                            .header("Authorization", "Bearer " + secretKey)
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            if (r.statusCode() != 200) {
                r.body().close();
                throw new IOException("Stripe answered " + r.statusCode() + " for the invoice PDF");
            }
            return Optional.of(r.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while fetching the invoice PDF", e);
        }
    }

    /** Stripe's own hosts over HTTPS, or the configured API base's host (a test's Stripe on loopback). */
    boolean trustedPdfHost(URI uri) {
        String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
        URI base = URI.create(apiBase);
        if (host.equals(base.getHost())
                && uri.getScheme().equals(base.getScheme())
                && uri.getPort() == base.getPort()) {
            return true;
        }
        return "https".equals(uri.getScheme()) && (host.equals("stripe.com") || host.endsWith(".stripe.com"));
    }

    @Override
    public void reportUsage(String customerId, String meter, long quantity, Instant timestamp, String idempotencyKey)
            throws IOException {
        try {
            client.v1()
                    .billing()
                    .meterEvents()
                    .create(
                            MeterEventCreateParams.builder()
                                    .setEventName(meterEvents.getOrDefault(meter, meter))
                                    .setIdentifier(idempotencyKey)
                                    .setTimestamp(timestamp.getEpochSecond())
                                    .putPayload("stripe_customer_id", customerId)
                                    .putPayload("value", Long.toString(quantity))
                                    .build(),
                            key("atrium-usage-" + idempotencyKey));
        } catch (StripeException e) {
            // past the idempotency key's 24 hours, Stripe refuses an identifier it already has: it was counted
            if (e.getStripeError() != null
                    && e.getStripeError().getMessage() != null
                    && e.getStripeError().getMessage().contains("identifier")
                    && e.getStripeError().getMessage().contains("already")) {
                return;
            }
            throw failed("reporting usage failed", e);
        }
    }

    @Override
    public void addCredit(String customerId, long amountMinor, String currency, String idempotencyKey)
            throws IOException {
        try {
            client.v1()
                    .customers()
                    .balanceTransactions()
                    .create(
                            customerId,
                            CustomerBalanceTransactionCreateParams.builder()
                                    .setAmount(-amountMinor)
                                    .setCurrency(currency)
                                    .setDescription("Atrium credit top-up")
                                    .build(),
                            key(idempotencyKey));
        } catch (StripeException e) {
            throw failed("adding credit failed", e);
        }
    }

    private static final Set<String> SUBSCRIPTION_EVENTS = Set.of(
            "customer.subscription.created",
            "customer.subscription.updated",
            "customer.subscription.deleted",
            "customer.subscription.paused",
            "customer.subscription.resumed");

    @Override
    public WebhookEvent verify(byte[] payload, Map<String, String> headers) throws WebhookRejected {
        String signature = headers.get("stripe-signature");
        if (signature == null || signature.isBlank()) {
            throw new WebhookRejected("the Stripe-Signature header is missing");
        }
        Event event;
        try {
            event = Webhook.constructEvent(
                    new String(payload, StandardCharsets.UTF_8), signature, webhookSecret, toleranceSeconds);
        } catch (SignatureVerificationException e) {
            throw new WebhookRejected(e.getMessage());
        } catch (RuntimeException e) {
            throw new WebhookRejected("the event is not Stripe's JSON");
        }
        JsonNode object;
        try {
            object = JSON.readTree(payload).path("data").path("object");
        } catch (IOException e) {
            throw new WebhookRejected("the event is not JSON");
        }
        String type = event.getType() == null ? "" : event.getType();
        String customer =
                object.path("customer").isTextual() ? object.path("customer").asText() : "";
        WebhookEvent.Kind kind = WebhookEvent.Kind.OTHER;
        long credit = 0;
        switch (type) {
            case "checkout.session.completed", "checkout.session.async_payment_succeeded" -> {
                String mode = object.path("mode").asText("");
                String atrium = object.path("metadata").path("atrium_kind").asText("");
                if (mode.equals("subscription")) {
                    kind = WebhookEvent.Kind.SUBSCRIPTION_CHECKOUT_COMPLETED;
                } else if (mode.equals("payment")
                        && atrium.equals("credit_topup")
                        && object.path("payment_status").asText("").equals("paid")) {
                    kind = WebhookEvent.Kind.TOPUP_CHECKOUT_COMPLETED;
                    credit = object.path("amount_total").asLong(0);
                }
            }
            case "invoice.paid", "invoice.payment_succeeded" -> kind = WebhookEvent.Kind.INVOICE_PAID;
            case "invoice.payment_failed" -> kind = WebhookEvent.Kind.INVOICE_PAYMENT_FAILED;
            case "customer.updated" -> {
                kind = WebhookEvent.Kind.CREDIT_CHANGED;
                customer = object.path("id").asText("");
            }
            case "customer.balance_transaction.created" -> kind = WebhookEvent.Kind.CREDIT_CHANGED;
            default -> {
                if (SUBSCRIPTION_EVENTS.contains(type)) {
                    kind = WebhookEvent.Kind.SUBSCRIPTION_CHANGED;
                }
            }
        }
        return new WebhookEvent(
                event.getId(),
                type,
                Instant.ofEpochSecond(event.getCreated() == null ? 0 : event.getCreated()),
                customer,
                kind,
                object.path("id").asText(""),
                credit);
    }
}
