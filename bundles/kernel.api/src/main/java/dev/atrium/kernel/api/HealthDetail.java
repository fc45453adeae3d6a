package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A line a capability adds to {@code /healthz}: what it runs on and whether that works now (Actions names its job
 * runner). A detail never makes the server unready: the capability stays up and says what it waits for.
 *
 * @since 2.14
 */
@ConsumerType
public interface HealthDetail {

    /** The key of the detail in {@code /healthz}'s {@code details} ({@code actions.runner}). */
    String name();

    /** A short text, e.g. "podman: ready (podman 4.3.1, runc)"; asked at each probe, so cheap. */
    String detail();
}
