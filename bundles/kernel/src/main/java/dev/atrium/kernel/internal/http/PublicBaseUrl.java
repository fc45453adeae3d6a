package dev.atrium.kernel.internal.http;

import dev.atrium.kernel.api.PublicUrls;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel's {@link PublicUrls}: the {@code publicBaseUrl} of the kernel's HTTP configuration (by default
 * {@code ATRIUM_PUBLIC_URL}, see bundles/config). It shares the envelope's configuration
 * ({@link RequestEnvelope.Config}): one PID for the server's HTTP settings.
 */
@Component(configurationPid = "dev.atrium.kernel.http", configurationPolicy = ConfigurationPolicy.OPTIONAL)
public class PublicBaseUrl implements PublicUrls {

    private static final Logger LOG = LoggerFactory.getLogger(PublicBaseUrl.class);

    private final Optional<String> configured;

    @Activate
    public PublicBaseUrl(RequestEnvelope.Config config) {
        String value =
                config.publicBaseUrl().isBlank() ? null : config.publicBaseUrl().trim();
        Optional<String> parsed = Optional.empty();
        if (value != null) {
            try {
                parsed = Optional.of(normalize(value));
            } catch (IllegalArgumentException e) {
                LOG.error(
                        "the public base URL '{}' is not usable ({}); falling back to each request's Host header",
                        value,
                        e.getMessage());
            }
        }
        this.configured = parsed;
        if (parsed.isEmpty()) {
            LOG.warn(
                    "no public base URL is configured (publicBaseUrl of dev.atrium.kernel.http, or ATRIUM_PUBLIC_URL): the OAuth issuer, "
                            + "discovery documents and published URLs follow each request's Host header, which any client can set");
        } else {
            LOG.info("public base URL: {}", parsed.get());
        }
    }

    PublicBaseUrl(Optional<String> configured) {
        this.configured = configured;
    }

    @Override
    public Optional<String> configured() {
        return configured;
    }

    /** An absolute http(s) URL with a host, no user info, query or fragment, without the trailing slash. */
    static String normalize(String value) {
        URI uri;
        try {
            uri = new URI(value);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not a URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("it must be an http or https URL");
        }
        if (uri.getHost() == null
                || uri.getRawUserInfo() != null
                || uri.getRawQuery() != null
                || uri.getRawFragment() != null) {
            throw new IllegalArgumentException("it must have a host and no user info, query or fragment");
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath().replaceAll("/+$", "");
        return scheme + "://" + uri.getRawAuthority() + path;
    }
}
