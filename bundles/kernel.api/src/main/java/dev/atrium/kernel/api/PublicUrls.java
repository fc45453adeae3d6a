package dev.atrium.kernel.api;

import java.net.URI;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The server's public base URL, as the operator configured it: what the OAuth issuer, discovery documents, sign-in
 * redirects and clone URLs are built from. A request's Host header is anyone's to choose, so it decides them only
 * when nothing is configured (the kernel warns at start when that is so).
 */
@ProviderType
public interface PublicUrls {

    /** The configured base URL ({@code scheme://host[:port][/path]}, no trailing slash), or empty when unset. */
    Optional<String> configured();

    /**
     * The base URL to publish for a request whose own base URI (scheme and authority as it arrived) is
     * {@code requestBase}: the configured one, else the request's scheme and authority.
     */
    default String base(URI requestBase) {
        return configured().orElseGet(() -> requestBase.getScheme() + "://" + requestBase.getRawAuthority());
    }
}
