package dev.atrium.identity.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/** The JSON the sign-in routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class IdentityJson {

    private IdentityJson() {}

    /** The signed-in user, as {@code GET /api/me} answers it. */
    record Me(
            String email,
            String name,
            String username,
            String picture,
            @JsonProperty("setup_completed") boolean setupCompleted) {}

    /** {@code session_ended}: whether the request's session cookie named a session that is now over. */
    record LoggedOut(
            boolean success, @JsonProperty("session_ended") boolean sessionEnded) {}

    record UsernameInput(String username) {}

    /** A profile change: {@code name} and/or {@code picture} (an http(s) URL; {@code avatar_url} is read as well). */
    record ProfileInput(
            String name,
            String picture,
            @JsonProperty("avatar_url") String avatarUrl) {}

    /** An external identity linked to the user: the provider's name and its subject there. */
    record Link(
            String provider,
            String subject,
            @JsonProperty("created_at") Instant createdAt) {}

    record Links(List<Link> links) {}

    /** An OpenID Connect provider ({@code type} {@code oidc}); {@code scopes} space-separated, null for the default. */
    record Provider(
            String name,
            String type,
            String issuer,
            @JsonProperty("client_id") String clientId,
            String scopes) {}

    record Providers(List<Provider> providers) {}

    record OneProvider(Provider provider) {}

    /** A provider's settings: {@code issuer} and {@code client_id} required. */
    record ProviderInput(
            String issuer,
            @JsonProperty("client_id") String clientId,
            @JsonProperty("client_secret") String clientSecret,
            String scopes) {}

    /** A local user to add; without {@code password} one is generated. */
    record LocalUserInput(String username, String password) {}

    record LocalUserRef(String id, String username) {}

    /** The user added; {@code password} only when it was generated (shown this once). */
    record LocalUser(LocalUserRef user, String password) {}

    /** The session's user ({@code username} and {@code name} empty strings when unset). */
    record SessionUser(String id, String username, String name) {}

    /** The browser session: {@code csrf_token} goes with every state-changing request the session makes. */
    record Session(
            boolean authenticated,
            SessionUser user,
            String provider,
            @JsonProperty("csrf_token") String csrfToken,
            @JsonProperty("expires_at") Instant expiresAt) {}
}
