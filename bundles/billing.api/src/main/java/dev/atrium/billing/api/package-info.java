/**
 * The billing port. Capabilities record {@link dev.atrium.billing.api.UsageEvent}s through the
 * {@link dev.atrium.billing.api.UsageRecorder} and ask the {@link dev.atrium.billing.api.BillingGate} before metered
 * work; a capability holding billed data registers a {@link dev.atrium.billing.api.UsageSampler}; a payment provider
 * bundle implements {@link dev.atrium.billing.api.BillingProvider}. The core never knows
 * which provider is behind the port.
 */
@org.osgi.annotation.versioning.Version("1.0.0")
@org.osgi.annotation.bundle.Export
package dev.atrium.billing.api;
