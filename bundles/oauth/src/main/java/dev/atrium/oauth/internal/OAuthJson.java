package dev.atrium.oauth.internal;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.time.Instant;
import java.util.List;

/** The JSON the OAuth routes take and answer, for the API reference ({@link dev.atrium.kernel.api.JsonShape}). */
final class OAuthJson {

    private OAuthJson() {}

    /** A public RSA signing key (RFC 7517): modulus {@code n} and exponent {@code e}, base64url. */
    record Jwk(String kty, String e, String use, String kid, String alg, String n) {}

    record Jwks(List<Jwk> keys) {}

    /**
     * The authorization server's metadata (RFC 8414); the fields from {@code subject_types_supported} on are in the
     * OpenID Connect discovery document only.
     */
    record ServerMetadata(
            String issuer,
            @JsonProperty("authorization_endpoint") String authorizationEndpoint,
            @JsonProperty("token_endpoint") String tokenEndpoint,
            @JsonProperty("device_authorization_endpoint") String deviceAuthorizationEndpoint,
            @JsonProperty("introspection_endpoint") String introspectionEndpoint,
            @JsonProperty("revocation_endpoint") String revocationEndpoint,
            @JsonProperty("registration_endpoint") String registrationEndpoint,
            @JsonProperty("userinfo_endpoint") String userinfoEndpoint,
            @JsonProperty("end_session_endpoint") String endSessionEndpoint,
            @JsonProperty("jwks_uri") String jwksUri,
            @JsonProperty("scopes_supported") List<String> scopesSupported,
            @JsonProperty("response_types_supported") List<String> responseTypesSupported,
            @JsonProperty("response_modes_supported") List<String> responseModesSupported,
            @JsonProperty("grant_types_supported") List<String> grantTypesSupported,

            @JsonProperty("token_endpoint_auth_methods_supported")
            List<String> tokenEndpointAuthMethodsSupported,

            @JsonProperty("introspection_endpoint_auth_methods_supported")
            List<String> introspectionEndpointAuthMethodsSupported,

            @JsonProperty("revocation_endpoint_auth_methods_supported")
            List<String> revocationEndpointAuthMethodsSupported,

            @JsonProperty("code_challenge_methods_supported")
            List<String> codeChallengeMethodsSupported,

            @JsonProperty("subject_types_supported") List<String> subjectTypesSupported,

            @JsonProperty("id_token_signing_alg_values_supported")
            List<String> idTokenSigningAlgValuesSupported,

            @JsonProperty("claims_supported") List<String> claimsSupported,
            @JsonProperty("prompt_values_supported") List<String> promptValuesSupported,
            @JsonProperty("claims_parameter_supported") Boolean claimsParameterSupported,
            @JsonProperty("request_parameter_supported") Boolean requestParameterSupported,
            @JsonProperty("request_uri_parameter_supported") Boolean requestUriParameterSupported,
            @JsonProperty("frontchannel_logout_supported") Boolean frontchannelLogoutSupported,
            @JsonProperty("backchannel_logout_supported") Boolean backchannelLogoutSupported) {}

    /** {@code immediate}: sign with the new key at once instead of after the JWKS cache lifetime (default false). */
    record RotateInput(Boolean immediate) {}

    /**
     * An ID token signing key, never its material: {@code state} current, retired (published until
     * {@code published_until}) or expired; {@code signing} whether it signs ID tokens now.
     */
    record SigningKeyView(
            String kid,
            String algorithm,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("signs_from") Instant signsFrom,
            String state,
            @JsonProperty("published_until") Instant publishedUntil,
            boolean signing) {}

    record SigningKeyList(List<SigningKeyView> keys) {}

    /**
     * A key rotation: the new key's id and when it starts signing, the ids of the keys it replaces and until when they
     * stay published.
     */
    record Rotation(
            String kid,
            @JsonProperty("signs_from") Instant signsFrom,
            List<String> replaced,
            @JsonProperty("replaced_published_until") Instant replacedPublishedUntil) {}

    /** The client a consent or device page names. */
    record ClientSummary(
            @JsonProperty("client_id") String clientId,
            @JsonProperty("client_name") String clientName,
            @JsonProperty("client_uri") String clientUri,
            @JsonProperty("logo_uri") String logoUri) {}

    /** A requested scope and what it grants, in words. */
    record Scope(String name, String description) {}

    /** A checked authorization request (its parameters in the query), for the consent page to show. */
    record AuthorizeContext(
            ClientSummary client,
            List<Scope> scopes,
            @JsonProperty("redirect_uri") String redirectUri,
            String state) {}

    /**
     * The consent decision: {@code approve} (required) and the authorization request's parameters as strings, as the
     * context had them in its query.
     */
    record AuthorizeDecision(
            boolean approve,
            @JsonProperty("client_id") String clientId,
            @JsonProperty("redirect_uri") String redirectUri,
            @JsonProperty("response_type") String responseType,
            String scope,
            String state,
            @JsonProperty("code_challenge") String codeChallenge,
            @JsonProperty("code_challenge_method") String codeChallengeMethod,
            String nonce,
            String prompt,
            @JsonProperty("max_age") String maxAge) {}

    /** Where the browser goes next: the client's redirect URI with the code, or with the error. */
    record Redirect(@JsonProperty("redirect_to") String redirectTo) {}

    /** A pending device request, for the device page to show. */
    record DeviceContext(
            @JsonProperty("user_code") String userCode,
            ClientSummary client,
            List<Scope> scopes,
            @JsonProperty("expires_at") Instant expiresAt) {}

    /** Both fields are required. */
    record DeviceDecisionInput(@JsonProperty("user_code") String userCode, boolean approve) {}

    /** {@code status}: {@code approved} or {@code denied}. */
    record DeviceDecision(String status) {}

    /**
     * RFC 7591 client metadata; {@code client_id_issued_at} in seconds since the epoch, {@code scope} space-separated;
     * {@code tos_uri} and {@code policy_uri} only on a client an app's manifest registered.
     */
    record ClientView(
            @JsonProperty("client_id") String clientId,
            @JsonProperty("client_id_issued_at") long clientIdIssuedAt,
            @JsonProperty("client_name") String clientName,
            @JsonProperty("redirect_uris") List<String> redirectUris,
            @JsonProperty("post_logout_redirect_uris") List<String> postLogoutRedirectUris,
            @JsonProperty("grant_types") List<String> grantTypes,
            @JsonProperty("response_types") List<String> responseTypes,
            String scope,
            @JsonProperty("token_endpoint_auth_method") String tokenEndpointAuthMethod,
            @JsonProperty("client_uri") String clientUri,
            @JsonProperty("logo_uri") String logoUri,
            @JsonProperty("tos_uri") String tosUri,
            @JsonProperty("policy_uri") String policyUri,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    /**
     * A client just registered: its metadata, the secret of a confidential client (shown only here; it does not expire,
     * {@code client_secret_expires_at} 0) and, for a dynamic registration (RFC 7592), the token and URI that read it.
     */
    record Registered(
            @JsonUnwrapped ClientView client,
            @JsonProperty("client_secret") String clientSecret,
            @JsonProperty("client_secret_expires_at") Long clientSecretExpiresAt,
            @JsonProperty("registration_access_token") String registrationAccessToken,
            @JsonProperty("registration_client_uri") String registrationClientUri) {}

    /**
     * A client's metadata as sent (RFC 7591 names): {@code scope} is space-separated or an array of scopes
     * ({@code scopes} is read when {@code scope} is absent); {@code token_endpoint_auth_method} is
     * {@code client_secret_basic} (default), {@code client_secret_post} or {@code none}. An update changes the fields
     * sent.
     */
    record ClientInput(
            @JsonProperty("client_name") String clientName,
            @JsonProperty("redirect_uris") List<String> redirectUris,
            @JsonProperty("post_logout_redirect_uris") List<String> postLogoutRedirectUris,
            @JsonProperty("grant_types") List<String> grantTypes,
            String scope,
            String scopes,
            @JsonProperty("token_endpoint_auth_method") String tokenEndpointAuthMethod,
            @JsonProperty("client_uri") String clientUri,
            @JsonProperty("logo_uri") String logoUri) {}

    record Clients(List<ClientView> clients) {}

    record OneClient(ClientView client) {}

    record OneRegistered(Registered client) {}

    record Success(boolean success) {}

    /** An app the user consented to, with the scopes granted. */
    record Consent(
            @JsonProperty("client_id") String clientId,
            @JsonProperty("client_name") String clientName,
            @JsonProperty("client_uri") String clientUri,
            @JsonProperty("logo_uri") String logoUri,
            List<String> scopes,
            @JsonProperty("created_at") Instant createdAt,
            @JsonProperty("updated_at") Instant updatedAt) {}

    record Consents(List<Consent> consents) {}

    /** An OAuth event of the user's: a grant, refresh, revocation, reuse detection or consent change. */
    record AuditLog(
            String id,
            @JsonProperty("client_id") String clientId,
            String event,
            String detail,
            @JsonProperty("created_at") Instant createdAt) {}

    record AuditLogs(List<AuditLog> logs, long total, int limit, int offset) {}

    /** RFC 8628's answer: {@code expires_in} and {@code interval} in seconds. */
    record DeviceAuthorization(
            @JsonProperty("device_code") String deviceCode,
            @JsonProperty("user_code") String userCode,
            @JsonProperty("verification_uri") String verificationUri,
            @JsonProperty("verification_uri_complete") String verificationUriComplete,
            @JsonProperty("expires_in") long expiresIn,
            int interval) {}

    /** OpenID Connect UserInfo: {@code sub} always, the others with the {@code profile} or {@code email} scope when set. */
    record UserInfo(
            String sub,
            @JsonProperty("preferred_username") String preferredUsername,
            String name,
            String picture,
            String email) {}
}
