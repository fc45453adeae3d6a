package dev.atrium.oauth.internal;

/** An OAuth protocol error (RFC 6749 §5.2, §4.1.2.1): its code, description and HTTP status. */
final class OAuthError extends RuntimeException {

    private static final long serialVersionUID = 1L;

    final String error;
    final int status;

    OAuthError(String error, String description, int status) {
        super(description);
        this.error = error;
        this.status = status;
    }

    static OAuthError invalidRequest(String description) {
        return new OAuthError("invalid_request", description, 400);
    }

    static OAuthError invalidClient(String description) {
        return new OAuthError("invalid_client", description, 401);
    }

    static OAuthError invalidGrant(String description) {
        return new OAuthError("invalid_grant", description, 400);
    }

    static OAuthError invalidScope(String description) {
        return new OAuthError("invalid_scope", description, 400);
    }

    static OAuthError unauthorizedClient(String description) {
        return new OAuthError("unauthorized_client", description, 400);
    }

    static OAuthError unsupportedGrantType(String description) {
        return new OAuthError("unsupported_grant_type", description, 400);
    }

    static OAuthError invalidToken(String description) {
        return new OAuthError("invalid_token", description, 401);
    }
}
