package dev.atrium.services.domains.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** The configuration (PID {@code dev.atrium.services.domains}) every component of custom domains reads. */
@ObjectClassDefinition(name = "Atrium services' custom domains and certificates")
@interface DomainsConfig {

    String PID = "dev.atrium.services.domains";

    @AttributeDefinition(
            description =
                    "The data directory (--data, ATRIUM_DATA); certificate keys are sealed with keys/services/env.key")
    String dataDirectory() default "data";

    @AttributeDefinition(
            description =
                    "DNS server (host or host:port) asked for custom-domain TXT records; empty: the first nameserver of /etc/resolv.conf")
    String dnsResolver() default "";

    @AttributeDefinition(
            description =
                    "Port the HTTP challenge of a custom domain is fetched from (http://<domain>:<port>/.well-known/atrium-challenge/<token>)")
    int challengeHttpPort() default 80;

    @AttributeDefinition(description = "Seconds a custom-domain check may take")
    int verifyTimeoutSeconds() default 5;

    @AttributeDefinition(
            description =
                    "ACME directory certificates for verified custom domains are ordered from (ATRIUM_SERVICES_ACME_DIRECTORY_URL)")
    String acmeDirectoryUrl() default "https://acme-v02.api.letsencrypt.org/directory";

    @AttributeDefinition(description = "Contact email of the ACME account (ATRIUM_SERVICES_ACME_EMAIL); empty: none")
    String acmeContactEmail() default "";

    @AttributeDefinition(
            description =
                    "PEM file of a CA trusted, besides the JDK's, for the ACME server's own HTTPS (ATRIUM_SERVICES_ACME_CA_FILE); empty: the JDK's only")
    String acmeTrustedCaFile() default "";

    @AttributeDefinition(description = "Seconds one certificate order may take before refresh-ssl gives up")
    int acmeTimeoutSeconds() default 60;

    @AttributeDefinition(
            description =
                    "Port of the HTTPS listener serving the certificates of verified custom domains by SNI, on the HTTP "
                            + "listener's address (ATRIUM_SERVICES_HTTPS_PORT); 0: no HTTPS listener")
    int httpsPort() default 0;

    @AttributeDefinition(
            description =
                    "A certificate is renewed when it expires within this many days (ATRIUM_SERVICES_CERT_RENEW_DAYS)")
    int certRenewBeforeDays() default 30;

    @AttributeDefinition(
            description = "Seconds between two looks for certificates to renew (ATRIUM_SERVICES_CERT_RENEW_CHECK_S)")
    int certRenewCheckSeconds() default 600;
}
