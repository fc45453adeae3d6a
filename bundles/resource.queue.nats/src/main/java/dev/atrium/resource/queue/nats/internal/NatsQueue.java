package dev.atrium.resource.queue.nats.internal;

import dev.atrium.resource.api.ConfigSchema;
import dev.atrium.resource.api.QueueFacet;
import dev.atrium.resource.api.QueueLimits;
import dev.atrium.resource.api.ResourceContext;
import dev.atrium.resource.api.ResourceException;
import dev.atrium.resource.api.ResourceProvider;
import dev.atrium.resource.api.ResourceProviderType;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.JetStreamOptions;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PublishOptions;
import io.nats.client.Subscription;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsJetStreamMetaData;
import io.nats.client.impl.NatsMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;

/**
 * queue resources on an operator's NATS JetStream. A queue is a work-queue stream (a message is removed once acked)
 * with one durable pull consumer; its dead letters are a second stream. A receive fetches up to {@code max} messages
 * and at once NAKs each with the visibility timeout as delay: JetStream keeps it pending and delivers it again when
 * that delay passed, unless it is acked first. The consumer's {@code max_deliver} is one more than the resource's
 * {@code max_deliveries}: the delivery past the limit is never handed to a consumer; the provider copies the message to
 * the dead-letter stream (deduplicated by its sequence) and acks it.
 *
 * <p>A receipt is the JetStream ack subject of the delivery and the instant its visibility timeout ends; an ack after
 * that instant, or naming another queue's stream, acknowledges nothing. Message ids are stream sequences; one
 * consumer receives in send order. No delayed send: JetStream (2.9) has no per-message delay, so a delay is refused.
 *
 * <p>Exists only when configured ({@code dev.atrium.resource.queue.nats}: {@code url}, or ATRIUM_QUEUE_NATS_URL). New
 * queue resources stay on PostgreSQL unless the request names {@code backend: "nats"} or the operator gives this
 * provider the higher {@code service.ranking}.
 */
@Component(
        service = ResourceProvider.class,
        configurationPid = "dev.atrium.resource.queue.nats",
        configurationPolicy = ConfigurationPolicy.REQUIRE)
@ResourceProviderType(type = "queue", backend = "nats")
@Designate(ocd = NatsQueueConfig.class)
public class NatsQueue implements ResourceProvider, QueueFacet {

    private static final String CONSUMER = "atrium";
    private static final int STREAM_NOT_FOUND = 10059;
    private static final String DEAD_ID = "Atrium-Id";
    private static final String DEAD_ATTEMPTS = "Atrium-Attempts";
    private static final String DEAD_ENQUEUED = "Atrium-Enqueued";

    private final Connection nats;
    private final JetStream js;
    private final JetStreamManagement jsm;
    private final String streamPrefix;
    private final String subjectPrefix;
    private final Duration ackWait;
    /** How long a receive waits for the server's answer to its pull: the request timeout. */
    private final Duration pullWait;
    /** Streams whose consumer is known to exist, so a receive costs one pull (a lookup costs a round trip). */
    private final Set<String> consumers = ConcurrentHashMap.newKeySet();

    @Activate
    public NatsQueue(NatsQueueConfig config) throws IOException, InterruptedException {
        String url = config.url() == null ? "" : config.url().trim();
        if (!url.matches("(nats|tls)://[^\\s/]+(:\\d+)?/?")) {
            throw new IllegalArgumentException("the NATS url must be nats://host:port, not '" + url + "'");
        }
        Duration timeout = Duration.ofMillis(Math.max(100, config.timeoutMillis()));
        Options options = Options.builder()
                .server(url)
                .connectionName("atrium-queue")
                .connectionTimeout(timeout)
                .maxReconnects(-1)
                .noEcho()
                .build();
        // a NATS that does not answer at activation fails it (SCR logs why; resources on 'nats' answer 503 naming the
        // provider); once connected, the client reconnects by itself and calls meanwhile fail as unavailable
        this.nats = Nats.connect(options);
        JetStreamOptions jso =
                JetStreamOptions.builder().requestTimeout(timeout).build();
        this.js = nats.jetStream(jso);
        this.jsm = nats.jetStreamManagement(jso);
        this.streamPrefix = config.streamPrefix();
        this.subjectPrefix = config.subjectPrefix();
        this.ackWait = Duration.ofSeconds(Math.max(1, config.ackWaitSeconds()));
        this.pullWait = timeout;
    }

    @Deactivate
    void close() throws InterruptedException {
        consumers.clear();
        nats.close();
    }

    private String stream(ResourceContext ctx) {
        return streamPrefix + token(ctx.resourceId());
    }

    private String deadStream(ResourceContext ctx) {
        return stream(ctx) + "_DEAD";
    }

    private String subject(ResourceContext ctx) {
        return subjectPrefix + token(ctx.resourceId());
    }

    /** A resource id as one token of a stream name and a subject: no dots, wildcards or spaces. */
    private static String token(String id) {
        return id.replaceAll("[^A-Za-z0-9_-]", "_");
    }

    @Override
    public ConfigSchema configSchema() {
        return QueueLimits.SCHEMA;
    }

    @Override
    public Map<String, Object> provision(ResourceContext ctx) throws ResourceException {
        run(() -> {
            addStream(StreamConfiguration.builder()
                    .name(stream(ctx))
                    .subjects(subject(ctx))
                    .retentionPolicy(RetentionPolicy.WorkQueue)
                    .storageType(StorageType.File)
                    .build());
            addStream(StreamConfiguration.builder()
                    .name(deadStream(ctx))
                    .subjects(subject(ctx) + ".dead")
                    .retentionPolicy(RetentionPolicy.Limits)
                    .storageType(StorageType.File)
                    .duplicateWindow(Duration.ofMinutes(10))
                    .build());
            jsm.addOrUpdateConsumer(stream(ctx), consumerConfig(QueueLimits.maxDeliveries(ctx)));
            return null;
        });
        return Map.of();
    }

    private void addStream(StreamConfiguration config) throws IOException, JetStreamApiException {
        try {
            jsm.addStream(config);
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() != 10058) { // stream name already in use: provision is called again
                throw e;
            }
        }
    }

    private ConsumerConfiguration consumerConfig(int maxDeliveries) {
        return ConsumerConfiguration.builder()
                .durable(CONSUMER)
                .ackPolicy(AckPolicy.Explicit)
                .ackWait(ackWait)
                .maxDeliver(maxDeliveries + 1L)
                .build();
    }

    @Override
    public void update(ResourceContext ctx, Map<String, Object> newConfig) throws ResourceException {
        Object max = newConfig.get("max_deliveries");
        int maxDeliveries = max instanceof Number n ? n.intValue() : 5;
        run(() -> jsm.addOrUpdateConsumer(stream(ctx), consumerConfig(maxDeliveries)));
        consumers.remove(stream(ctx));
    }

    @Override
    public void deprovision(ResourceContext ctx) throws ResourceException {
        consumers.remove(stream(ctx));
        run(() -> {
            for (String stream : List.of(stream(ctx), deadStream(ctx))) {
                try {
                    jsm.deleteStream(stream);
                } catch (JetStreamApiException e) {
                    if (e.getErrorCode() != 404) {
                        throw e;
                    }
                }
            }
            return null;
        });
    }

    @Override
    public Map<String, Object> connectionInfo(ResourceContext ctx) {
        return Map.of("backend", "nats", "stream", stream(ctx), "subject", subject(ctx));
    }

    @Override
    public Health health(ResourceContext ctx) {
        return nats.getStatus() == Connection.Status.CONNECTED ? Health.ok() : Health.failing("NATS does not answer");
    }

    @Override
    public String send(ResourceContext ctx, byte[] body, Duration delay) throws ResourceException {
        QueueLimits.checkBody(ctx, body);
        if (QueueLimits.checkDelay(delay) > 0) {
            throw ResourceException.badInput(
                    "this queue's backend (nats) has no delayed delivery; send without a delay");
        }
        ctx.usage().admit("writes");
        long seq = run(() -> js.publish(
                        subject(ctx),
                        body,
                        PublishOptions.builder().expectedStream(stream(ctx)).build())
                .getSeqno());
        ctx.usage().record("writes", 1);
        return Long.toString(seq);
    }

    @Override
    public List<QueueMessage> receive(ResourceContext ctx, int max, Duration visibilityTimeout)
            throws ResourceException {
        QueueLimits.checkMax(max);
        long hideMillis = QueueLimits.checkVisibility(visibilityTimeout);
        int maxDeliveries = QueueLimits.maxDeliveries(ctx);
        List<QueueMessage> out = new ArrayList<>();
        run(() -> {
            try {
                consumer(ctx);
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() == STREAM_NOT_FOUND) {
                    return null; // deprovisioned: a queue without its stream holds nothing
                }
                throw e;
            }
            Subscription inbox = nats.subscribe(nats.createInbox());
            try {
                // a pull that answers at once (no_wait), read until the server says it has no more (a status) or the
                // batch is full; jnats' own fetch stops listening after a second, and a delivery arriving later is lost
                // until ackWait
                nats.publish(
                        "$JS.API.CONSUMER.MSG.NEXT." + stream(ctx) + "." + CONSUMER,
                        inbox.getSubject(),
                        ("{\"batch\":" + max + ",\"no_wait\":true}").getBytes(StandardCharsets.US_ASCII));
                long end = System.nanoTime() + pullWait.toNanos();
                for (int delivered = 0; delivered < max; delivered++) {
                    long left = end - System.nanoTime();
                    Message m = left <= 0 ? null : inbox.nextMessage(Duration.ofNanos(left));
                    if (m == null || m.isStatusMessage()) {
                        break; // 404/408: nothing (more) to deliver; 503: the consumer is gone with its stream
                    }
                    NatsJetStreamMetaData meta = m.metaData();
                    Instant enqueued = meta.timestamp().toInstant();
                    int attempts = (int) meta.deliveredCount();
                    if (attempts > maxDeliveries) {
                        bury(ctx, m, meta.streamSequence(), attempts - 1, enqueued);
                        continue;
                    }
                    long deadline = System.currentTimeMillis() + hideMillis;
                    nats.publish(
                            m.getReplyTo(),
                            ("-NAK {\"delay\":" + Duration.ofMillis(hideMillis).toNanos() + "}")
                                    .getBytes(StandardCharsets.US_ASCII));
                    out.add(new QueueMessage(
                            Long.toString(meta.streamSequence()),
                            m.getData() == null ? new byte[0] : m.getData(),
                            receipt(m.getReplyTo(), deadline),
                            attempts,
                            enqueued));
                }
            } finally {
                inbox.unsubscribe();
            }
            return null;
        });
        ctx.usage().record("reads", 1);
        return out;
    }

    /** Fails with the server's error (stream not found) unless this queue's consumer exists; asks once per stream. */
    private void consumer(ResourceContext ctx) throws IOException, JetStreamApiException {
        String stream = stream(ctx);
        if (!consumers.contains(stream)) {
            jsm.getConsumerInfo(stream, CONSUMER);
            consumers.add(stream);
        }
    }

    /** Moves a message past its last delivery to the dead letters: a copy first (deduplicated), then the ack. */
    private void bury(ResourceContext ctx, Message m, long seq, int attempts, Instant enqueued) throws Exception {
        Headers headers = new Headers()
                .put(DEAD_ID, Long.toString(seq))
                .put(DEAD_ATTEMPTS, Integer.toString(attempts))
                .put(DEAD_ENQUEUED, Long.toString(enqueued.toEpochMilli()));
        js.publish(
                NatsMessage.builder()
                        .subject(subject(ctx) + ".dead")
                        .headers(headers)
                        .data(m.getData())
                        .build(),
                PublishOptions.builder()
                        .messageId("dead-" + seq)
                        .expectedStream(deadStream(ctx))
                        .build());
        if (nats.request(m.getReplyTo(), "+ACK".getBytes(StandardCharsets.US_ASCII), ackWait) == null) {
            throw new TimeoutException("no answer to the ack of a dead letter");
        }
    }

    private static String receipt(String ackSubject, long deadline) {
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString((deadline + " " + ackSubject).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public boolean ack(ResourceContext ctx, String receipt) throws ResourceException {
        long deadline;
        String[] parts;
        String ackSubject;
        try {
            String decoded = new String(Base64.getUrlDecoder().decode(receipt), StandardCharsets.UTF_8);
            int space = decoded.indexOf(' ');
            deadline = Long.parseLong(decoded.substring(0, space));
            ackSubject = decoded.substring(space + 1);
            // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>
            parts = ackSubject.split("\\.");
            if (!ackSubject.startsWith("$JS.ACK.") || parts.length < 9) {
                throw new IllegalArgumentException();
            }
            Long.parseLong(parts[5]);
        } catch (RuntimeException e) {
            throw ResourceException.badInput("receipt is not one this queue handed out");
        }
        ctx.usage().record("writes", 1);
        if (!parts[2].equals(stream(ctx)) || !parts[3].equals(CONSUMER) || System.currentTimeMillis() >= deadline) {
            return false;
        }
        long seq = Long.parseLong(parts[5]);
        return run(() -> {
            try {
                jsm.getMessage(stream(ctx), seq);
            } catch (JetStreamApiException e) {
                if (e.getErrorCode() == 404) {
                    return false; // acknowledged before (a work-queue stream drops what is acked)
                }
                throw e;
            }
            Message reply = nats.request(ackSubject, "+ACK".getBytes(StandardCharsets.US_ASCII), ackWait);
            if (reply == null) {
                throw new TimeoutException("no answer to the ack");
            }
            return true;
        });
    }

    @Override
    public List<QueueMessage> deadLetters(ResourceContext ctx, int limit) throws ResourceException {
        QueueLimits.checkLimit(limit);
        ctx.usage().record("reads", 1);
        return run(() -> {
            StreamInfo info;
            try {
                info = jsm.getStreamInfo(deadStream(ctx));
            } catch (JetStreamApiException e) {
                if (e.getApiErrorCode() == STREAM_NOT_FOUND) {
                    return List.<QueueMessage>of();
                }
                throw e;
            }
            List<QueueMessage> out = new ArrayList<>();
            long first = info.getStreamState().getFirstSequence();
            long last = info.getStreamState().getLastSequence();
            for (long seq = first; seq <= last && seq > 0 && out.size() < limit; seq++) {
                MessageInfo dead;
                try {
                    dead = jsm.getMessage(deadStream(ctx), seq);
                } catch (JetStreamApiException e) {
                    if (e.getErrorCode() == 404) {
                        continue;
                    }
                    throw e;
                }
                Headers h = dead.getHeaders();
                out.add(new QueueMessage(
                        h.getFirst(DEAD_ID),
                        dead.getData() == null ? new byte[0] : dead.getData(),
                        null,
                        Integer.parseInt(h.getFirst(DEAD_ATTEMPTS)),
                        Instant.ofEpochMilli(Long.parseLong(h.getFirst(DEAD_ENQUEUED)))));
            }
            return out;
        });
    }

    private interface NatsCall<T> {
        T call() throws Exception;
    }

    private static <T> T run(NatsCall<T> call) throws ResourceException {
        try {
            return call.call();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ResourceException.unavailable("interrupted while the queue on NATS answered", e);
        } catch (JetStreamApiException e) {
            throw ResourceException.unavailable("the queue on NATS failed (" + e.getApiErrorCode() + "); try again", e);
        } catch (Exception e) {
            throw ResourceException.unavailable("the queue on NATS does not answer; try again", e);
        }
    }
}
