package dev.atrium.billing.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.billing.api.Meters;
import dev.atrium.kernel.api.JsonMappers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Operator configuration of billing (ConfigAdmin pid {@code dev.atrium.billing}); where the operator's configuration
 * sets nothing, the {@code ATRIUM_*} environment variable named in a description supplies the value (bundles/config).
 */
@Component(
        service = BillingSettings.class,
        configurationPid = "dev.atrium.billing",
        configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = BillingSettings.Config.class)
public class BillingSettings {

    private static final ObjectMapper JSON = JsonMappers.create();

    @ObjectClassDefinition(name = "Atrium billing")
    public @interface Config {
        @AttributeDefinition(
                description =
                        "The payment provider: none (nothing is gated or billed) or stripe (ATRIUM_BILLING_PROVIDER)")
        String provider() default "none";

        @AttributeDefinition(
                description =
                        "Plans as a JSON array of {id, name, price, limits: {meter: monthly cap}}; the plan without"
                                + " a price applies to Principals without a subscription or credit (ATRIUM_BILLING_PLANS)")
        String plans() default "";

        @AttributeDefinition(description = "Currency of credit top-ups (ATRIUM_BILLING_TOPUP_CURRENCY)")
        String topUpCurrency() default "usd";

        @AttributeDefinition(description = "Smallest top-up, in minor units (ATRIUM_BILLING_TOPUP_MINIMUM)")
        long topUpMinimum() default 500;

        @AttributeDefinition(description = "Largest top-up, in minor units (ATRIUM_BILLING_TOPUP_MAXIMUM)")
        long topUpMaximum() default 100_000;

        @AttributeDefinition(
                description = "Seconds a Principal's gate decision is kept; a provider event drops it at once"
                        + " (ATRIUM_BILLING_GATE_CACHE_S)")
        int gateCacheSeconds() default 5;

        @AttributeDefinition(description = "Seconds between aggregations of usage events (ATRIUM_BILLING_AGGREGATE_S)")
        int aggregateSeconds() default 60;

        @AttributeDefinition(description = "Seconds between usage reports to the provider (ATRIUM_BILLING_REPORT_S)")
        int reportSeconds() default 60;

        @AttributeDefinition(
                description = "Milliseconds between moves of the local usage outbox into the database"
                        + " (ATRIUM_BILLING_OUTBOX_FLUSH_MS)")
        int outboxFlushMillis() default 500;

        @AttributeDefinition(
                description =
                        "Seconds between samples of what capabilities hold (stored bytes), for byte-hour meters; 0:"
                                + " none (ATRIUM_BILLING_SAMPLE_S)")
        int sampleSeconds() default 600;

        @AttributeDefinition(description = "SMTP server invoices are mailed through; empty: no mail (ATRIUM_SMTP_HOST)")
        String smtpHost() default "";

        @AttributeDefinition(description = "SMTP port (ATRIUM_SMTP_PORT)")
        int smtpPort() default 587;

        @AttributeDefinition(description = "SMTP security: starttls, tls or none (ATRIUM_SMTP_SECURITY)")
        String smtpSecurity() default "starttls";

        @AttributeDefinition(description = "SMTP user name; empty: no authentication (ATRIUM_SMTP_USERNAME)")
        String smtpUsername() default "";

        @AttributeDefinition(description = "SMTP password (ATRIUM_SMTP_PASSWORD)")
        String smtpPassword() default "";

        @AttributeDefinition(description = "The From address of mailed invoices (ATRIUM_SMTP_FROM)")
        String smtpFrom() default "";

        @AttributeDefinition(
                description = "The data directory (--data, ATRIUM_DATA); the usage outbox lives in its billing/")
        String dataDirectory() default "data";
    }

    /** A plan: {@code price} is the provider's price id, empty for the plan of those without a subscription. */
    record Plan(String id, String name, String price, Map<String, Long> limits) {}

    final String provider;
    final List<Plan> plans;
    final String plansError;
    final String topUpCurrency;
    final long topUpMinimum;
    final long topUpMaximum;
    final int gateCacheSeconds;
    final int aggregateSeconds;
    final int reportSeconds;
    final int outboxFlushMillis;
    final int sampleSeconds;
    final String smtpHost;
    final int smtpPort;
    final String smtpSecurity;
    final String smtpUsername;
    final String smtpPassword;
    final String smtpFrom;
    final Path outbox;

    @Activate
    public BillingSettings(Config config) {
        provider = config.provider().trim().toLowerCase(Locale.ROOT);
        List<Plan> parsed = List.of();
        String error = "";
        try {
            parsed = parsePlans(config.plans());
        } catch (IllegalArgumentException e) {
            error = e.getMessage();
        }
        plans = parsed;
        plansError = error;
        topUpCurrency = config.topUpCurrency().trim().toLowerCase(Locale.ROOT);
        topUpMinimum = Math.max(1, config.topUpMinimum());
        topUpMaximum = Math.max(topUpMinimum, config.topUpMaximum());
        gateCacheSeconds = Math.max(0, config.gateCacheSeconds());
        aggregateSeconds = Math.max(1, config.aggregateSeconds());
        reportSeconds = Math.max(1, config.reportSeconds());
        outboxFlushMillis = Math.max(10, config.outboxFlushMillis());
        sampleSeconds = Math.max(0, config.sampleSeconds());
        smtpHost = config.smtpHost().trim();
        smtpPort = config.smtpPort();
        smtpSecurity = config.smtpSecurity().trim().toLowerCase(Locale.ROOT);
        smtpUsername = config.smtpUsername().trim();
        smtpPassword = config.smtpPassword();
        smtpFrom = config.smtpFrom().trim();
        outbox = Path.of(config.dataDirectory()).toAbsolutePath().resolve("billing");
    }

    boolean billing() {
        return !provider.isEmpty() && !provider.equals("none");
    }

    Optional<Plan> plan(String id) {
        return plans.stream().filter(p -> p.id().equals(id)).findFirst();
    }

    Optional<Plan> planOfPrice(String price) {
        return price.isEmpty()
                ? Optional.empty()
                : plans.stream().filter(p -> p.price().equals(price)).findFirst();
    }

    /** The plan of those without a subscription or credit, if the operator set one. */
    Optional<Plan> freePlan() {
        return plans.stream().filter(p -> p.price().isEmpty()).findFirst();
    }

    static List<Plan> parsePlans(String text) {
        if (text == null || text.isBlank()) {
            return List.of();
        }
        JsonNode root;
        try {
            root = JSON.readTree(text);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("ATRIUM_BILLING_PLANS is not JSON: " + e.getOriginalMessage());
        }
        if (!root.isArray()) {
            throw new IllegalArgumentException("ATRIUM_BILLING_PLANS must be a JSON array of plans");
        }
        List<Plan> out = new ArrayList<>();
        int free = 0;
        for (JsonNode p : root) {
            String id = p.path("id").asText("").trim();
            if (id.isEmpty() || !id.matches("[a-z0-9][a-z0-9_-]{0,39}")) {
                throw new IllegalArgumentException("a plan needs an id of a-z, 0-9, _ and -: " + p);
            }
            String price = p.path("price").asText("").trim();
            if (price.isEmpty()) {
                free++;
            }
            Map<String, Long> limits = new LinkedHashMap<>();
            var fields = p.path("limits").fields();
            while (fields.hasNext()) {
                var e = fields.next();
                if (!Meters.all().contains(e.getKey())) {
                    throw new IllegalArgumentException(
                            "plan " + id + " limits an unknown meter " + e.getKey() + "; meters: " + Meters.all());
                }
                if (!e.getValue().canConvertToLong() || e.getValue().asLong() < 0) {
                    throw new IllegalArgumentException(
                            "plan " + id + ": the limit of " + e.getKey() + " must be a whole number, at least 0");
                }
                limits.put(e.getKey(), e.getValue().asLong());
            }
            out.add(new Plan(id, p.path("name").asText(id), price, Map.copyOf(limits)));
        }
        if (free > 1) {
            throw new IllegalArgumentException("at most one plan may be without a price");
        }
        return List.copyOf(out);
    }
}
