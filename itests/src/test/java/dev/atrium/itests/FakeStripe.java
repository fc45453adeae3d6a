package dev.atrium.itests;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;

/**
 * A local Stripe API on loopback, speaking the endpoints Atrium's Stripe provider uses as Stripe does: form-encoded
 * requests with bracketed keys, JSON objects with their {@code object} field, list envelopes, Stripe's error body,
 * and {@code Idempotency-Key} (a repeated key answers the first answer again and changes nothing). Billing Meter
 * events are counted once per {@code identifier}. The test drives what a payer would do (complete a checkout, fail a
 * payment) and the fake sends Atrium the webhook Stripe would, signed with {@link #WEBHOOK_SECRET} as Stripe signs.
 */
final class FakeStripe implements AutoCloseable {

    static final String SECRET_KEY = "sk_test_atrium";
    static final String WEBHOOK_SECRET = "whsec_atrium_test";

    private final HttpServer server;
    private final HttpClient http = HttpClient.newHttpClient();
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<String, ObjectNode> customers = new ConcurrentHashMap<>();
    private final Map<String, ObjectNode> sessions = new ConcurrentHashMap<>();
    private final Map<String, ObjectNode> subscriptions = new ConcurrentHashMap<>();
    private final Map<String, ObjectNode> invoices = new ConcurrentHashMap<>();
    private final Map<String, String> idempotent = new ConcurrentHashMap<>();
    /** Meter events taken, by identifier: what Stripe would bill. */
    final Map<String, ObjectNode> meterEvents = new ConcurrentHashMap<>();
    /** Meter event requests that reached the API (a repeated idempotency key answered again is not one). */
    final List<ObjectNode> meterEventRequests = new CopyOnWriteArrayList<>();
    /** The identifier of every meter event POST, repeats of an idempotency key included. */
    final List<String> meterEventPosts = new CopyOnWriteArrayList<>();
    /** Event names whose meter events Stripe refuses (as it refuses one timestamped more than 35 days ago). */
    final java.util.Set<String> refusedEventNames = ConcurrentHashMap.newKeySet();
    /** The identifier of the first meter event whose answer was held. */
    volatile String heldIdentifier;

    final List<String> authorizations = new CopyOnWriteArrayList<>();
    final byte[] invoicePdf;
    /** While set, a meter event is taken and then its answer waits on it (a crash lands between the two). */
    volatile CountDownLatch holdMeterAnswers;

    final CountDownLatch meterEventTaken = new CountDownLatch(1);
    volatile String webhookUrl;

    FakeStripe() throws IOException {
        invoicePdf = pdf();
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", AtriumServer.freePort()), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", this::handle);
        server.start();
    }

    String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private static byte[] pdf() throws IOException {
        try (PDDocument doc = new PDDocument();
                ByteArrayOutputStream out = new ByteArrayOutputStream()) {
            doc.addPage(new PDPage());
            doc.getDocumentInformation().setTitle("Stripe invoice");
            doc.save(out);
            return out.toByteArray();
        }
    }

    private String id(String prefix) {
        return prefix + "_" + ids.incrementAndGet() + Long.toString(System.nanoTime() % 100_000, 36);
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String method = ex.getRequestMethod();
            URI uri = ex.getRequestURI();
            String path = uri.getPath();
            if (path.startsWith("/files/invoice-pdf/")) {
                ex.getResponseHeaders().set("Content-Type", "application/pdf");
                ex.sendResponseHeaders(200, invoicePdf.length);
                ex.getResponseBody().write(invoicePdf);
                return;
            }
            if (path.startsWith("/checkout/") || path.startsWith("/portal/")) {
                // the hosted pages a browser is sent to
                byte[] page = ("<!doctype html><title>Stripe</title><p>" + path).getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
                ex.sendResponseHeaders(200, page.length);
                ex.getResponseBody().write(page);
                return;
            }
            authorizations.add(String.valueOf(ex.getRequestHeaders().getFirst("Authorization")));
            if (!("Bearer " + SECRET_KEY).equals(ex.getRequestHeaders().getFirst("Authorization"))) {
                send(ex, 401, error("invalid_request_error", "Invalid API Key provided"));
                return;
            }
            Map<String, String> form = form(
                    method.equals("GET")
                            ? uri.getRawQuery()
                            : new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            if (method.equals("POST") && path.equals("/v1/billing/meter_events")) {
                meterEventPosts.add(form.getOrDefault("identifier", ""));
            }
            String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
            if (method.equals("POST") && key != null) {
                String earlier = idempotent.get(method + " " + path + " " + key);
                if (earlier != null) {
                    ex.getResponseHeaders().set("Idempotent-Replayed", "true");
                    sendRaw(ex, 200, earlier);
                    return;
                }
            }
            Answer a = route(method, path, form);
            if (method.equals("POST") && key != null && a.status() == 200) {
                idempotent.put(method + " " + path + " " + key, a.body().toString());
            }
            if (a.hold() != null) {
                if (heldIdentifier == null) {
                    heldIdentifier = form.get("identifier");
                }
                meterEventTaken.countDown();
                try {
                    a.hold().await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            send(ex, a.status(), a.body());
        }
    }

    private record Answer(int status, JsonNode body, CountDownLatch hold) {
        Answer(int status, JsonNode body) {
            this(status, body, null);
        }
    }

    private Answer route(String method, String path, Map<String, String> form) {
        String[] p = path.split("/");
        if (method.equals("POST") && path.equals("/v1/customers")) {
            ObjectNode c = Http.JSON
                    .createObjectNode()
                    .put("id", id("cus"))
                    .put("object", "customer")
                    .put("balance", 0)
                    .put("created", Instant.now().getEpochSecond())
                    .put("email", form.get("email"))
                    .put("name", form.get("name"));
            c.putNull("currency");
            ObjectNode meta = c.putObject("metadata");
            form.forEach((k, v) -> {
                if (k.startsWith("metadata[")) {
                    meta.put(k.substring(9, k.length() - 1), v);
                }
            });
            customers.put(c.get("id").asText(), c);
            return new Answer(200, c);
        }
        if (method.equals("GET") && p.length == 4 && p[2].equals("customers")) {
            ObjectNode c = customers.get(p[3]);
            return c == null ? missing("customer", p[3]) : new Answer(200, c);
        }
        if (method.equals("POST") && p.length == 5 && p[2].equals("customers") && p[4].equals("balance_transactions")) {
            ObjectNode c = customers.get(p[3]);
            if (c == null) {
                return missing("customer", p[3]);
            }
            long amount = Long.parseLong(form.get("amount"));
            synchronized (c) {
                c.put("balance", c.get("balance").asLong() + amount);
                c.put("currency", form.get("currency"));
            }
            return new Answer(
                    200,
                    Http.JSON
                            .createObjectNode()
                            .put("id", id("cbtxn"))
                            .put("object", "customer_balance_transaction")
                            .put("amount", amount)
                            .put("currency", form.get("currency"))
                            .put("customer", p[3])
                            .put("ending_balance", c.get("balance").asLong()));
        }
        if (method.equals("POST") && path.equals("/v1/checkout/sessions")) {
            String sid = id("cs_test");
            ObjectNode s = Http.JSON
                    .createObjectNode()
                    .put("id", sid)
                    .put("object", "checkout.session")
                    .put("mode", form.get("mode"))
                    .put("customer", form.get("customer"))
                    .put("client_reference_id", form.get("client_reference_id"))
                    .put("success_url", form.get("success_url"))
                    .put("url", base() + "/checkout/" + sid)
                    .put("status", "open")
                    .put("payment_status", "unpaid")
                    .put("price", form.get("line_items[0][price]"))
                    .put(
                            "amount_total",
                            Long.parseLong(form.getOrDefault("line_items[0][price_data][unit_amount]", "0")))
                    .put("currency", form.getOrDefault("line_items[0][price_data][currency]", "usd"));
            s.putObject("metadata").put("atrium_kind", form.getOrDefault("metadata[atrium_kind]", ""));
            sessions.put(sid, s);
            return new Answer(200, s);
        }
        if (method.equals("POST") && path.equals("/v1/billing_portal/sessions")) {
            return new Answer(
                    200,
                    Http.JSON
                            .createObjectNode()
                            .put("id", id("bps"))
                            .put("object", "billing_portal.session")
                            .put("customer", form.get("customer"))
                            .put("return_url", form.get("return_url"))
                            .put("url", base() + "/portal/" + form.get("customer")));
        }
        if (method.equals("GET") && path.equals("/v1/subscriptions")) {
            ArrayNode data = Http.JSON.createArrayNode();
            subscriptions.values().stream()
                    .filter(s -> s.get("customer").asText().equals(form.get("customer")))
                    .forEach(data::add);
            return new Answer(200, list("/v1/subscriptions", data));
        }
        if (method.equals("GET") && path.equals("/v1/invoices")) {
            ArrayNode data = Http.JSON.createArrayNode();
            invoices.values().stream()
                    .filter(i -> i.get("customer").asText().equals(form.get("customer")))
                    .forEach(data::add);
            return new Answer(200, list("/v1/invoices", data));
        }
        if (method.equals("GET") && p.length == 4 && p[2].equals("invoices")) {
            ObjectNode i = invoices.get(p[3]);
            return i == null ? missing("invoice", p[3]) : new Answer(200, i);
        }
        if (method.equals("POST") && path.equals("/v1/billing/meter_events")) {
            ObjectNode e = Http.JSON
                    .createObjectNode()
                    .put("object", "billing.meter_event")
                    .put("event_name", form.get("event_name"))
                    .put("identifier", form.get("identifier"))
                    .put("timestamp", Long.parseLong(form.get("timestamp")))
                    .put("created", Instant.now().getEpochSecond())
                    .put("livemode", false);
            e.putObject("payload")
                    .put("stripe_customer_id", form.get("payload[stripe_customer_id]"))
                    .put("value", form.get("payload[value]"));
            if (refusedEventNames.contains(form.get("event_name"))) {
                return new Answer(400, error("invalid_request_error", "Meter event timestamp is too far in the past"));
            }
            meterEventRequests.add(e);
            if (meterEvents.putIfAbsent(form.get("identifier"), e) != null) {
                return new Answer(
                        400,
                        error(
                                "invalid_request_error",
                                "An event already exists with identifier " + form.get("identifier")));
            }
            return new Answer(200, e, holdMeterAnswers);
        }
        return new Answer(
                404, error("invalid_request_error", "Unrecognized request URL (" + method + ": " + path + ")"));
    }

    private static Answer missing(String what, String id) {
        ObjectNode e = error("invalid_request_error", "No such " + what + ": '" + id + "'");
        ((ObjectNode) e.get("error")).put("code", "resource_missing");
        return new Answer(404, e);
    }

    private static ObjectNode list(String url, ArrayNode data) {
        ObjectNode l = Http.JSON
                .createObjectNode()
                .put("object", "list")
                .put("url", url)
                .put("has_more", false);
        l.set("data", data);
        return l;
    }

    private static ObjectNode error(String type, String message) {
        ObjectNode root = Http.JSON.createObjectNode();
        root.putObject("error").put("type", type).put("message", message);
        return root;
    }

    private static Map<String, String> form(String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(k, v);
        }
        return out;
    }

    private static void send(HttpExchange ex, int status, JsonNode body) throws IOException {
        sendRaw(ex, status, body.toString());
    }

    private static void sendRaw(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("Request-Id", "req_fake");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    // ---- what a payer does, and the webhooks Stripe then sends

    /** The payer pays a subscription checkout: the subscription becomes active, and Stripe says so. */
    Http.Reply completeSubscription(String sessionId) throws Exception {
        return deliver(subscriptionPaidEvent(sessionId));
    }

    /** The payer pays a top-up checkout; Stripe says so. */
    Http.Reply completeTopUp(String sessionId) throws Exception {
        ObjectNode s = sessions.get(sessionId);
        s.put("status", "complete").put("payment_status", "paid");
        return deliver(event("checkout.session.completed", s));
    }

    /** The subscription's renewal fails: it becomes past due, and Stripe says the invoice's payment failed. */
    Http.Reply failPayment(String customer) throws Exception {
        subscriptions.values().stream()
                .filter(s -> s.get("customer").asText().equals(customer))
                .forEach(s -> s.put("status", "past_due"));
        return deliver(event("invoice.payment_failed", invoice(customer, "open", 2000)));
    }

    ObjectNode invoice(String customer, String status, long amount) {
        String iid = id("in");
        ObjectNode i = Http.JSON
                .createObjectNode()
                .put("id", iid)
                .put("object", "invoice")
                .put("customer", customer)
                .put("number", String.format("ATR-%05d", ids.incrementAndGet()))
                .put("status", status)
                .put("currency", "usd")
                .put("amount_due", amount)
                .put("amount_paid", status.equals("paid") ? amount : 0)
                .put("created", Instant.now().getEpochSecond())
                .put("invoice_pdf", base() + "/files/invoice-pdf/" + iid)
                .put("hosted_invoice_url", base() + "/i/" + iid)
                .put("customer_email", customers.get(customer).path("email").asText(""));
        invoices.put(iid, i);
        return i;
    }

    /** A Stripe event around {@code object}, as its JSON text. */
    String event(String type, ObjectNode object) {
        ObjectNode e = Http.JSON
                .createObjectNode()
                .put("id", id("evt"))
                .put("object", "event")
                .put("api_version", "2025-08-27.basil")
                .put("created", Instant.now().getEpochSecond())
                .put("livemode", false)
                .put("pending_webhooks", 1)
                .put("type", type);
        e.putObject("data").set("object", object.deepCopy());
        return e.toString();
    }

    /** Posts {@code payload} to Atrium's webhook, signed now. */
    Http.Reply deliver(String payload) throws Exception {
        return deliver(payload, signature(payload, Instant.now().getEpochSecond(), WEBHOOK_SECRET));
    }

    Http.Reply deliver(String payload, String signatureHeader) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(webhookUrl))
                .header("Content-Type", "application/json; charset=utf-8")
                .header("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
                .POST(HttpRequest.BodyPublishers.ofString(payload));
        if (signatureHeader != null) {
            b.header("Stripe-Signature", signatureHeader);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        JsonNode json = null;
        try {
            json = r.body().isEmpty() ? null : Http.JSON.readTree(r.body());
        } catch (IOException notJson) {
            // left null: the assertion that needs JSON says so
        }
        return new Http.Reply(r.statusCode(), json, r.body(), r);
    }

    /** Stripe's signature header: {@code t=<seconds>,v1=<hex HMAC-SHA256 of "t.payload">}. */
    static String signature(String payload, long seconds, String secret) throws GeneralSecurityException {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        byte[] sig = mac.doFinal((seconds + "." + payload).getBytes(StandardCharsets.UTF_8));
        return "t=" + seconds + ",v1=" + HexFormat.of().formatHex(sig);
    }

    /** The sum Stripe would bill of {@code eventName} for {@code customer}. */
    long metered(String customer, String eventName) {
        return meterEvents.values().stream()
                .filter(e -> e.get("event_name").asText().equals(eventName))
                .filter(e ->
                        e.path("payload").path("stripe_customer_id").asText().equals(customer))
                .mapToLong(e -> Long.parseLong(e.path("payload").path("value").asText()))
                .sum();
    }

    ObjectNode session(String id) {
        return sessions.get(id);
    }

    /** Makes the subscription a paid checkout would make, and the event Stripe would send, without sending it. */
    String subscriptionPaidEvent(String sessionId) {
        ObjectNode s = sessions.get(sessionId);
        String customer = s.get("customer").asText();
        String subId = id("sub");
        ObjectNode sub = Http.JSON
                .createObjectNode()
                .put("id", subId)
                .put("object", "subscription")
                .put("customer", customer)
                .put("status", "active")
                .put("created", Instant.now().getEpochSecond());
        ObjectNode item = Http.JSON
                .createObjectNode()
                .put("id", id("si"))
                .put("object", "subscription_item")
                .put(
                        "current_period_end",
                        Instant.now().plusSeconds(30L * 86400).getEpochSecond());
        item.putObject("price").put("id", s.get("price").asText()).put("object", "price");
        sub.set(
                "items",
                list("/v1/subscription_items", Http.JSON.createArrayNode().add(item)));
        subscriptions.put(subId, sub);
        s.put("status", "complete").put("payment_status", "paid").put("subscription", subId);
        invoice(customer, "paid", 2000);
        return event("checkout.session.completed", s);
    }

    ObjectNode customer(String id) {
        return customers.get(id);
    }

    @Override
    public void close() {
        CountDownLatch hold = holdMeterAnswers;
        if (hold != null) {
            hold.countDown();
        }
        server.stop(0);
    }
}
