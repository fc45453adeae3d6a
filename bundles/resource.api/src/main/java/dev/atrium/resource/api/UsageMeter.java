package dev.atrium.resource.api;

import org.osgi.annotation.versioning.ProviderType;

/**
 * Counts what a resource used, for billing's meters (those of {@code dev.atrium.billing.api}); metrics billing does not
 * meter are not kept. Recording is cheap and never fails the call.
 */
@ProviderType
public interface UsageMeter {

    /**
     * Adds {@code amount} to a counter of the resource.
     *
     * @param metric a short name such as {@code reads}, {@code writes}, {@code bytes_stored}, {@code rows_read}
     * @param amount a non-negative amount
     */
    void record(String metric, long amount);

    /**
     * Asks billing's gate before work that {@link #record} will count under {@code metric}; returns when it may go
     * on. A metric billing does not meter is always admitted.
     *
     * @throws dev.atrium.kernel.api.ApiException 402 {@code PAYMENT_REQUIRED}, naming the meter, when the gate refuses
     * @since 1.10
     */
    void admit(String metric);
}
