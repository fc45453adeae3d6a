package dev.atrium.kernel.api;

import org.osgi.annotation.versioning.ProviderType;
import org.osgi.framework.Bundle;

/**
 * Applies a bundle's own schema migrations: the bundle ships ordered SQL files {@code /db/migration/V<n>__<what>.sql};
 * each is applied once, in order, in its own transaction, and recorded under the bundle's symbolic name.
 * Several instances may start at once: application is serialised by a database lock.
 */
@ProviderType
public interface SchemaMigrations {

    /** Applies the bundle's pending migrations; returns how many were applied. */
    int apply(Bundle bundle);
}
