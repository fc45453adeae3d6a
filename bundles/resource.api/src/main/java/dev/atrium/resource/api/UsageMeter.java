package dev.atrium.resource.api;

import org.osgi.annotation.versioning.ProviderType;

/** Counts what a resource used, for metering and billing. Recording is cheap and never fails the call. */
@ProviderType
public interface UsageMeter {

    /**
     * Adds {@code amount} to a counter of the resource.
     *
     * @param metric a short name such as {@code reads}, {@code writes}, {@code bytes_stored}, {@code rows_read}
     * @param amount a non-negative amount
     */
    void record(String metric, long amount);
}
