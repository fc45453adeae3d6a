package dev.atrium.billing.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** The JSON the billing routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class BillingJson {

    private BillingJson() {}

    record Plan(String id, String name, String price, Map<String, Long> limits) {}

    record Subscription(
            String status,
            Plan plan,
            @JsonProperty("period_end") Instant periodEnd) {}

    record Credit(@JsonProperty("amount_minor") long amountMinor, String currency) {}

    record GateAnswer(boolean allowed, String reason) {}

    record TopUp(String currency, long minimum, long maximum) {}

    /**
     * The caller's billing: the provider ({@code none} when billing is off), whether it is configured (and what it
     * lacks), the subscription and credit last read from the provider, the plans on offer, and the gate per meter.
     */
    record Billing(
            String provider,
            boolean configured,
            String message,
            boolean customer,
            Subscription subscription,
            Credit credit,
            List<Plan> plans,
            @JsonProperty("top_up") TopUp topUp,
            Map<String, GateAnswer> gate) {}

    record OneBilling(Billing billing) {}

    record MeterUsage(
            String meter, long quantity, Long limit, Map<String, Long> dimensions, Map<String, Long> workspaces) {}

    /** The current calendar month (UTC), per meter: all of the caller's workspaces, and split by dimension and workspace. */
    record Usage(
            @JsonProperty("period_start") Instant periodStart,
            @JsonProperty("period_end") Instant periodEnd,
            List<MeterUsage> meters) {}

    record OneUsage(Usage usage) {}

    /** {@code plan}: the id of a plan with a price. */
    record Subscribe(String plan) {}

    /** {@code amount}: in the top-up currency's minor unit (cents), between the server's minimum and maximum. */
    record CreditCheckout(long amount) {}

    record Checkout(String id, String url) {}

    record OneCheckout(Checkout checkout) {}

    record Portal(String url) {}

    record OnePortal(Portal portal) {}

    record Invoice(
            String id,
            String number,
            String status,
            String currency,
            @JsonProperty("amount_due") long amountDue,
            @JsonProperty("amount_paid") long amountPaid,
            Instant created,
            @JsonProperty("hosted_url") String hostedUrl) {}

    record Invoices(List<Invoice> invoices) {}

    record Sent(String invoice, String to) {}

    record OneSent(Sent sent) {}

    record Received(boolean received, String event) {}
}
