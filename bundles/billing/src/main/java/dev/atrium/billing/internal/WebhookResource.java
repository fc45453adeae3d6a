package dev.atrium.billing.internal;

import dev.atrium.billing.api.BillingProvider;
import dev.atrium.billing.api.BillingProvider.WebhookEvent;
import dev.atrium.billing.api.BillingProvider.WebhookEvent.Kind;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.SelfAuthenticated;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.io.InputStream;
import java.sql.Timestamp;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /api/billing/webhook}: the payment provider's events, authenticated by the provider's signature (never
 * by a bearer token). The signature and its age are checked on the exact bytes before anything of the body is read.
 * An event is applied once: its id is stored in the transaction that applies it, and a replay answers 409 and changes
 * nothing. Applying means reading the account again from the provider, so the order events arrive in does not matter.
 */
@Component(service = WebhookResource.class)
@KernelResource
@Path("/api/billing/webhook")
@Anonymous
@SelfAuthenticated
public class WebhookResource {

    private static final Logger LOG = LoggerFactory.getLogger(WebhookResource.class);
    /** Larger than any event a provider sends. */
    static final int MAX_BYTES = 512 * 1024;

    private final BillingSettings settings;
    private final ProviderChoice choice;
    private final Accounts accounts;
    private final Sql sql;

    @Activate
    public WebhookResource(
            @Reference BillingSettings settings,
            @Reference ProviderChoice choice,
            @Reference Accounts accounts,
            @Reference DataSource dataSource) {
        this.settings = settings;
        this.choice = choice;
        this.accounts = accounts;
        this.sql = new Sql(dataSource);
    }

    @POST
    @Produces(MediaType.APPLICATION_JSON)
    @JsonShape(BillingJson.Received.class)
    public Response receive(@Context HttpHeaders headers, InputStream body) {
        BillingProvider provider = choice.require();
        byte[] payload;
        try {
            payload = body.readNBytes(MAX_BYTES + 1);
        } catch (IOException e) {
            throw ApiException.badRequest("the webhook's body could not be read");
        }
        if (payload.length > MAX_BYTES) {
            throw new ApiException(413, "PAYLOAD_TOO_LARGE", "a webhook event is at most " + MAX_BYTES + " bytes");
        }
        Map<String, String> lower = new HashMap<>();
        for (Map.Entry<String, List<String>> h : headers.getRequestHeaders().entrySet()) {
            if (!h.getValue().isEmpty()) {
                lower.put(h.getKey().toLowerCase(Locale.ROOT), h.getValue().get(0));
            }
        }
        WebhookEvent event;
        try {
            event = provider.verify(payload, lower);
        } catch (BillingProvider.WebhookRejected e) {
            LOG.warn("a {} webhook was refused: {}", provider.name(), e.getMessage());
            throw ApiException.badRequest("webhook refused: " + e.getMessage());
        }
        try {
            applyOnce(provider, event);
        } catch (IOException e) {
            // not stored: the provider delivers it again
            throw BillingResource.unreachable(provider, e);
        }
        return Response.ok(Map.of("received", true, "event", event.id())).build();
    }

    private void applyOnce(BillingProvider provider, WebhookEvent event) throws IOException {
        IOException[] failed = {null};
        boolean fresh = sql.tx(c -> {
            int inserted = Sql.update(
                    c,
                    "INSERT INTO billing_webhook_events (provider, id, type, created, customer_id)"
                            + " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    provider.name(),
                    event.id(),
                    event.type(),
                    Timestamp.from(event.created()),
                    event.customerId());
            if (inserted == 0) {
                return false;
            }
            try {
                apply(provider, event);
            } catch (IOException e) {
                failed[0] = e;
                c.rollback();
            }
            return true;
        });
        if (failed[0] != null) {
            throw failed[0];
        }
        if (!fresh) {
            throw ApiException.conflict("event " + event.id() + " was already received; it changes nothing again");
        }
    }

    private void apply(BillingProvider provider, WebhookEvent event) throws IOException {
        if (event.customerId().isEmpty() || event.kind() == Kind.OTHER) {
            return;
        }
        Optional<Accounts.Account> account = accounts.byCustomer(provider.name(), event.customerId());
        if (account.isEmpty()) {
            LOG.info(
                    "{} event {} is for customer {}, bound to no Principal here",
                    provider.name(),
                    event.id(),
                    event.customerId());
            return;
        }
        if (event.kind() == Kind.TOPUP_CHECKOUT_COMPLETED && event.creditMinor() > 0) {
            provider.addCredit(
                    event.customerId(),
                    event.creditMinor(),
                    settings.topUpCurrency,
                    "atrium-topup-" + event.objectId());
        }
        accounts.refresh(provider, event.customerId());
    }
}
