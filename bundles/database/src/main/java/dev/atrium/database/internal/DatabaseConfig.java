package dev.atrium.database.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(name = "Atrium database", description = "Where Atrium keeps its records")
public @interface DatabaseConfig {

    @AttributeDefinition(
            description = "JDBC URL of an external PostgreSQL (--db-url, ATRIUM_DB_URL); empty: embedded in <data>/pg")
    String url() default "";

    @AttributeDefinition(
            description = "The data directory (--data, ATRIUM_DATA); the embedded PostgreSQL lives in its pg/")
    String dataDirectory() default "data";

    @AttributeDefinition(description = "Maximum connections in the pool")
    int maxPoolSize() default 16;

    @AttributeDefinition(description = "Connections kept open while idle")
    int minIdle() default 2;

    @AttributeDefinition(description = "Milliseconds a caller waits for a pooled connection")
    long connectionTimeoutMs() default 10_000;

    @AttributeDefinition(
            description = "Where pristine embedded clusters are kept to be copied instead of running initdb"
                    + " on a fresh data directory (ATRIUM_DB_CLUSTER_TEMPLATES); empty: <java.io.tmpdir>/embedded-pg, beside the"
                    + " embedded binaries; off: always run initdb")
    String clusterTemplates() default "";
}
