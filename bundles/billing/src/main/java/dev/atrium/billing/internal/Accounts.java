package dev.atrium.billing.internal;

import dev.atrium.billing.api.BillingProvider;
import dev.atrium.billing.api.BillingProvider.AccountState;
import dev.atrium.kernel.api.DatabaseChannels;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.kernel.api.Sql;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;

/**
 * The explicit binding of a Principal to the provider's customer, and the account state last read from the provider.
 * The state is never edited from an event's contents: every event makes it read again from the provider, so events
 * that arrive late or out of order leave the state the provider holds now.
 */
@Component(service = Accounts.class)
public class Accounts {

    static final String CHANNEL = "atrium_billing_accounts";

    /** A Principal's binding and state. */
    record Account(
            String principalId,
            String provider,
            String customerId,
            String creationKey,
            String subscriptionStatus,
            String priceId,
            Instant periodEnd,
            long creditMinor,
            String currency,
            Instant refreshedAt) {

        static Account of(ResultSet rs) throws SQLException {
            return new Account(
                    rs.getString("principal_id"),
                    rs.getString("provider"),
                    rs.getString("customer_id"),
                    rs.getString("creation_key"),
                    rs.getString("subscription_status"),
                    rs.getString("price_id"),
                    rs.getTimestamp("period_end") == null ? null : Sql.instant(rs, "period_end"),
                    rs.getLong("credit_minor"),
                    rs.getString("currency"),
                    rs.getTimestamp("refreshed_at") == null ? null : Sql.instant(rs, "refreshed_at"));
        }

        boolean subscribed() {
            return subscriptionStatus.equals("active") || subscriptionStatus.equals("trialing");
        }
    }

    private final Sql sql;
    private final PrincipalDirectory principals;
    private final CopyOnWriteArrayList<Consumer<String>> changeListeners = new CopyOnWriteArrayList<>();
    private final DatabaseChannels.Subscription subscription;

    @Activate
    public Accounts(
            @Reference DataSource dataSource,
            @Reference UsageLedger ledger, // its activation applies the schema
            @Reference PrincipalDirectory principals,
            @Reference DatabaseChannels channels) {
        this.sql = new Sql(dataSource);
        this.principals = principals;
        this.subscription = channels.listen(CHANNEL, new DatabaseChannels.Listener() {
            @Override
            public void notified(String principalId) {
                changeListeners.forEach(l -> l.accept(principalId));
            }

            @Override
            public void listening() {
                // what changed while nobody listened is unknown: every kept decision goes
                changeListeners.forEach(l -> l.accept(""));
            }
        });
    }

    @Deactivate
    void deactivate() {
        subscription.close();
    }

    /** Tells {@code listener} the Principal whose account changed on any instance ({@code ""}: possibly any). */
    void onChange(Consumer<String> listener) {
        changeListeners.add(listener);
    }

    Optional<Account> of(String principalId, String provider) {
        return sql.one(
                "SELECT * FROM billing_accounts WHERE principal_id = ? AND provider = ?",
                Account::of,
                principalId,
                provider);
    }

    Optional<Account> byCustomer(String provider, String customerId) {
        return sql.one(
                "SELECT * FROM billing_accounts WHERE provider = ? AND customer_id = ?",
                Account::of,
                provider,
                customerId);
    }

    /**
     * The Principal's customer at the provider, created on first use. The creation carries a key kept before the
     * call, so a crash or a concurrent request between the call and the binding's write makes no second customer.
     */
    String customer(String principalId, BillingProvider provider) throws IOException {
        sql.update(
                "INSERT INTO billing_accounts (principal_id, provider) VALUES (?, ?)"
                        + " ON CONFLICT (principal_id) DO NOTHING",
                principalId,
                provider.name());
        Account account = of(principalId, provider.name())
                .orElseThrow(
                        () -> new IOException("the billing account of this Principal belongs to another provider"));
        if (account.customerId() != null) {
            return account.customerId();
        }
        PrincipalDirectory.Entry who = principals.get(principalId).orElse(null);
        String name = who == null ? "" : (who.name() == null || who.name().isEmpty() ? who.username() : who.name());
        String email = who == null ? null : who.email();
        String customer = provider.createCustomer(principalId, name, email, account.creationKey());
        sql.update(
                "UPDATE billing_accounts SET customer_id = ? WHERE principal_id = ? AND customer_id IS NULL",
                customer,
                principalId);
        return of(principalId, provider.name()).map(Account::customerId).orElse(customer);
    }

    /** Reads the customer's state from the provider and keeps it; the Principal bound, if any. */
    Optional<String> refresh(BillingProvider provider, String customerId) throws IOException {
        AccountState state = provider.account(customerId);
        Optional<String> principal = sql.one(
                "UPDATE billing_accounts SET subscription_status = ?, price_id = ?, period_end = ?, credit_minor = ?,"
                        + " currency = ?, refreshed_at = now() WHERE provider = ? AND customer_id = ?"
                        + " RETURNING principal_id",
                rs -> rs.getString(1),
                state.subscriptionStatus(),
                state.priceId(),
                state.periodEnd() == null ? null : Timestamp.from(state.periodEnd()),
                state.creditMinor(),
                state.currency(),
                provider.name(),
                customerId);
        principal.ifPresent(this::changed);
        return principal;
    }

    /** Drops every instance's kept decision for the Principal. */
    void changed(String principalId) {
        changeListeners.forEach(l -> l.accept(principalId));
        sql.run(c -> {
            Sql.exec(c, "SELECT pg_notify(?, ?)", CHANNEL, principalId);
            return null;
        });
    }
}
