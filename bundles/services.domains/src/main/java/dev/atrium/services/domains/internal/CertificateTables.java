package dev.atrium.services.domains.internal;

import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.services.api.ServiceDomains;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * This bundle's tables (ACME accounts, pending challenges, the certificates of domains), migrated on activation. A
 * certificate's row goes with its domain's ({@code ON DELETE CASCADE} on the services' {@code service_domains}), so the
 * migration waits for the services capability ({@link ServiceDomains}), whose schema has that table.
 */
@Component(service = CertificateTables.class)
public class CertificateTables {

    private final Sql sql;

    @Activate
    public CertificateTables(
            @Reference DataSource dataSource,
            @Reference SchemaMigrations migrations,
            @Reference ServiceDomains domains,
            BundleContext context) {
        migrations.apply(context.getBundle());
        this.sql = new Sql(dataSource);
    }

    Sql sql() {
        return sql;
    }
}
