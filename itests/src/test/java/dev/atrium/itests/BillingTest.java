package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.icegreen.greenmail.util.GreenMail;
import com.icegreen.greenmail.util.ServerSetup;
import dev.atrium.itests.AtriumServer.User;
import jakarta.mail.Multipart;
import jakarta.mail.Part;
import jakarta.mail.internet.MimeMessage;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Billing against a local Stripe API ({@link FakeStripe}) through the official stripe-java client: checkout for a
 * subscription and a top-up, signed webhooks opening and closing the gate, usage of runs and vector queries reported
 * once (also across a SIGKILL between the provider taking a report and the server writing that down), the
 * webhook's refusals, and invoices as PDF and mail to a real SMTP server on loopback (GreenMail).
 */
@Timeout(300)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BillingTest {

    private static FakeStripe stripe;
    private static FakeModelServer models;
    private static FakeEmbeddings embeddings;
    private static GreenMail smtp;
    private static TestDatabase db;
    private static Path data;
    private static Map<String, String> env;
    private static AtriumServer server;
    /** Subscribed in order 2; its customer at Stripe. */
    private static User payer;

    private static String payerCustomer;

    @BeforeAll
    static void launch() throws Exception {
        stripe = new FakeStripe();
        models = new FakeModelServer();
        smtp = new GreenMail(new ServerSetup(AtriumServer.freePort(), "127.0.0.1", ServerSetup.PROTOCOL_SMTP));
        smtp.start();
        db = TestDatabase.create();
        data = Files.createTempDirectory("atrium-billing-");
        env = new HashMap<>();
        env.put("ATRIUM_BILLING_PROVIDER", "stripe");
        env.put("ATRIUM_STRIPE_SECRET_KEY", FakeStripe.SECRET_KEY);
        env.put("ATRIUM_STRIPE_WEBHOOK_SECRET", FakeStripe.WEBHOOK_SECRET);
        env.put("ATRIUM_STRIPE_API_BASE", stripe.base());
        env.put("ATRIUM_BILLING_PLANS", "[{\"id\":\"pro\",\"name\":\"Pro\",\"price\":\"price_pro\"}]");
        env.put("ATRIUM_BILLING_AGGREGATE_S", "1");
        env.put("ATRIUM_BILLING_REPORT_S", "1");
        env.put("ATRIUM_BILLING_OUTBOX_FLUSH_MS", "100");
        env.put("ATRIUM_BILLING_SAMPLE_S", "1");
        env.put("ATRIUM_OPENAI_BASE_URL", models.openAiBase());
        embeddings = new FakeEmbeddings();
        env.put("ATRIUM_EMBEDDINGS_BASE_URL", embeddings.base());
        env.put("ATRIUM_EMBEDDINGS_API_KEY", "sk-test-embeddings");
        env.put("ATRIUM_RUNS_POLL_MS", "200");
        env.put("ATRIUM_SMTP_HOST", "127.0.0.1");
        env.put("ATRIUM_SMTP_PORT", String.valueOf(smtp.getSmtp().getPort()));
        env.put("ATRIUM_SMTP_SECURITY", "none");
        env.put("ATRIUM_SMTP_FROM", "billing@atrium.test");
        server = AtriumServer.launch(data, db, env);
        stripe.webhookUrl = server.base() + "/api/billing/webhook";
    }

    @AfterAll
    static void close() throws Throwable {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            stripe.close();
            models.close();
            embeddings.close();
            smtp.stop();
        }
    }

    private static String thread(User u) {
        Http.Reply t = u.http().post("/api/spaces/" + u.defaultSpaceId() + "/threads", Map.of("title", "billing"));
        assertEquals(201, t.status(), t.body());
        return t.json().path("thread").path("id").asText();
    }

    private static Http.Reply startRun(User u, String thread, String model) {
        return u.http()
                .post("/api/threads/" + thread + "/runs", Map.of("input", "go", "provider", "openai", "model", model));
    }

    /** OpenAI's last chunk when {@code stream_options.include_usage} is set: no choices, the turn's token counts. */
    static List<String> withUsage(List<String> frames, long in, long out) {
        List<String> f = new ArrayList<>(frames);
        int done = f.indexOf("data: [DONE]\n\n");
        f.add(
                done < 0 ? f.size() : done,
                "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],"
                        + "\"usage\":{\"prompt_tokens\":" + in + ",\"completion_tokens\":" + out
                        + ",\"total_tokens\":" + (in + out) + "}}\n\n");
        return f;
    }

    static void eventually(String what, Supplier<Boolean> condition, long seconds) throws InterruptedException {
        eventually(what, condition, seconds, () -> "");
    }

    /** As {@link #eventually(String, Supplier, long)}; a failure says what {@code state} gives then. */
    static void eventually(String what, Supplier<Boolean> condition, long seconds, Supplier<String> state)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (condition.get()) {
                return;
            }
            Thread.sleep(100);
        }
        fail(what + " within " + seconds + " s " + state.get());
    }

    static long usedOf(User u, String meter) {
        return used(u, meter);
    }

    private static long used(User u, String meter) {
        for (JsonNode m :
                u.http().get("/api/billing/usage").json().path("usage").path("meters")) {
            if (m.path("meter").asText().equals(meter)) {
                return m.path("quantity").asLong();
            }
        }
        return 0;
    }

    private static String subscribe(User u) {
        Http.Reply r = u.http().post("/api/billing/subscribe", Map.of("plan", "pro"));
        assertEquals(201, r.status(), r.body());
        String session = r.json().path("checkout").path("id").asText();
        assertTrue(r.json().path("checkout").path("url").asText().startsWith(stripe.base() + "/checkout/"), r.body());
        return session;
    }

    @Test
    @Order(1)
    void withoutASubscriptionOrCreditMeteredWorkIsRefusedWith402NamingTheMeter() {
        User u = server.newUser();
        Http.Reply run = startRun(u, thread(u), "none");
        assertEquals(402, run.status(), run.body());
        assertEquals("PAYMENT_REQUIRED", run.json().path("error").path("code").asText());
        assertTrue(run.json().path("error").path("message").asText().contains("run_tokens_in"), run.body());
        // a vector query by any route: semantic thread search asks the same gate as /search
        Http.Reply semantic =
                u.http().get("/api/spaces/" + u.defaultSpaceId() + "/threads/search?q=anything&mode=semantic");
        assertEquals(402, semantic.status(), semantic.body());
        assertTrue(semantic.body().contains("vector_queries"), semantic.body());
        JsonNode b = u.http().get("/api/billing").json().path("billing");
        assertEquals("stripe", b.path("provider").asText());
        assertTrue(b.path("configured").asBoolean(), b.toString());
        assertFalse(b.path("gate").path("vector_queries").path("allowed").asBoolean(), b.toString());
        assertEquals("pro", b.path("plans").path(0).path("id").asText());
    }

    @Test
    @Order(1)
    void theAccountPageShowsThePlanAndItsSubscribeButtonGoesToCheckout() throws Exception {
        BrowserScripts.require("playwright-core");
        String name = "payer" + Long.toString(System.nanoTime() % 1_000_000, 36);
        Http.Reply user = server.operator()
                .post("/admin/identity/local-users", Map.of("username", name, "password", "a long password 1"));
        assertEquals(201, user.status(), user.body());
        Path out = AtriumServer.ROOT.resolve("itests/target/billing-page.out");
        Files.deleteIfExists(out);
        int exit = BrowserScripts.run(
                out,
                "node",
                "billing.test.mjs",
                server.base(),
                name,
                "a long password 1",
                stripe.base() + "/checkout/");
        assertEquals(0, exit, Files.readString(out));
    }

    @Test
    @Order(2)
    void aSubscriptionCheckoutCompletedBySignedWebhookOpensTheGate() throws Exception {
        payer = server.newUser();
        assertEquals(
                400,
                payer.http()
                        .post("/api/billing/subscribe", Map.of("plan", "gold"))
                        .status());
        assertEquals(400, payer.http().post("/api/billing/subscribe", Map.of()).status());
        String session = subscribe(payer);
        payerCustomer = stripe.session(session).path("customer").asText();
        assertEquals(
                payer.principalId(),
                stripe.customer(payerCustomer)
                        .path("metadata")
                        .path("atrium_principal")
                        .asText());
        stripe.customer(payerCustomer).put("email", "payer@example.test");
        assertFalse(payer.http()
                .get("/api/billing")
                .json()
                .path("billing")
                .path("customer")
                .isMissingNode());

        Http.Reply hook = stripe.completeSubscription(session);
        assertEquals(200, hook.status(), hook.body());
        JsonNode b = payer.http().get("/api/billing").json().path("billing");
        assertEquals("active", b.path("subscription").path("status").asText(), b.toString());
        assertEquals("pro", b.path("subscription").path("plan").path("id").asText(), b.toString());
        assertTrue(b.path("gate").path("run_tokens_in").path("allowed").asBoolean(), b.toString());
        models.script("bill-open", body -> FakeModelServer.openAiText("open"));
        Http.Reply run = startRun(payer, thread(payer), "bill-open");
        assertEquals(201, run.status(), run.body());
        assertEquals(
                409,
                payer.http()
                        .post("/api/billing/subscribe", Map.of("plan", "pro"))
                        .status());

        Http.Reply portal = payer.http().post("/api/billing/portal", Map.of());
        assertEquals(201, portal.status(), portal.body());
        assertEquals(
                stripe.base() + "/portal/" + payerCustomer,
                portal.json().path("portal").path("url").asText());
    }

    @Test
    @Order(3)
    void usageOfRunsAndVectorQueriesIsShownAndReportedToStripeOnce() throws Exception {
        Http.Reply index = payer.http()
                .post(
                        "/api/resources",
                        Map.of("name", "billed", "type", "vectorize", "config", Map.of("dimensions", 3)));
        assertEquals(201, index.status(), index.body());
        String indexId = index.json().path("resource").path("id").asText();
        String args = "{\"index\":\"billed\",\"vector\":[0.1,0.2,0.3],\"top_k\":1}";
        models.script(
                "bill-usage",
                body -> withUsage(FakeModelServer.openAiToolCall("call_v", "vectorize_query", args), 120, 30),
                body -> withUsage(FakeModelServer.openAiText("found"), 140, 10));
        Http.Reply run = startRun(payer, thread(payer), "bill-usage");
        assertEquals(201, run.status(), run.body());
        JsonNode done = AgentRunsTest.awaitFinished(
                payer.http(), run.json().path("run").path("id").asText());
        assertEquals("completed", done.path("status").asText(), done.toString());

        eventually(
                "usage shows the run's tokens and the query",
                () -> used(payer, "run_tokens_in") == 260
                        && used(payer, "run_tokens_out") == 40
                        && used(payer, "vector_queries") == 1,
                15);
        JsonNode meters =
                payer.http().get("/api/billing/usage").json().path("usage").path("meters");
        for (JsonNode m : meters) {
            if (m.path("meter").asText().equals("run_tokens_in")) {
                assertEquals(260, m.path("dimensions").path("bill-usage").asLong(), m.toString());
                assertEquals(
                        260, m.path("workspaces").path(payer.defaultSpaceId()).asLong(), m.toString());
            }
            if (m.path("meter").asText().equals("vector_queries")) {
                assertEquals(1, m.path("dimensions").path(indexId).asLong(), m.toString());
            }
        }
        JsonNode resource = payer.http().get("/api/resources/" + indexId).json().path("resource");
        assertEquals(1, resource.path("usage").path("vector_queries").asLong(), resource.toString());

        eventually(
                "Stripe has the tokens and the query",
                () -> stripe.metered(payerCustomer, "run_tokens_in") == 260
                        && stripe.metered(payerCustomer, "run_tokens_out") == 40
                        && stripe.metered(payerCustomer, "vector_queries") == 1,
                15);
        Thread.sleep(2_500); // two more report rounds: nothing is sent again
        assertEquals(260, stripe.metered(payerCustomer, "run_tokens_in"));
        assertEquals(stripe.meterEvents.size(), stripe.meterEventPosts.size(), "no report was sent twice");
        // Stripe refuses one meter's reports: the others are still reported
        stripe.refusedEventNames.add("storage_byte_hours");
        // the bytes stored: one sample per hour, the first of the hour
        String content = "x".repeat(4321);
        assertEquals(
                201,
                payer.http()
                        .post(
                                "/api/spaces/" + payer.defaultSpaceId() + "/storage/files",
                                Map.of("path", "kept.txt", "content", content))
                        .status());
        // (two samples if the test crosses the top of an hour)
        eventually(
                "the stored bytes are sampled",
                () -> used(payer, "storage_byte_hours") >= 4321 && used(payer, "storage_byte_hours") % 4321 == 0,
                15);
        // and the bytes an r2 bucket stores, sampled the same way
        Http.Reply bucket = payer.http().post("/api/resources", Map.of("name", "bucket", "type", "r2"));
        assertEquals(201, bucket.status(), bucket.body());
        String bucketId = bucket.json().path("resource").path("id").asText();
        assertEquals(
                200,
                payer.http()
                        .send(
                                "PUT",
                                "/api/resources/" + bucketId + "/objects/a.bin",
                                new byte[2345],
                                "application/octet-stream")
                        .status());
        eventually(
                "the bucket's bytes are sampled",
                () -> used(payer, "r2_byte_hours") >= 2345 && used(payer, "r2_byte_hours") % 2345 == 0,
                15);
        eventually(
                "the bucket's bytes reach Stripe while its storage reports are refused",
                () -> stripe.metered(payerCustomer, "r2_byte_hours") >= 2345,
                15);
        assertEquals(0, stripe.metered(payerCustomer, "storage_byte_hours"));
        // a stranger does not see the payer's usage
        User stranger = server.newUser();
        assertEquals(0, used(stranger, "run_tokens_in"));
    }

    @Test
    @Order(4)
    void forgedLateAndReplayedWebhooksAreRefusedAndChangeNothing() throws Exception {
        User u = server.newUser();
        String session = subscribe(u);
        String paid = stripe.subscriptionPaidEvent(session);
        long now = Instant.now().getEpochSecond();

        Http.Reply forged = stripe.deliver(paid, FakeStripe.signature(paid, now, "whsec_someone_else"));
        assertEquals(400, forged.status(), forged.body());
        assertEquals("BAD_REQUEST", forged.json().path("error").path("code").asText());
        Http.Reply unsigned = stripe.deliver(paid, null);
        assertEquals(400, unsigned.status(), unsigned.body());
        Http.Reply late = stripe.deliver(paid, FakeStripe.signature(paid, now - 600, FakeStripe.WEBHOOK_SECRET));
        assertEquals(400, late.status(), late.body());
        Http.Reply tampered = stripe.deliver(
                paid.replace("\"livemode\":false", "\"livemode\":true"),
                FakeStripe.signature(paid, now, FakeStripe.WEBHOOK_SECRET));
        assertEquals(400, tampered.status(), tampered.body());
        JsonNode unchanged = u.http().get("/api/billing").json().path("billing");
        assertTrue(unchanged.path("subscription").isNull(), unchanged.toString());
        assertEquals(402, startRun(u, thread(u), "none").status());

        assertEquals(200, stripe.deliver(paid).status());
        assertEquals(
                "active",
                u.http()
                        .get("/api/billing")
                        .json()
                        .path("billing")
                        .path("subscription")
                        .path("status")
                        .asText());

        // a top-up replayed: credited once
        Http.Reply topUp = u.http().post("/api/billing/credits/checkout", Map.of("amount", 1500));
        assertEquals(201, topUp.status(), topUp.body());
        assertEquals(
                400,
                u.http()
                        .post("/api/billing/credits/checkout", Map.of("amount", 1))
                        .status());
        assertEquals(
                400,
                u.http()
                        .post("/api/billing/credits/checkout", Map.of("amount", "lots"))
                        .status());
        String topUpSession = topUp.json().path("checkout").path("id").asText();
        stripe.session(topUpSession).put("status", "complete").put("payment_status", "paid");
        String credited = stripe.event("checkout.session.completed", stripe.session(topUpSession));
        assertEquals(200, stripe.deliver(credited).status());
        Http.Reply replay = stripe.deliver(credited);
        assertEquals(409, replay.status(), replay.body());
        JsonNode b = u.http().get("/api/billing").json().path("billing");
        assertEquals(1500, b.path("credit").path("amount_minor").asLong(), b.toString());
        String customer = stripe.session(topUpSession).path("customer").asText();
        assertEquals(-1500, stripe.customer(customer).path("balance").asLong());
    }

    @Test
    @Order(4)
    void aTopUpAloneOpensTheGate() throws Exception {
        User u = server.newUser();
        String thread = thread(u);
        assertEquals(402, startRun(u, thread, "none").status());
        Http.Reply topUp = u.http().post("/api/billing/credits/checkout", Map.of("amount", 800));
        assertEquals(201, topUp.status(), topUp.body());
        Http.Reply paid =
                stripe.completeTopUp(topUp.json().path("checkout").path("id").asText());
        assertEquals(200, paid.status(), paid.body());
        JsonNode b = u.http().get("/api/billing").json().path("billing");
        assertEquals(800, b.path("credit").path("amount_minor").asLong(), b.toString());
        assertTrue(b.path("subscription").isNull(), b.toString());
        models.script("bill-credit", body -> FakeModelServer.openAiText("paid by credit"));
        assertEquals(201, startRun(u, thread, "bill-credit").status());
    }

    @Test
    @Order(5)
    void aFailedPaymentClosesTheGateWith402WithinFiveSeconds() throws Exception {
        String thread = thread(payer);
        models.script("bill-before", body -> FakeModelServer.openAiText("still open"));
        assertEquals(201, startRun(payer, thread, "bill-before").status());
        long start = System.nanoTime();
        Http.Reply hook = stripe.failPayment(payerCustomer);
        assertEquals(200, hook.status(), hook.body());
        eventually("the gate closes", () -> startRun(payer, thread, "none").status() == 402, 5);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(ms < 5_000, ms + " ms");
        Http.Reply refused = startRun(payer, thread, "none");
        assertEquals(
                "PAYMENT_REQUIRED", refused.json().path("error").path("code").asText(), refused.body());
        assertTrue(refused.json().path("error").path("message").asText().contains("past_due"), refused.body());
        assertEquals(
                "past_due",
                payer.http()
                        .get("/api/billing")
                        .json()
                        .path("billing")
                        .path("subscription")
                        .path("status")
                        .asText());
    }

    @Test
    @Order(6)
    void invoicesAreListedServedAsPdfAndMailedToTheLoopbackSmtpServer() throws Exception {
        JsonNode invoices = payer.http().get("/api/billing/invoices").json().path("invoices");
        assertTrue(invoices.size() >= 1, invoices.toString());
        String id = invoices.path(0).path("id").asText();
        HttpResponse<byte[]> pdf = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(server.base() + "/api/billing/invoices/" + id + "/pdf"))
                                .header("Authorization", "Bearer " + AgentRunsTest.token(payer))
                                .build(),
                        HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, pdf.statusCode());
        assertEquals("application/pdf", pdf.headers().firstValue("Content-Type").orElse(""));
        assertArrayEquals(stripe.invoicePdf, pdf.body());
        try (PDDocument doc = PDDocument.load(pdf.body())) {
            assertEquals(1, doc.getNumberOfPages());
        }
        User stranger = server.newUser();
        Http.Reply theirs = stranger.http().get("/api/billing/invoices/" + id + "/pdf");
        assertEquals(404, theirs.status(), theirs.body());
        assertEquals(
                404, payer.http().get("/api/billing/invoices/in_missing/pdf").status());

        Http.Reply sent = payer.http().post("/api/billing/invoices/" + id + "/send", Map.of());
        assertEquals(202, sent.status(), sent.body());
        assertEquals("payer@example.test", sent.json().path("sent").path("to").asText());
        assertTrue(smtp.waitForIncomingEmail(10_000, 1));
        MimeMessage mail = smtp.getReceivedMessages()[0];
        assertEquals("payer@example.test", mail.getAllRecipients()[0].toString());
        assertTrue(mail.getSubject().startsWith("Invoice "), mail.getSubject());
        Multipart parts = (Multipart) mail.getContent();
        Part attachment = null;
        for (int i = 0; i < parts.getCount(); i++) {
            if (Part.ATTACHMENT.equalsIgnoreCase(parts.getBodyPart(i).getDisposition())) {
                attachment = parts.getBodyPart(i);
            }
        }
        assertNotNull(attachment, "the invoice PDF is attached");
        assertArrayEquals(stripe.invoicePdf, attachment.getInputStream().readAllBytes());
        assertEquals(
                404,
                stranger.http()
                        .post("/api/billing/invoices/" + id + "/send", Map.of())
                        .status());
    }

    @Test
    @Order(7)
    void usageIsReportedOnceWhenTheServerIsKilledAfterStripeTookAReport() throws Exception {
        User u = server.newUser();
        String session = subscribe(u);
        String customer = stripe.session(session).path("customer").asText();
        assertEquals(200, stripe.completeSubscription(session).status());
        CountDownLatch release = new CountDownLatch(1);
        stripe.holdMeterAnswers = release;
        models.script("bill-crash", body -> withUsage(FakeModelServer.openAiText("counted"), 77, 7));
        Http.Reply run = startRun(u, thread(u), "bill-crash");
        assertEquals(201, run.status(), run.body());
        assertTrue(stripe.meterEventTaken.await(30, TimeUnit.SECONDS), "a report reached Stripe");
        server.killHard(); // Stripe took the report; the server never heard back
        stripe.holdMeterAnswers = null;
        release.countDown();

        server = AtriumServer.launch(data, db, env);
        stripe.webhookUrl = server.base() + "/api/billing/webhook";
        Http http = new Http(server.base(), AgentRunsTest.token(u));
        eventually(
                "both meters reach Stripe",
                () -> stripe.metered(customer, "run_tokens_in") == 77
                        && stripe.metered(customer, "run_tokens_out") == 7,
                30);
        Thread.sleep(2_500);
        assertEquals(77, stripe.metered(customer, "run_tokens_in"));
        assertEquals(7, stripe.metered(customer, "run_tokens_out"));
        String held = stripe.heldIdentifier;
        long posts = stripe.meterEventPosts.stream().filter(held::equals).count();
        assertTrue(posts >= 2, "the report Stripe took was sent again after the restart, with its key: " + posts);
        JsonNode usage = http.get("/api/billing/usage").json().path("usage").path("meters");
        assertEquals("run_tokens_in", usage.path(0).path("meter").asText(), usage.toString());
        assertEquals(77, usage.path(0).path("quantity").asLong(), usage.toString());
    }
}
