package dev.atrium.billing.internal;

import dev.atrium.billing.api.BillingGate;
import dev.atrium.billing.internal.Accounts.Account;
import dev.atrium.billing.internal.BillingSettings.Plan;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.Sql;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The {@code billing.meter} gate. A Principal's decision inputs (account state, plan, the month's use of a meter) are
 * kept for a few seconds, and dropped on every instance when the provider reports a change of the account. With no
 * provider chosen, everything is allowed.
 */
@Component(service = {BillingGate.class, Gate.class})
public class Gate implements BillingGate {

    private static final int MAX_OWNERS = 100_000;

    private final BillingSettings settings;
    private final ProviderChoice choice;
    private final Accounts accounts;
    private final SpaceDirectory spaces;
    private final Sql sql;
    private final Map<String, Kept> kept = new ConcurrentHashMap<>();
    /**
     * Workspace owners, asked of the kernel once per workspace: the gate runs on hot paths (each vector query, queue
     * send, model turn), and a workspace's owner never changes (the spec has no owner transfer).
     */
    private final Map<String, String> owners = new ConcurrentHashMap<>();

    /** What a Principal's decisions are made of, until {@code until}. */
    private record Kept(Instant until, Optional<Account> account, Map<String, Long> used) {}

    @Activate
    public Gate(
            @Reference BillingSettings settings,
            @Reference ProviderChoice choice,
            @Reference Accounts accounts,
            @Reference SpaceDirectory spaces,
            @Reference DataSource dataSource) {
        this.settings = settings;
        this.choice = choice;
        this.accounts = accounts;
        this.spaces = spaces;
        this.sql = new Sql(dataSource);
        accounts.onChange(principal -> {
            if (principal.isEmpty()) {
                kept.clear();
            } else {
                kept.remove(principal);
            }
        });
    }

    @Override
    public Decision check(String spaceId, String meter) {
        if (!enforcing()) {
            return Decision.allow(meter);
        }
        String owner = owners.get(spaceId);
        if (owner == null) {
            Optional<String> found = spaces.byId(spaceId).map(SpaceRef::ownerPrincipalId);
            if (found.isEmpty()) {
                return Decision.allow(meter); // the work itself answers that the workspace does not exist
            }
            if (owners.size() >= MAX_OWNERS) {
                owners.clear();
            }
            owner = found.get();
            owners.put(spaceId, owner);
        }
        return decide(owner, meter);
    }

    /** The decision for a Principal, as {@code GET /api/billing} shows it too. */
    Decision decide(String principalId, String meter) {
        Kept k = kept(principalId);
        Optional<Account> account = k.account();
        Optional<Plan> plan;
        if (account.isPresent() && account.get().subscribed()) {
            plan = settings.planOfPrice(account.get().priceId());
        } else if (account.isPresent() && account.get().creditMinor() > 0) {
            return Decision.allow(meter); // prepaid credit pays for what is used
        } else {
            plan = settings.freePlan();
            if (plan.isEmpty()) {
                String status = account.map(Account::subscriptionStatus).orElse("");
                return Decision.deny(
                        meter,
                        (status.isEmpty() ? "no active subscription" : "the subscription is " + status)
                                + " and no credit is left: subscribe (POST /api/billing/subscribe) or top up"
                                + " (POST /api/billing/credits/checkout) to use " + meter);
            }
        }
        Long cap = plan.map(p -> p.limits().get(meter)).orElse(null);
        if (cap == null) {
            return Decision.allow(meter);
        }
        long used = k.used().computeIfAbsent(meter, m -> monthUse(principalId, m));
        if (used >= cap) {
            return Decision.deny(
                    meter,
                    "the plan " + plan.get().name() + " allows " + cap + " " + meter + " a month, and " + used
                            + " are used");
        }
        return Decision.allow(meter);
    }

    private Kept kept(String principalId) {
        Instant now = Instant.now();
        Kept k = kept.get(principalId);
        if (k != null && k.until().isAfter(now)) {
            return k;
        }
        Kept fresh = new Kept(
                now.plusSeconds(settings.gateCacheSeconds),
                accounts.of(principalId, settings.provider),
                new ConcurrentHashMap<>());
        kept.put(principalId, fresh);
        return fresh;
    }

    long monthUse(String principalId, String meter) {
        return sql.one(
                        "SELECT coalesce(sum(q), 0)::bigint FROM ("
                                + " SELECT quantity AS q FROM billing_usage_hours WHERE principal_id = ? AND meter = ?"
                                + " AND hour >= " + UsageLedger.MONTH_START
                                + " UNION ALL SELECT quantity FROM billing_usage_events WHERE NOT aggregated"
                                + " AND principal_id = ? AND meter = ? AND occurred_at >= " + UsageLedger.MONTH_START
                                + ") u",
                        rs -> rs.getLong(1),
                        principalId,
                        meter,
                        principalId,
                        meter)
                .orElse(0L);
    }

    /** Whether the chosen provider is up; a chosen provider that is missing or unconfigured lets everything through. */
    boolean enforcing() {
        return choice.active().isPresent();
    }
}
