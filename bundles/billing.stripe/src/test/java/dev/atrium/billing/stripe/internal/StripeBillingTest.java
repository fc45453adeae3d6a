package dev.atrium.billing.stripe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.billing.api.BillingProvider.WebhookEvent;
import dev.atrium.billing.api.BillingProvider.WebhookRejected;
import java.lang.annotation.Annotation;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class StripeBillingTest {

    private static StripeBilling stripe(String key, String secret) {
        return new StripeBilling(new StripeBilling.Config() {
            @Override
            public Class<? extends Annotation> annotationType() {
                return StripeBilling.Config.class;
            }

            @Override
            public String secretKey() {
                return key;
            }

            @Override
            public String webhookSecret() {
                return secret;
            }

            @Override
            public String apiBase() {
                return "http://127.0.0.1:9";
            }

            @Override
            public long toleranceSeconds() {
                return 300;
            }

            @Override
            public String meterEvents() {
                return "run_tokens_in=tokens_in, vector_queries=vq";
            }
        });
    }

    private static String signed(String payload, long t, String secret) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return "t=" + t + ",v1="
                + HexFormat.of().formatHex(mac.doFinal((t + "." + payload).getBytes(StandardCharsets.UTF_8)));
    }

    private static String event(String type, String object) {
        return "{\"id\":\"evt_1\",\"object\":\"event\",\"created\":1764547200,\"type\":\"" + type
                + "\",\"data\":{\"object\":" + object + "}}";
    }

    @Test
    void itSaysWhichKeysAreMissing() {
        assertEquals(
                "ATRIUM_STRIPE_SECRET_KEY and ATRIUM_STRIPE_WEBHOOK_SECRET",
                stripe("", "").missing());
        assertEquals("ATRIUM_STRIPE_WEBHOOK_SECRET", stripe("sk", "").missing());
        assertFalse(stripe("", "whsec").configured());
        assertTrue(stripe("sk", "whsec").configured());
        assertEquals(
                Map.of("run_tokens_in", "tokens_in", "vector_queries", "vq"),
                StripeBilling.parseMeterEvents("run_tokens_in=tokens_in, vector_queries=vq,bad,=x"));
    }

    @Test
    void aSignedTopUpCheckoutIsCreditAndAFailedInvoiceClosesTheGate() throws Exception {
        StripeBilling s = stripe("sk", "whsec_t");
        long now = Instant.now().getEpochSecond();
        String topUp = event(
                "checkout.session.completed",
                "{\"id\":\"cs_1\",\"object\":\"checkout.session\",\"mode\":\"payment\",\"customer\":\"cus_1\","
                        + "\"payment_status\":\"paid\",\"amount_total\":1500,\"metadata\":{\"atrium_kind\":\"credit_topup\"}}");
        WebhookEvent e = s.verify(
                topUp.getBytes(StandardCharsets.UTF_8), Map.of("stripe-signature", signed(topUp, now, "whsec_t")));
        assertEquals(WebhookEvent.Kind.TOPUP_CHECKOUT_COMPLETED, e.kind());
        assertEquals(1500, e.creditMinor());
        assertEquals("cus_1", e.customerId());
        assertEquals("cs_1", e.objectId());

        String failed =
                event("invoice.payment_failed", "{\"id\":\"in_1\",\"object\":\"invoice\",\"customer\":\"cus_2\"}");
        assertEquals(
                WebhookEvent.Kind.INVOICE_PAYMENT_FAILED,
                s.verify(
                                failed.getBytes(StandardCharsets.UTF_8),
                                Map.of("stripe-signature", signed(failed, now, "whsec_t")))
                        .kind());
        String customer = event("customer.updated", "{\"id\":\"cus_3\",\"object\":\"customer\"}");
        assertEquals(
                "cus_3",
                s.verify(
                                customer.getBytes(StandardCharsets.UTF_8),
                                Map.of("stripe-signature", signed(customer, now, "whsec_t")))
                        .customerId());
    }

    @Test
    void aWrongMissingOrStaleSignatureIsRefused() throws Exception {
        StripeBilling s = stripe("sk", "whsec_t");
        String e = event("invoice.paid", "{\"id\":\"in_1\",\"object\":\"invoice\",\"customer\":\"cus_1\"}");
        byte[] bytes = e.getBytes(StandardCharsets.UTF_8);
        long now = Instant.now().getEpochSecond();
        assertThrows(WebhookRejected.class, () -> s.verify(bytes, Map.of()));
        assertThrows(WebhookRejected.class, () -> s.verify(bytes, Map.of("stripe-signature", signed(e, now, "other"))));
        assertThrows(
                WebhookRejected.class,
                () -> s.verify(bytes, Map.of("stripe-signature", signed(e, now - 301, "whsec_t"))));
        assertThrows(
                WebhookRejected.class,
                () -> s.verify(
                        e.replace("cus_1", "cus_9").getBytes(StandardCharsets.UTF_8),
                        Map.of("stripe-signature", signed(e, now, "whsec_t"))));
    }

    @Test
    void invoicePdfsAreFetchedOnlyFromStripeOrTheConfiguredApi() {
        StripeBilling s = stripe("sk", "whsec_t");
        assertTrue(s.trustedPdfHost(URI.create("https://pay.stripe.com/invoice/x/pdf")));
        assertTrue(s.trustedPdfHost(URI.create("http://127.0.0.1:9/files/x")));
        assertFalse(s.trustedPdfHost(URI.create("http://pay.stripe.com/invoice/x/pdf")));
        assertFalse(s.trustedPdfHost(URI.create("https://stripe.com.evil.example/x")));
        assertFalse(s.trustedPdfHost(URI.create("http://127.0.0.1:10/files/x")));
    }
}
