package dev.atrium.billing.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Asked before metered work (the {@code billing.meter} capability). Answers from a per-Principal decision kept for
 * a few seconds, dropped at once when the payment provider reports a change of the account.
 */
@ProviderType
public interface BillingGate {

    /** Whether the Principal owning {@code spaceId} may do work counted on {@code meter}. */
    Decision check(String spaceId, String meter);

    /**
     * A gate's answer.
     *
     * @param allowed whether the work may go on
     * @param meter   the meter asked about
     * @param reason  why it is refused, for the caller's error message; empty when allowed
     */
    record Decision(boolean allowed, String meter, String reason) {
        public static Decision allow(String meter) {
            return new Decision(true, meter, "");
        }

        public static Decision deny(String meter, String reason) {
            return new Decision(false, meter, reason);
        }
    }
}
