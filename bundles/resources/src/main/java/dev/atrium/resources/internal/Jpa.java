package dev.atrium.resources.internal;

import dev.atrium.kernel.api.SchemaMigrations;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.EntityTransaction;
import jakarta.persistence.PersistenceException;
import jakarta.persistence.SharedCacheMode;
import jakarta.persistence.ValidationMode;
import jakarta.persistence.spi.ClassTransformer;
import jakarta.persistence.spi.PersistenceUnitInfo;
import jakarta.persistence.spi.PersistenceUnitTransactionType;
import java.net.URL;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import javax.sql.DataSource;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resources core's EntityManagerFactory: EclipseLink on the kernel's {@link DataSource}, created in this bundle
 * (EclipseLink 4 registers no {@code PersistenceProvider} service), with this bundle's class loader, weaving off, no
 * schema generation (the bundle's SQL migrations own the schema) and no shared cache (another instance may change
 * rows). Closed when the component deactivates, so a stopped or updated bundle leaves no EclipseLink session holding
 * its classes.
 */
@Component(service = Jpa.class)
public class Jpa {

    private static final Logger LOG = LoggerFactory.getLogger(Jpa.class);

    static final List<Class<?>> ENTITIES =
            List.of(ResourceRow.class, AccessRow.class, TokenRow.class, BindingRow.class, InstantColumn.class);

    /**
     * Built beside the server's start rather than in it (0.3 s warm, over a second on a cold JVM); the first use waits
     * for it.
     */
    private final CompletableFuture<EntityManagerFactory> factory;

    @Activate
    public Jpa(@Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        migrations.apply(context.getBundle());
        Bundle bundle = context.getBundle();
        factory = CompletableFuture.supplyAsync(() -> create(dataSource, bundle), r -> {
            Thread t = new Thread(r, "atrium-resources-jpa");
            t.setDaemon(true);
            t.start();
        });
    }

    private static EntityManagerFactory create(DataSource dataSource, Bundle bundle) {
        long started = System.nanoTime();
        ClassLoader loader = Jpa.class.getClassLoader();
        Map<String, Object> properties = new HashMap<>();
        properties.put("eclipselink.classloader", loader);
        properties.put("jakarta.persistence.nonJtaDataSource", dataSource);
        properties.put("eclipselink.weaving", "false");
        properties.put("eclipselink.target-database", "org.eclipse.persistence.platform.database.PostgreSQLPlatform");
        properties.put("eclipselink.ddl-generation", "none");
        properties.put("eclipselink.cache.shared.default", "false");
        properties.put("eclipselink.logging.logger", "JavaLogger");
        // failures reach the caller as exceptions and are logged once by the kernel; EclipseLink would log each again
        properties.put("eclipselink.logging.level", "OFF");
        properties.put("eclipselink.jdbc.bind-parameters", "true");
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            EntityManagerFactory emf = new org.eclipse.persistence.jpa.PersistenceProvider()
                    .createContainerEntityManagerFactory(
                            new Unit(loader, dataSource, bundle.getEntry("/")), properties);
            // EclipseLink logs in lazily: do it now, so a broken mapping shows here, logged, rather than at a request
            emf.createEntityManager().close();
            LOG.info(
                    "resources: EclipseLink EntityManagerFactory ready in {} ms",
                    (System.nanoTime() - started) / 1_000_000);
            return emf;
        } catch (RuntimeException e) {
            LOG.error("resources: the EclipseLink EntityManagerFactory could not be built", e);
            throw e;
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    private EntityManagerFactory emf() {
        try {
            return factory.join();
        } catch (CompletionException e) {
            throw new IllegalStateException(
                    "the resources' EclipseLink EntityManagerFactory could not be built", e.getCause());
        }
    }

    @Deactivate
    void close() {
        try {
            EntityManagerFactory emf = factory.join();
            if (emf.isOpen()) {
                emf.close();
            }
        } catch (CompletionException | java.util.concurrent.CancellationException e) {
            // nothing was built, so nothing holds this bundle's classes
        }
    }

    /** Runs {@code work} in one transaction, committed when it returns, rolled back when it throws. */
    public <T> T tx(Function<EntityManager, T> work) {
        EntityManager em = emf().createEntityManager();
        EntityTransaction tx = em.getTransaction();
        try {
            tx.begin();
            T result = work.apply(em);
            tx.commit();
            return result;
        } catch (RuntimeException e) {
            if (tx.isActive()) {
                tx.rollback();
            }
            throw translate(e);
        } finally {
            em.close();
        }
    }

    /** Runs {@code work} without a transaction (reads). */
    public <T> T read(Function<EntityManager, T> work) {
        EntityManager em = emf().createEntityManager();
        try {
            return work.apply(em);
        } catch (RuntimeException e) {
            throw translate(e);
        } finally {
            em.close();
        }
    }

    /** A database failure through the kernel's one policy ({@link dev.atrium.kernel.api.Sql#translate}). */
    private static RuntimeException translate(RuntimeException e) {
        if (e instanceof PersistenceException || e instanceof org.eclipse.persistence.exceptions.DatabaseException) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof java.sql.SQLException sql) {
                    return dev.atrium.kernel.api.Sql.translate(sql);
                }
            }
        }
        return e;
    }

    /** The persistence unit, described in code: no persistence.xml for EclipseLink to look for on a class path. */
    private record Unit(ClassLoader loader, DataSource dataSource, URL root) implements PersistenceUnitInfo {
        @Override
        public String getPersistenceUnitName() {
            return "atrium-resources";
        }

        @Override
        public String getPersistenceProviderClassName() {
            return org.eclipse.persistence.jpa.PersistenceProvider.class.getName();
        }

        @Override
        public PersistenceUnitTransactionType getTransactionType() {
            return PersistenceUnitTransactionType.RESOURCE_LOCAL;
        }

        @Override
        public DataSource getJtaDataSource() {
            return null;
        }

        @Override
        public DataSource getNonJtaDataSource() {
            return dataSource;
        }

        @Override
        public List<String> getMappingFileNames() {
            return List.of();
        }

        @Override
        public List<URL> getJarFileUrls() {
            return List.of();
        }

        @Override
        public URL getPersistenceUnitRootUrl() {
            // the bundle's root (a bundle:// URL): EclipseLink names the unit after it and looks there for orm.xml
            return root;
        }

        @Override
        public List<String> getManagedClassNames() {
            return ENTITIES.stream().map(Class::getName).toList();
        }

        @Override
        public boolean excludeUnlistedClasses() {
            return true;
        }

        @Override
        public SharedCacheMode getSharedCacheMode() {
            return SharedCacheMode.NONE;
        }

        @Override
        public ValidationMode getValidationMode() {
            return ValidationMode.NONE;
        }

        @Override
        public Properties getProperties() {
            return new Properties();
        }

        @Override
        public String getPersistenceXMLSchemaVersion() {
            return "3.0";
        }

        @Override
        public ClassLoader getClassLoader() {
            return loader;
        }

        @Override
        public void addTransformer(ClassTransformer transformer) {
            // weaving is off: nothing transforms this bundle's classes
        }

        @Override
        public ClassLoader getNewTempClassLoader() {
            return loader;
        }
    }
}
