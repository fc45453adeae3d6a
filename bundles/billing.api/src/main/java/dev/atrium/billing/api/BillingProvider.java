package dev.atrium.billing.api;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A payment provider behind the billing port, registered as a service. The billing capability uses the one whose
 * {@link #name()} the operator chose ({@code ATRIUM_BILLING_PROVIDER}). Every method may block on the network;
 * {@link IOException} means the provider could not be reached or refused the call (its message says which, without
 * secrets).
 */
@ConsumerType
public interface BillingProvider {

    /** The name an operator chooses, e.g. {@code stripe}. */
    String name();

    /** Whether the provider has what it needs (keys); when not, {@link #missing()} says what to set. */
    boolean configured();

    /** What the operator must still set, e.g. {@code ATRIUM_STRIPE_SECRET_KEY}; empty when configured. */
    String missing();

    /**
     * Creates the provider's customer for a Principal. Called once per Principal; the billing capability keeps the
     * binding.
     *
     * @param idempotencyKey the same for a retried creation, so that a crash between the call and the binding's
     *                       write makes no second customer
     */
    String createCustomer(String principalId, String name, String email, String idempotencyKey) throws IOException;

    /** A hosted checkout page for a subscription to {@code priceId} or a one-off credit top-up. */
    Checkout checkout(CheckoutRequest request) throws IOException;

    /** A hosted customer portal session; its URL. */
    String portal(String customerId, String returnUrl) throws IOException;

    /** The customer's subscription, credit and open state as the provider holds them now. */
    AccountState account(String customerId) throws IOException;

    /** The customer's invoices, newest first. */
    List<Invoice> invoices(String customerId, int limit) throws IOException;

    /** One invoice of the customer, or empty when it has none of that id. */
    Optional<Invoice> invoice(String customerId, String invoiceId) throws IOException;

    /** The provider's PDF of an invoice, or empty when the provider has none (the caller renders one). */
    Optional<InputStream> invoicePdf(Invoice invoice) throws IOException;

    /**
     * Reports usage of a meter. Sending the same {@code idempotencyKey} again must not count twice: the caller
     * repeats a report it cannot prove was received.
     */
    void reportUsage(String customerId, String meter, long quantity, Instant timestamp, String idempotencyKey)
            throws IOException;

    /**
     * Checks a webhook's signature and freshness before anything of it is used, then maps it.
     *
     * @param payload the exact bytes received
     * @param headers request headers, names in lower case
     * @throws WebhookRejected when the signature is wrong or missing, or the event is outside the tolerance window
     */
    WebhookEvent verify(byte[] payload, Map<String, String> headers) throws WebhookRejected;

    /**
     * @param customerId    the provider's customer
     * @param subscription  true for a subscription to {@code priceId}; false for a credit top-up of
     *                      {@code amountMinor} (in the currency's minor unit)
     * @param priceId       the provider's price of the plan (subscription only)
     * @param amountMinor   the top-up amount (top-up only)
     * @param currency      ISO 4217 in lower case (top-up only)
     * @param successUrl    where the payer returns after paying
     * @param cancelUrl     where the payer returns after giving up
     * @param principalId   the Principal, kept by the provider as the session's reference
     */
    record CheckoutRequest(
            String customerId,
            boolean subscription,
            String priceId,
            long amountMinor,
            String currency,
            String successUrl,
            String cancelUrl,
            String principalId) {}

    /** A checkout session: its id and the page to send the payer to. */
    record Checkout(String id, String url) {}

    /**
     * What the provider holds of a customer.
     *
     * @param subscriptionStatus the current subscription's status ({@code active}, {@code trialing}, {@code past_due},
     *                           {@code unpaid}, {@code canceled}, {@code incomplete} …), or empty without one
     * @param priceId            the current subscription's price, or empty
     * @param periodEnd          the end of the current period, or null
     * @param creditMinor        prepaid credit left, in the currency's minor unit
     * @param currency           the customer's currency, or empty
     */
    record AccountState(
            String subscriptionStatus, String priceId, Instant periodEnd, long creditMinor, String currency) {}

    /**
     * An invoice.
     *
     * @param pdfUrl where the provider serves its PDF, or empty
     */
    record Invoice(
            String id,
            String number,
            String status,
            String currency,
            long amountDueMinor,
            long amountPaidMinor,
            Instant created,
            String pdfUrl,
            String hostedUrl,
            String customerEmail) {}

    /**
     * A verified webhook event.
     *
     * @param id         the provider's event id (a replay has the same)
     * @param type       the provider's event type
     * @param created    when the provider made it
     * @param customerId the customer it concerns, or empty
     * @param kind       what it means to the gate
     * @param objectId   the object it is about (checkout session, invoice, subscription)
     * @param creditMinor for a completed top-up checkout: the amount paid, to credit; else 0
     */
    record WebhookEvent(
            String id, String type, Instant created, String customerId, Kind kind, String objectId, long creditMinor) {

        /** The kinds the gate acts on; the rest are stored and otherwise ignored. */
        public enum Kind {
            /** A subscription checkout completed. */
            SUBSCRIPTION_CHECKOUT_COMPLETED,
            /** A credit top-up checkout completed and was paid. */
            TOPUP_CHECKOUT_COMPLETED,
            /** A subscription was created, changed or ended. */
            SUBSCRIPTION_CHANGED,
            /** An invoice was paid. */
            INVOICE_PAID,
            /** An invoice's payment failed. */
            INVOICE_PAYMENT_FAILED,
            /** The customer's credit balance changed. */
            CREDIT_CHANGED,
            /** Anything else. */
            OTHER
        }
    }

    /** A webhook whose signature or freshness failed; nothing of it may be used. */
    final class WebhookRejected extends Exception {
        private static final long serialVersionUID = 1L;

        public WebhookRejected(String message) {
            super(message);
        }
    }

    /**
     * Adds prepaid credit to a customer after a paid top-up. Must be idempotent by {@code idempotencyKey}.
     */
    void addCredit(String customerId, long amountMinor, String currency, String idempotencyKey) throws IOException;
}
