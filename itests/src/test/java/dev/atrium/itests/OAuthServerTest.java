package dev.atrium.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jwt.JWT;
import com.nimbusds.oauth2.sdk.AccessTokenResponse;
import com.nimbusds.oauth2.sdk.AuthorizationCode;
import com.nimbusds.oauth2.sdk.AuthorizationCodeGrant;
import com.nimbusds.oauth2.sdk.AuthorizationGrant;
import com.nimbusds.oauth2.sdk.AuthorizationRequest;
import com.nimbusds.oauth2.sdk.AuthorizationResponse;
import com.nimbusds.oauth2.sdk.AuthorizationSuccessResponse;
import com.nimbusds.oauth2.sdk.ClientCredentialsGrant;
import com.nimbusds.oauth2.sdk.ErrorObject;
import com.nimbusds.oauth2.sdk.GrantType;
import com.nimbusds.oauth2.sdk.RefreshTokenGrant;
import com.nimbusds.oauth2.sdk.ResponseType;
import com.nimbusds.oauth2.sdk.Scope;
import com.nimbusds.oauth2.sdk.TokenErrorResponse;
import com.nimbusds.oauth2.sdk.TokenIntrospectionRequest;
import com.nimbusds.oauth2.sdk.TokenIntrospectionResponse;
import com.nimbusds.oauth2.sdk.TokenIntrospectionSuccessResponse;
import com.nimbusds.oauth2.sdk.TokenRequest;
import com.nimbusds.oauth2.sdk.TokenResponse;
import com.nimbusds.oauth2.sdk.TokenRevocationRequest;
import com.nimbusds.oauth2.sdk.auth.ClientAuthentication;
import com.nimbusds.oauth2.sdk.auth.ClientSecretBasic;
import com.nimbusds.oauth2.sdk.auth.ClientSecretPost;
import com.nimbusds.oauth2.sdk.auth.Secret;
import com.nimbusds.oauth2.sdk.client.ClientInformationResponse;
import com.nimbusds.oauth2.sdk.client.ClientMetadata;
import com.nimbusds.oauth2.sdk.client.ClientReadRequest;
import com.nimbusds.oauth2.sdk.client.ClientRegistrationRequest;
import com.nimbusds.oauth2.sdk.client.ClientRegistrationResponse;
import com.nimbusds.oauth2.sdk.device.DeviceAuthorizationRequest;
import com.nimbusds.oauth2.sdk.device.DeviceAuthorizationResponse;
import com.nimbusds.oauth2.sdk.device.DeviceAuthorizationSuccessResponse;
import com.nimbusds.oauth2.sdk.device.DeviceCodeGrant;
import com.nimbusds.oauth2.sdk.http.HTTPResponse;
import com.nimbusds.oauth2.sdk.id.ClientID;
import com.nimbusds.oauth2.sdk.id.Issuer;
import com.nimbusds.oauth2.sdk.id.State;
import com.nimbusds.oauth2.sdk.pkce.CodeChallengeMethod;
import com.nimbusds.oauth2.sdk.pkce.CodeVerifier;
import com.nimbusds.oauth2.sdk.token.AccessToken;
import com.nimbusds.oauth2.sdk.token.BearerAccessToken;
import com.nimbusds.oauth2.sdk.token.RefreshToken;
import com.nimbusds.oauth2.sdk.util.URLUtils;
import com.nimbusds.openid.connect.sdk.AuthenticationRequest;
import com.nimbusds.openid.connect.sdk.Nonce;
import com.nimbusds.openid.connect.sdk.OIDCTokenResponse;
import com.nimbusds.openid.connect.sdk.OIDCTokenResponseParser;
import com.nimbusds.openid.connect.sdk.op.OIDCProviderMetadata;
import com.nimbusds.openid.connect.sdk.validators.IDTokenValidator;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The OAuth 2.0 / OpenID Connect server, driven by a real OAuth client library (Nimbus oauth2-oidc-sdk) over real
 * HTTP: the user's approval goes through the consent API as the consent page's script sends it.
 */
@SharedServer
class OAuthServerTest {

    static final String REDIRECT = "http://127.0.0.1:9/callback";

    private final AtriumServer server;
    private AtriumServer.User user;
    private URI base;

    OAuthServerTest(AtriumServer server) {
        this.server = server;
    }

    @BeforeEach
    void user() {
        user = server.newUser("*");
        base = URI.create(server.base());
    }

    record Registered(ClientID id, Secret secret) {
        ClientAuthentication basic() {
            return new ClientSecretBasic(id, secret);
        }
    }

    Registered client(Map<String, Object> extra) {
        Map<String, Object> body =
                new LinkedHashMap<>(Map.of("client_name", "Test app", "redirect_uris", List.of(REDIRECT)));
        body.putAll(extra);
        Http.Reply r = user.http().post("/api/me/oauth/clients", body);
        assertEquals(201, r.status(), r.body());
        JsonNode c = r.json().path("client");
        return new Registered(
                new ClientID(c.path("client_id").asText()),
                c.hasNonNull("client_secret")
                        ? new Secret(c.path("client_secret").asText())
                        : null);
    }

    URI endpoint(String path) {
        return base.resolve(path);
    }

    /** The user approves (or denies) the authorization request {@code request} through the consent API. */
    URI decide(URI request, boolean approve) {
        Map<String, Object> body = new LinkedHashMap<>();
        URLUtils.parseParameters(request.getRawQuery()).forEach((k, v) -> body.put(k, v.get(0)));
        body.put("approve", approve);
        Http.Reply r = user.http().post("/api/oauth/authorize/decision", body);
        assertEquals(200, r.status(), r.body());
        return URI.create(r.json().path("redirect_to").asText());
    }

    AuthorizationCode approvedCode(URI request, State state) throws Exception {
        AuthorizationResponse response = AuthorizationResponse.parse(decide(request, true));
        assertTrue(response.indicatesSuccess(), response.toURI().toString());
        assertEquals(state, response.getState());
        assertTrue(response.toURI().toString().startsWith(REDIRECT + "?"));
        return ((AuthorizationSuccessResponse) response).getAuthorizationCode();
    }

    static TokenResponse send(TokenRequest request) throws Exception {
        HTTPResponse http = request.toHTTPRequest().send();
        if (http.getStatusCode() == 200) {
            assertEquals("no-store", http.getHeaderValue("Cache-Control"));
        }
        return OIDCTokenResponseParser.parse(http);
    }

    static ErrorObject error(TokenResponse r) {
        assertFalse(r.indicatesSuccess(), "expected an error");
        return ((TokenErrorResponse) r).getErrorObject();
    }

    OIDCTokenResponse codeFlow(Registered client, Scope scope) throws Exception {
        CodeVerifier verifier = new CodeVerifier();
        State state = new State();
        Nonce nonce = new Nonce();
        URI request = scope.contains("openid")
                ? new AuthenticationRequest.Builder(ResponseType.CODE, scope, client.id(), URI.create(REDIRECT))
                        .state(state)
                        .nonce(nonce)
                        .codeChallenge(verifier, CodeChallengeMethod.S256)
                        .endpointURI(endpoint("/oauth/authorize"))
                        .build()
                        .toURI()
                : new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                        .redirectionURI(URI.create(REDIRECT))
                        .scope(scope)
                        .state(state)
                        .codeChallenge(verifier, CodeChallengeMethod.S256)
                        .endpointURI(endpoint("/oauth/authorize"))
                        .build()
                        .toURI();
        AuthorizationCode code = approvedCode(request, state);
        TokenResponse r = send(new TokenRequest(
                endpoint("/oauth/token"),
                client.basic(),
                new AuthorizationCodeGrant(code, URI.create(REDIRECT), verifier)));
        assertTrue(r.indicatesSuccess(), () -> error(r).toJSONObject().toString());
        return (OIDCTokenResponse) r;
    }

    @Test
    void discoveryNamesEveryEndpoint() throws Exception {
        Http.Reply r = server.anonymous().get("/.well-known/openid-configuration");
        assertEquals(200, r.status());
        OIDCProviderMetadata metadata = OIDCProviderMetadata.parse(r.body());
        assertEquals(server.base(), metadata.getIssuer().getValue());
        assertEquals(endpoint("/oauth/token"), metadata.getTokenEndpointURI());
        assertEquals(endpoint("/.well-known/jwks.json"), metadata.getJWKSetURI());
        assertTrue(metadata.getCodeChallengeMethods().contains(CodeChallengeMethod.S256));
        Http.Reply oauth = server.anonymous().get("/.well-known/oauth-authorization-server");
        assertEquals(200, oauth.status());
        assertEquals(server.base(), oauth.json().path("issuer").asText());
    }

    @Test
    void codeFlowWithPkceGivesTokensAndAnIdTokenThatVerifiesAgainstTheJwks() throws Exception {
        Registered client = client(Map.of());
        CodeVerifier verifier = new CodeVerifier();
        State state = new State();
        Nonce nonce = new Nonce();
        URI request = new AuthenticationRequest.Builder(
                        ResponseType.CODE,
                        new Scope("openid", "profile", "threads:read"),
                        client.id(),
                        URI.create(REDIRECT))
                .state(state)
                .nonce(nonce)
                .codeChallenge(verifier, CodeChallengeMethod.S256)
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();

        // the consent page the browser would show lists the requested scopes
        Http.Reply page =
                user.http().send("GET", request.getRawPath() + "?" + request.getRawQuery(), null, "application/json");
        assertEquals(200, page.status());
        assertTrue(page.body().contains("data-scope=\"threads:read\""), page.body());
        assertTrue(page.body().contains("Test app"));
        Http.Reply context = user.http().get("/api/oauth/authorize/context?" + request.getRawQuery());
        assertEquals(200, context.status(), context.body());
        assertEquals(
                "Test app", context.json().path("client").path("client_name").asText());
        assertEquals(3, context.json().path("scopes").size());

        AuthorizationCode code = approvedCode(request, state);
        TokenResponse wrongVerifier = send(new TokenRequest(
                endpoint("/oauth/token"),
                client.basic(),
                new AuthorizationCodeGrant(code, URI.create(REDIRECT), new CodeVerifier())));
        assertEquals("invalid_grant", error(wrongVerifier).getCode());

        code = approvedCode(request, state);
        TokenResponse r = send(new TokenRequest(
                endpoint("/oauth/token"),
                client.basic(),
                new AuthorizationCodeGrant(code, URI.create(REDIRECT), verifier)));
        assertTrue(r.indicatesSuccess());
        OIDCTokenResponse tokens = (OIDCTokenResponse) r;
        assertTrue(tokens.getTokens().getAccessToken().getValue().startsWith("ato_"));
        assertTrue(tokens.getTokens().getRefreshToken().getValue().startsWith("atr_"));
        assertEquals(3600, tokens.getTokens().getAccessToken().getLifetime());

        JWT idToken = tokens.getOIDCTokens().getIDToken();
        IDTokenValidator validator = new IDTokenValidator(
                new Issuer(server.base()),
                client.id(),
                JWSAlgorithm.RS256,
                new URL(server.base() + "/.well-known/jwks.json"));
        var claims = validator.validate(idToken, nonce);
        assertEquals(user.principalId(), claims.getSubject().getValue());
        assertEquals(user.username(), claims.getStringClaim("preferred_username"));

        Http.Reply userinfo =
                new Http(server.base(), tokens.getTokens().getAccessToken().getValue()).get("/oauth/userinfo");
        assertEquals(200, userinfo.status(), userinfo.body());
        assertEquals(user.principalId(), userinfo.json().path("sub").asText());

        // the same token body as JSON (the spec's example) works as well as the form of RFC 6749
        AuthorizationCode another = approvedCode(request, state);
        Http.Reply json = server.anonymous()
                .post(
                        "/oauth/token",
                        Map.of(
                                "grant_type",
                                "authorization_code",
                                "code",
                                another.getValue(),
                                "redirect_uri",
                                REDIRECT,
                                "code_verifier",
                                verifier.getValue(),
                                "client_id",
                                client.id().getValue(),
                                "client_secret",
                                client.secret().getValue()));
        assertEquals(200, json.status(), json.body());
        assertEquals("Bearer", json.json().path("token_type").asText());
        assertEquals(
                "no-store", json.raw().headers().firstValue("Cache-Control").orElse(null));
    }

    /** RFC 8252 §7.3: a native app listening on a loopback port it picked gets its code whatever the port. */
    @Test
    void aLoopbackRedirectIsAcceptedOnAnyPortButNotOnAnotherPathOrHost() throws Exception {
        Registered client = client(Map.of("token_endpoint_auth_method", "none"));
        String picked = "http://127.0.0.1:53682/callback";
        CodeVerifier verifier = new CodeVerifier();
        State state = new State();
        URI request = new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                .redirectionURI(URI.create(picked))
                .scope(new Scope("threads:read"))
                .state(state)
                .codeChallenge(verifier, CodeChallengeMethod.S256)
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();
        Http.Reply page =
                user.http().send("GET", request.getRawPath() + "?" + request.getRawQuery(), null, "application/json");
        assertEquals(200, page.status(), page.body());
        URI back = decide(request, true);
        assertTrue(back.toString().startsWith(picked + "?"), back.toString());
        AuthorizationCode code =
                ((AuthorizationSuccessResponse) AuthorizationResponse.parse(back)).getAuthorizationCode();
        TokenResponse r = send(new TokenRequest(
                endpoint("/oauth/token"), client.id(), new AuthorizationCodeGrant(code, URI.create(picked), verifier)));
        assertTrue(r.indicatesSuccess(), () -> error(r).toJSONObject().toString());
        for (String other : List.of(
                "http://127.0.0.1:53682/elsewhere",
                "http://localhost:53682/callback",
                "https://127.0.0.1:53682/callback",
                "http://127.0.0.1:53682/callback?x=1")) {
            URI refused = new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                    .redirectionURI(URI.create(other))
                    .scope(new Scope("threads:read"))
                    .state(state)
                    .codeChallenge(verifier, CodeChallengeMethod.S256)
                    .endpointURI(endpoint("/oauth/authorize"))
                    .build()
                    .toURI();
            Http.Reply no = user.http()
                    .send("GET", refused.getRawPath() + "?" + refused.getRawQuery(), null, "application/json");
            assertEquals(400, no.status(), other + ": " + no.body());
            assertTrue(no.raw().headers().firstValue("Location").isEmpty(), other);
        }
    }

    /**
     * A stored consent that covers the scopes is not asked again; prompt=consent asks anyway; prompt=none never shows a
     * page: the code at once when signed in and consented, else login_required or consent_required with the state.
     */
    @Test
    void aStoredConsentIsNotAskedAgainAndPromptNoneNeverShowsAPage() throws Exception {
        Registered client = client(Map.of());
        State state = new State();
        Scope scope = new Scope("openid", "threads:read");
        java.util.function.Function<String, URI> request = prompt -> {
            var b = new AuthenticationRequest.Builder(ResponseType.CODE, scope, client.id(), URI.create(REDIRECT))
                    .state(state)
                    .nonce(new Nonce())
                    .endpointURI(endpoint("/oauth/authorize"));
            if (prompt != null) {
                b.prompt(new com.nimbusds.openid.connect.sdk.Prompt(prompt));
            }
            return b.build().toURI();
        };
        java.util.function.Function<URI, Http.Reply> open =
                u -> user.http().send("GET", u.getRawPath() + "?" + u.getRawQuery(), null, "application/json");

        Http.Reply anonymous = server.anonymous()
                .send(
                        "GET",
                        request.apply("none").getRawPath() + "?"
                                + request.apply("none").getRawQuery(),
                        null,
                        "application/json");
        assertEquals(302, anonymous.status(), anonymous.body());
        AuthorizationResponse notSignedIn = AuthorizationResponse.parse(
                URI.create(anonymous.raw().headers().firstValue("Location").orElseThrow()));
        assertEquals(
                "login_required", notSignedIn.toErrorResponse().getErrorObject().getCode());
        assertEquals(state, notSignedIn.getState());

        Http.Reply noConsent = open.apply(request.apply("none"));
        assertEquals(302, noConsent.status(), noConsent.body());
        assertEquals(
                "consent_required",
                AuthorizationResponse.parse(URI.create(
                                noConsent.raw().headers().firstValue("Location").orElseThrow()))
                        .toErrorResponse()
                        .getErrorObject()
                        .getCode());
        assertEquals(200, open.apply(request.apply(null)).status(), "the consent page, the first time");
        approvedCode(request.apply(null), state);

        for (String prompt : java.util.Arrays.asList(null, "none")) {
            Http.Reply again = open.apply(request.apply(prompt));
            assertEquals(302, again.status(), "prompt " + prompt + ": " + again.body());
            AuthorizationResponse r = AuthorizationResponse.parse(
                    URI.create(again.raw().headers().firstValue("Location").orElseThrow()));
            assertTrue(r.indicatesSuccess(), r.toURI().toString());
            assertEquals(state, r.getState());
        }
        assertEquals(200, open.apply(request.apply("consent")).status(), "prompt=consent asks again");
        Http.Reply wider = open.apply(new AuthenticationRequest.Builder(
                        ResponseType.CODE,
                        new Scope("openid", "threads:read", "runs:read"),
                        client.id(),
                        URI.create(REDIRECT))
                .state(state)
                .nonce(new Nonce())
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI());
        assertEquals(200, wider.status(), "a scope not consented to yet is asked for");
        Http.Reply mixed = server.anonymous()
                .send(
                        "GET",
                        "/oauth/authorize?response_type=code&scope=openid&prompt=none%20login&state=s&client_id="
                                + client.id().getValue() + "&redirect_uri="
                                + java.net.URLEncoder.encode(REDIRECT, java.nio.charset.StandardCharsets.UTF_8),
                        null,
                        "application/json");
        assertEquals(302, mixed.status());
        assertTrue(mixed.raw().headers().firstValue("Location").orElseThrow().contains("error=invalid_request"));
    }

    /** RFC 6750 §3: a bearer-protected resource names the error of a refused token in WWW-Authenticate. */
    @Test
    void bearerRefusalsNameTheirErrorInWwwAuthenticate() throws Exception {
        Registered client = client(Map.of());
        String readOnly = codeFlow(client, new Scope("threads:read"))
                .getTokens()
                .getAccessToken()
                .getValue();
        Http.Reply noOpenid = new Http(server.base(), readOnly).get("/oauth/userinfo");
        assertEquals(403, noOpenid.status(), noOpenid.body());
        String challenge =
                noOpenid.raw().headers().firstValue("WWW-Authenticate").orElse("");
        assertTrue(
                challenge.startsWith("Bearer ")
                        && challenge.contains("error=\"insufficient_scope\"")
                        && challenge.contains("scope=\"openid\""),
                challenge);
        Http.Reply bad = new Http(server.base(), "ato_not-a-token").get("/oauth/userinfo");
        assertEquals(401, bad.status());
        assertTrue(
                bad.raw().headers().firstValue("WWW-Authenticate").orElse("").contains("error=\"invalid_token\""),
                bad.raw().headers().toString());
        Http.Reply none = server.anonymous().get("/oauth/userinfo");
        assertEquals(401, none.status());
        assertEquals(
                "Bearer realm=\"atrium\"",
                none.raw().headers().firstValue("WWW-Authenticate").orElse(null),
                "no error code when no token was sent (RFC 6750 §3.1)");

        // the API the same way
        Http.Reply repos = new Http(server.base(), readOnly).get("/api/spaces/" + user.defaultSpaceId() + "/repos");
        assertEquals(403, repos.status());
        String apiChallenge =
                repos.raw().headers().firstValue("WWW-Authenticate").orElse("");
        assertTrue(
                apiChallenge.contains("error=\"insufficient_scope\"") && apiChallenge.contains("scope=\"repos:read\""),
                apiChallenge);
        Http.Reply revoked = new Http(server.base(), "ato_not-a-token").get("/api/me");
        assertEquals(401, revoked.status());
        assertTrue(revoked.raw()
                .headers()
                .firstValue("WWW-Authenticate")
                .orElse("")
                .contains("error=\"invalid_token\""));
        assertEquals(
                "Bearer realm=\"atrium\"",
                server.anonymous()
                        .get("/api/me")
                        .raw()
                        .headers()
                        .firstValue("WWW-Authenticate")
                        .orElse(null));
    }

    /** OpenID Connect Core 3.1.2.1 (redirect_uri required) and 5.3.2 (a claim without a value is left out). */
    @Test
    void anOpenIdRequestNeedsItsRedirectUriAndEmptyClaimsAreLeftOut() throws Exception {
        Registered client = client(Map.of());
        Http.Reply noRedirect = user.http()
                .send(
                        "GET",
                        "/oauth/authorize?response_type=code&scope=openid&state=s&client_id="
                                + client.id().getValue(),
                        null,
                        "application/json");
        assertEquals(400, noRedirect.status(), noRedirect.body());
        assertTrue(noRedirect.body().contains("redirect_uri"), noRedirect.body());
        String token = codeFlow(client, new Scope("openid", "profile"))
                .getTokens()
                .getAccessToken()
                .getValue();
        Http.Reply userinfo = new Http(server.base(), token).get("/oauth/userinfo");
        assertEquals(200, userinfo.status(), userinfo.body());
        assertFalse(
                userinfo.json().has("picture"), "a user without a picture has no picture claim: " + userinfo.body());
        userinfo.json().fields().forEachRemaining(f -> assertFalse(f.getValue().isNull(), "null claim " + f.getKey()));
    }

    @Test
    void aPublicClientMustUsePkce() throws Exception {
        Registered client = client(Map.of("token_endpoint_auth_method", "none"));
        assertNull(client.secret());
        State state = new State();
        URI noPkce = new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                .redirectionURI(URI.create(REDIRECT))
                .scope(new Scope("threads:read"))
                .state(state)
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();
        AuthorizationResponse refused = AuthorizationResponse.parse(decide(noPkce, true));
        assertEquals(
                "invalid_request", refused.toErrorResponse().getErrorObject().getCode());

        CodeVerifier verifier = new CodeVerifier();
        URI withPkce = new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                .redirectionURI(URI.create(REDIRECT))
                .scope(new Scope("threads:read"))
                .state(state)
                .codeChallenge(verifier, CodeChallengeMethod.S256)
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();
        AuthorizationCode code = approvedCode(withPkce, state);
        TokenResponse r = send(new TokenRequest(
                endpoint("/oauth/token"),
                client.id(),
                new AuthorizationCodeGrant(code, URI.create(REDIRECT), verifier)));
        assertTrue(r.indicatesSuccess(), () -> error(r).toJSONObject().toString());
    }

    @Test
    void aRedirectUriThatIsNotRegisteredGetsAnErrorPageAndNoRedirect() throws Exception {
        Registered client = client(Map.of());
        URI request = new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                .redirectionURI(URI.create("http://127.0.0.1:9/elsewhere"))
                .scope(new Scope("threads:read"))
                .state(new State())
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();
        Http.Reply r =
                user.http().send("GET", request.getRawPath() + "?" + request.getRawQuery(), null, "application/json");
        assertEquals(400, r.status());
        assertTrue(r.raw().headers().firstValue("Location").isEmpty(), "never redirects to an unregistered URI");
        assertTrue(r.body().contains("unauthorized_client"), r.body());
        Http.Reply api = user.http()
                .post(
                        "/api/oauth/authorize/decision",
                        Map.of(
                                "response_type",
                                "code",
                                "client_id",
                                client.id().getValue(),
                                "redirect_uri",
                                "http://127.0.0.1:9/elsewhere",
                                "approve",
                                true));
        assertEquals(400, api.status());
        assertTrue(api.body().contains("unauthorized_client"));
    }

    @Test
    void aScopeOutsideTheClientsIsInvalidScope() throws Exception {
        Registered client = client(Map.of("scope", "threads:read"));
        State state = new State();
        URI request = new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                .redirectionURI(URI.create(REDIRECT))
                .scope(new Scope("threads:read", "repos:write"))
                .state(state)
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();
        Http.Reply page =
                user.http().send("GET", request.getRawPath() + "?" + request.getRawQuery(), null, "application/json");
        assertEquals(302, page.status());
        AuthorizationResponse r = AuthorizationResponse.parse(
                URI.create(page.raw().headers().firstValue("Location").orElseThrow()));
        assertEquals("invalid_scope", r.toErrorResponse().getErrorObject().getCode());
        assertEquals(state, r.getState());
        TokenResponse cc = send(new TokenRequest(
                endpoint("/oauth/token"), client.basic(), new ClientCredentialsGrant(), new Scope("runs:read")));
        assertEquals("invalid_scope", error(cc).getCode());
    }

    @Test
    void theUserDenyingIsAccessDenied() throws Exception {
        Registered client = client(Map.of());
        State state = new State();
        URI request = new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                .redirectionURI(URI.create(REDIRECT))
                .scope(new Scope("threads:read"))
                .state(state)
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();
        AuthorizationResponse r = AuthorizationResponse.parse(decide(request, false));
        assertEquals("access_denied", r.toErrorResponse().getErrorObject().getCode());
        assertEquals(state, r.getState());
    }

    @Test
    void aWrongSecretIsInvalidClient401() throws Exception {
        Registered client = client(Map.of());
        HTTPResponse http = new TokenRequest(
                        endpoint("/oauth/token"),
                        new ClientSecretBasic(client.id(), new Secret("wrong")),
                        new ClientCredentialsGrant())
                .toHTTPRequest()
                .send();
        assertEquals(401, http.getStatusCode());
        assertEquals(
                "invalid_client", error(OIDCTokenResponseParser.parse(http)).getCode());
        HTTPResponse post = new TokenRequest(
                        endpoint("/oauth/token"),
                        new ClientSecretPost(client.id(), new Secret("wrong")),
                        new ClientCredentialsGrant())
                .toHTTPRequest()
                .send();
        assertEquals(401, post.getStatusCode());
        HTTPResponse unknown = new TokenRequest(
                        endpoint("/oauth/token"),
                        new ClientSecretPost(new ClientID("atc_nobody"), new Secret("x")),
                        new ClientCredentialsGrant())
                .toHTTPRequest()
                .send();
        assertEquals(401, unknown.getStatusCode());
    }

    @Test
    void malformedTokenRequestsGetTheRfcErrors() {
        Registered client = client(Map.of());
        String auth = "Basic "
                + java.util.Base64.getEncoder()
                        .encodeToString(
                                (client.id().getValue() + ":" + client.secret().getValue()).getBytes());
        Http.Reply noGrant = form("", auth);
        assertEquals(400, noGrant.status());
        assertEquals("invalid_request", noGrant.json().path("error").asText());
        Http.Reply password = form("grant_type=password&username=a&password=b", auth);
        assertEquals(400, password.status());
        assertEquals("unsupported_grant_type", password.json().path("error").asText());
        Http.Reply badCode = form("grant_type=authorization_code&code=atac_nothing&redirect_uri=" + REDIRECT, auth);
        assertEquals(400, badCode.status());
        assertEquals("invalid_grant", badCode.json().path("error").asText());
        assertEquals(
                "no-store", badCode.raw().headers().firstValue("Cache-Control").orElse(null));
        Http.Reply repeated = form("grant_type=client_credentials&grant_type=client_credentials", auth);
        assertEquals("invalid_request", repeated.json().path("error").asText());
    }

    private Http.Reply form(String body, String authorization) {
        try {
            var r = java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(endpoint("/oauth/token"))
                                    .header("Content-Type", "application/x-www-form-urlencoded")
                                    .header("Authorization", authorization)
                                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
            return new Http.Reply(r.statusCode(), Http.JSON.readTree(r.body()), r.body(), r);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void refreshRotatesAndReusingAnOldRefreshTokenRevokesTheWholeFamily() throws Exception {
        Registered client = client(Map.of());
        OIDCTokenResponse first = codeFlow(client, new Scope("threads:read"));
        RefreshToken r1 = first.getTokens().getRefreshToken();
        TokenResponse second =
                send(new TokenRequest(endpoint("/oauth/token"), client.basic(), new RefreshTokenGrant(r1)));
        assertTrue(second.indicatesSuccess());
        RefreshToken r2 = second.toSuccessResponse().getTokens().getRefreshToken();
        AccessToken a2 = second.toSuccessResponse().getTokens().getAccessToken();
        assertNotEquals(r1, r2);
        TokenResponse third =
                send(new TokenRequest(endpoint("/oauth/token"), client.basic(), new RefreshTokenGrant(r2)));
        assertTrue(third.indicatesSuccess());
        RefreshToken r3 = third.toSuccessResponse().getTokens().getRefreshToken();
        AccessToken a3 = third.toSuccessResponse().getTokens().getAccessToken();
        assertTrue(active(client, a3));

        // r1 was used: presenting it again is refused and revokes everything of this grant
        assertEquals(
                "invalid_grant",
                error(send(new TokenRequest(endpoint("/oauth/token"), client.basic(), new RefreshTokenGrant(r1))))
                        .getCode());
        assertEquals(
                "invalid_grant",
                error(send(new TokenRequest(endpoint("/oauth/token"), client.basic(), new RefreshTokenGrant(r3))))
                        .getCode());
        assertFalse(active(client, a3));
        assertFalse(active(client, a2));
        assertFalse(active(client, first.getTokens().getAccessToken()));
        Http.Reply log = user.http().get("/api/me/oauth/audit-logs?limit=100");
        assertTrue(log.body().contains("refresh_token_reuse_detected"), log.body());
        assertTrue(log.body().contains("token_refreshed"));
    }

    @Test
    void aRefreshRefusedForInvalidScopeLeavesTheRefreshTokenAndTheGrantUsable() throws Exception {
        Registered client = client(Map.of());
        OIDCTokenResponse first = codeFlow(client, new Scope("threads:read"));
        RefreshToken refresh = first.getTokens().getRefreshToken();
        TokenResponse widened = send(new TokenRequest(
                endpoint("/oauth/token"),
                client.basic(),
                new RefreshTokenGrant(refresh),
                new Scope("threads:read", "threads:write")));
        assertEquals("invalid_scope", error(widened).getCode());
        assertTrue(
                active(client, first.getTokens().getAccessToken()),
                "an invalid_scope refresh must not revoke the grant");
        TokenResponse again =
                send(new TokenRequest(endpoint("/oauth/token"), client.basic(), new RefreshTokenGrant(refresh)));
        assertTrue(again.indicatesSuccess(), "the refresh token is still usable after an invalid_scope refusal");
    }

    @Test
    void reusingACodeIsInvalidGrantAndRevokesTheTokensItGave() throws Exception {
        Registered client = client(Map.of());
        CodeVerifier verifier = new CodeVerifier();
        State state = new State();
        URI request = new AuthorizationRequest.Builder(ResponseType.CODE, client.id())
                .redirectionURI(URI.create(REDIRECT))
                .scope(new Scope("threads:read"))
                .state(state)
                .codeChallenge(verifier, CodeChallengeMethod.S256)
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();
        AuthorizationCode code = approvedCode(request, state);
        AuthorizationGrant grant = new AuthorizationCodeGrant(code, URI.create(REDIRECT), verifier);
        TokenResponse first = send(new TokenRequest(endpoint("/oauth/token"), client.basic(), grant));
        assertTrue(first.indicatesSuccess());
        AccessToken access = first.toSuccessResponse().getTokens().getAccessToken();
        assertTrue(active(client, access));
        assertEquals(
                "invalid_grant",
                error(send(new TokenRequest(endpoint("/oauth/token"), client.basic(), grant)))
                        .getCode());
        assertFalse(active(client, access), "tokens from a replayed code are revoked");
        assertFalse(active(client, first.toSuccessResponse().getTokens().getRefreshToken()));
    }

    @Test
    void clientCredentialsGiveAnAccessTokenForTheClientsOwner() throws Exception {
        Registered client = client(Map.of("scope", "threads:read threads:write"));
        TokenResponse r = send(new TokenRequest(
                endpoint("/oauth/token"), client.basic(), new ClientCredentialsGrant(), new Scope("threads:read")));
        assertTrue(r.indicatesSuccess(), () -> error(r).toJSONObject().toString());
        AccessToken token = r.toSuccessResponse().getTokens().getAccessToken();
        assertNull(r.toSuccessResponse().getTokens().getRefreshToken());
        assertEquals(new Scope("threads:read"), token.getScope());
        Http.Reply memories =
                new Http(server.base(), token.getValue()).get("/api/spaces/" + user.defaultSpaceId() + "/memories");
        assertEquals(200, memories.status(), memories.body());
        TokenResponse post = send(new TokenRequest(
                endpoint("/oauth/token"),
                new ClientSecretPost(client.id(), client.secret()),
                new ClientCredentialsGrant()));
        assertTrue(post.indicatesSuccess());
    }

    @Test
    void deviceFlowWaitsForTheUserThenIssuesTokens() throws Exception {
        Registered client = client(Map.of());
        HTTPResponse authz = new DeviceAuthorizationRequest(
                        endpoint("/oauth/device_authorization"), client.basic(), new Scope("threads:read"), null)
                .toHTTPRequest()
                .send();
        DeviceAuthorizationResponse parsed = DeviceAuthorizationResponse.parse(authz);
        assertTrue(parsed.indicatesSuccess(), authz.getBody());
        DeviceAuthorizationSuccessResponse device = parsed.toSuccessResponse();
        assertEquals(endpoint("/oauth/device"), device.getVerificationURI());
        TokenRequest poll =
                new TokenRequest(endpoint("/oauth/token"), client.basic(), new DeviceCodeGrant(device.getDeviceCode()));
        assertEquals("authorization_pending", error(send(poll)).getCode());

        Http.Reply page = user.http()
                .get("/oauth/device?user_code=" + device.getUserCode().getValue());
        assertEquals(200, page.status());
        Http.Reply context = user.http()
                .get("/api/oauth/device/context?user_code="
                        + device.getUserCode().getValue());
        assertEquals(200, context.status(), context.body());
        assertEquals(
                "threads:read",
                context.json().path("scopes").get(0).path("name").asText());
        Http.Reply decided = user.http()
                .post(
                        "/api/oauth/device/decision",
                        Map.of("user_code", device.getUserCode().getValue(), "approve", true));
        assertEquals(200, decided.status(), decided.body());

        Thread.sleep(device.getInterval() * 1000L + 100);
        TokenResponse tokens = send(poll);
        assertTrue(tokens.indicatesSuccess(), () -> error(tokens).toJSONObject().toString());
        assertTrue(tokens.toSuccessResponse().getTokens().getRefreshToken() != null);
        assertEquals("invalid_grant", error(send(poll)).getCode(), "a device code is used once");

        // a denied request answers access_denied
        DeviceAuthorizationSuccessResponse denied = DeviceAuthorizationResponse.parse(new DeviceAuthorizationRequest(
                                endpoint("/oauth/device_authorization"),
                                client.basic(),
                                new Scope("threads:read"),
                                null)
                        .toHTTPRequest()
                        .send())
                .toSuccessResponse();
        user.http()
                .post(
                        "/api/oauth/device/decision",
                        Map.of("user_code", denied.getUserCode().getValue(), "approve", false));
        assertEquals(
                "access_denied",
                error(send(new TokenRequest(
                                endpoint("/oauth/token"), client.basic(), new DeviceCodeGrant(denied.getDeviceCode()))))
                        .getCode());
    }

    boolean active(Registered client, com.nimbusds.oauth2.sdk.token.Token token) throws Exception {
        HTTPResponse http = new TokenIntrospectionRequest(endpoint("/oauth/introspect"), client.basic(), token)
                .toHTTPRequest()
                .send();
        assertEquals(200, http.getStatusCode(), http.getBody());
        TokenIntrospectionResponse r = TokenIntrospectionResponse.parse(http);
        return ((TokenIntrospectionSuccessResponse) r).isActive();
    }

    @Test
    void introspectionTellsActiveRevokedAndExpiredTokensApart() throws Exception {
        Registered client = client(Map.of());
        OIDCTokenResponse tokens = codeFlow(client, new Scope("threads:read"));
        AccessToken access = tokens.getTokens().getAccessToken();
        HTTPResponse http = new TokenIntrospectionRequest(endpoint("/oauth/introspect"), client.basic(), access)
                .toHTTPRequest()
                .send();
        TokenIntrospectionSuccessResponse info =
                (TokenIntrospectionSuccessResponse) TokenIntrospectionResponse.parse(http);
        assertTrue(info.isActive());
        assertEquals(new Scope("threads:read"), info.getScope());
        assertEquals(client.id(), info.getClientID());
        assertEquals(user.principalId(), info.getSubject().getValue());
        assertTrue(info.getExpirationTime().getTime() > System.currentTimeMillis());

        // another client cannot learn about this client's tokens
        Registered other = client(Map.of());
        assertFalse(active(other, access));

        // expired: the access token's lifetime has passed
        OIDCTokenResponse second = codeFlow(client, new Scope("threads:read"));
        expire(second.getTokens().getAccessToken().getValue());
        assertFalse(active(client, second.getTokens().getAccessToken()));
        assertEquals(
                401,
                new Http(server.base(), second.getTokens().getAccessToken().getValue())
                        .get("/api/spaces/" + user.defaultSpaceId() + "/memories")
                        .status());

        // revoked
        HTTPResponse revoked = new TokenRevocationRequest(endpoint("/oauth/revoke"), client.basic(), access)
                .toHTTPRequest()
                .send();
        assertEquals(200, revoked.getStatusCode());
        assertFalse(active(client, access));
        assertEquals(
                401,
                new Http(server.base(), access.getValue())
                        .get("/api/spaces/" + user.defaultSpaceId() + "/memories")
                        .status());
        assertTrue(
                active(client, tokens.getTokens().getRefreshToken()),
                "revoking an access token leaves its refresh token");

        // unknown tokens are inactive, not errors
        assertFalse(active(client, new BearerAccessToken("ato_unknown")));
    }

    private void expire(String token) throws Exception {
        byte[] hash = java.security.MessageDigest.getInstance("SHA-256")
                .digest(token.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        try (Connection c = server.db.connect();
                PreparedStatement ps = c.prepareStatement(
                        "UPDATE oauth_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = ?")) {
            ps.setBytes(1, hash);
            assertEquals(1, ps.executeUpdate());
        }
    }

    @Test
    void revokingARefreshTokenRevokesItsFamily() throws Exception {
        Registered client = client(Map.of());
        OIDCTokenResponse tokens = codeFlow(client, new Scope("threads:read"));
        HTTPResponse r = new TokenRevocationRequest(
                        endpoint("/oauth/revoke"),
                        client.basic(),
                        tokens.getTokens().getRefreshToken())
                .toHTTPRequest()
                .send();
        assertEquals(200, r.getStatusCode());
        assertFalse(active(client, tokens.getTokens().getAccessToken()));
        assertEquals(
                "invalid_grant",
                error(send(new TokenRequest(
                                endpoint("/oauth/token"),
                                client.basic(),
                                new RefreshTokenGrant(tokens.getTokens().getRefreshToken()))))
                        .getCode());
        // another client's revocation of this token does nothing
        OIDCTokenResponse more = codeFlow(client, new Scope("threads:read"));
        Registered other = client(Map.of());
        assertEquals(
                200,
                new TokenRevocationRequest(
                                endpoint("/oauth/revoke"),
                                other.basic(),
                                more.getTokens().getAccessToken())
                        .toHTTPRequest()
                        .send()
                        .getStatusCode());
        assertTrue(active(client, more.getTokens().getAccessToken()));
    }

    @Test
    void redirectUrisThatWouldRunScriptOrLeaveLoopbackInClearAreRefused() throws Exception {
        for (String bad : List.of(
                "javascript:alert(document.domain)//",
                "data:text/html,hi",
                "file:///etc/passwd",
                "vbscript:x//",
                "http://example.com/cb")) {
            Http.Reply r = user.http()
                    .post("/api/me/oauth/clients", Map.of("client_name", "x", "redirect_uris", List.of(bad)));
            assertEquals(400, r.status(), bad + ": " + r.body());
            HttpResponse<String> dcr = java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(endpoint("/oauth/register"))
                                    .header("Content-Type", "application/json")
                                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                                            "{\"redirect_uris\":[\"" + bad + "\"],\"scope\":\"threads:read\"}"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertEquals(400, dcr.statusCode(), bad + ": " + dcr.body());
            assertTrue(dcr.body().contains("invalid_redirect_uri"), dcr.body());
        }
        for (String ok : List.of(
                "https://app.example.com/cb", "http://127.0.0.1:5000/cb", "http://[::1]/cb", "com.example.app:/cb")) {
            assertEquals(
                    201,
                    user.http()
                            .post("/api/me/oauth/clients", Map.of("client_name", "ok", "redirect_uris", List.of(ok)))
                            .status(),
                    ok);
        }
        assertEquals(
                400,
                user.http()
                        .post(
                                "/api/me/oauth/clients",
                                Map.of(
                                        "client_name",
                                        "x",
                                        "redirect_uris",
                                        List.of(REDIRECT),
                                        "logo_uri",
                                        "javascript:alert(1)"))
                        .status());
    }

    @Test
    void malformedClientCredentialsAndRepeatedParametersAre4xx() throws Exception {
        String basic = java.util.Base64.getEncoder().encodeToString("%zz:%zz".getBytes());
        HttpResponse<String> r = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(endpoint("/oauth/token"))
                                .header("Authorization", "Basic " + basic)
                                .header("Content-Type", "application/x-www-form-urlencoded")
                                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                                        "grant_type=client_credentials"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(401, r.statusCode(), r.body());
        assertTrue(r.body().contains("invalid_client"), r.body());
        Registered client = client(Map.of());
        Http.Reply repeated = user.http()
                .get("/api/oauth/authorize/context?client_id=" + client.id().getValue() + "&client_id=x"
                        + "&response_type=code&redirect_uri="
                        + java.net.URLEncoder.encode(REDIRECT, java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(400, repeated.status(), repeated.body());
    }

    @Test
    void aSuspendedPrincipalsTokensAreNotActive() throws Exception {
        AtriumServer.User other = server.newUser();
        Http.Reply made = other.http()
                .post(
                        "/api/me/oauth/clients",
                        Map.of(
                                "client_name",
                                "Soon suspended",
                                "redirect_uris",
                                List.of(REDIRECT),
                                "scope",
                                "threads:read"));
        assertEquals(201, made.status(), made.body());
        Registered client = new Registered(
                new ClientID(made.json().path("client").path("client_id").asText()),
                new Secret(made.json().path("client").path("client_secret").asText()));
        HTTPResponse http = new TokenRequest(
                        endpoint("/oauth/token"),
                        client.basic(),
                        new ClientCredentialsGrant(),
                        new Scope("threads:read"))
                .toHTTPRequest()
                .send();
        assertEquals(200, http.getStatusCode(), http.getBody());
        AccessToken access = AccessTokenResponse.parse(http).getTokens().getAccessToken();
        assertTrue(active(client, access));
        assertEquals(
                200,
                server.operator()
                        .post("/admin/users/" + other.username() + "/suspend", Map.of())
                        .status());
        Thread.sleep(2100); // the introspection cache keeps an active answer at most 2 s
        assertFalse(active(client, access));
        HTTPResponse refused = new TokenRequest(
                        endpoint("/oauth/token"),
                        client.basic(),
                        new ClientCredentialsGrant(),
                        new Scope("threads:read"))
                .toHTTPRequest()
                .send();
        assertEquals(400, refused.getStatusCode(), refused.getBody());
    }

    @Test
    void dynamicClientRegistrationAndItsReadEndpoint() throws Exception {
        ClientMetadata metadata = new ClientMetadata();
        metadata.setName("Registered app");
        metadata.setRedirectionURI(URI.create(REDIRECT));
        metadata.setScope(new Scope("openid", "threads:read"));
        metadata.setGrantTypes(Set.of(GrantType.AUTHORIZATION_CODE, GrantType.REFRESH_TOKEN));
        HTTPResponse http = new ClientRegistrationRequest(endpoint("/oauth/register"), metadata, null)
                .toHTTPRequest()
                .send();
        assertEquals(201, http.getStatusCode(), http.getBody());
        ClientRegistrationResponse response = ClientRegistrationResponse.parse(http);
        assertTrue(response.indicatesSuccess());
        var info = ((ClientInformationResponse) response).getClientInformation();
        assertNotNull(info.getSecret());
        assertEquals(new Scope("openid", "threads:read"), info.getMetadata().getScope());
        HTTPResponse read = new ClientReadRequest(info.getRegistrationURI(), info.getRegistrationAccessToken())
                .toHTTPRequest()
                .send();
        assertEquals(200, read.getStatusCode(), read.getBody());
        assertEquals(info.getID().getValue(), read.getBodyAsJSONObject().get("client_id"));
        assertEquals(
                401,
                new ClientReadRequest(info.getRegistrationURI(), new BearerAccessToken("atg_wrong"))
                        .toHTTPRequest()
                        .send()
                        .getStatusCode());

        // the registered client runs the code flow
        Registered client = new Registered(info.getID(), info.getSecret());
        OIDCTokenResponse tokens = codeFlow(client, new Scope("openid", "threads:read"));
        assertNotNull(tokens.getOIDCTokens().getIDToken());

        ClientMetadata bad = new ClientMetadata();
        bad.setRedirectionURI(URI.create("relative/path"));
        HTTPResponse refused = new ClientRegistrationRequest(endpoint("/oauth/register"), bad, null)
                .toHTTPRequest()
                .send();
        assertEquals(400, refused.getStatusCode());
        assertEquals("invalid_redirect_uri", refused.getBodyAsJSONObject().get("error"));
    }

    @Test
    void anAccessTokenReachesOnlyWhatItsScopesAllow() throws Exception {
        Registered client = client(Map.of());
        String space = "/api/spaces/" + user.defaultSpaceId() + "/memories";
        assertEquals(201, user.http().post(space, Map.of("content", "a note")).status(), "a PAT with * may write");
        String readOnly = codeFlow(client, new Scope("threads:read"))
                .getTokens()
                .getAccessToken()
                .getValue();
        Http reader = new Http(server.base(), readOnly);
        assertEquals(200, reader.get(space).status());
        Http.Reply write = reader.post(space, Map.of("content", "not allowed"));
        assertEquals(403, write.status());
        assertEquals("FORBIDDEN", write.errorCode());
        String runsOnly = codeFlow(client, new Scope("runs:read"))
                .getTokens()
                .getAccessToken()
                .getValue();
        assertEquals(403, new Http(server.base(), runsOnly).get(space).status(), "an endpoint of another scope");
        Http.Reply repos = reader.get("/api/spaces/" + user.defaultSpaceId() + "/repos");
        assertEquals(403, repos.status(), "a threads:read token on a repos:read endpoint: " + repos.body());
        assertEquals(
                403,
                reader.post("/api/spaces/" + user.defaultSpaceId() + "/threads", Map.of("title", "t"))
                        .status(),
                "a threads:read token on the threads:write endpoint");
        assertEquals(
                200,
                user.http()
                        .get("/api/spaces/" + user.defaultSpaceId() + "/repos")
                        .status(),
                "a PAT with * may");
        // an OAuth token cannot mint itself a personal access token, nor manage OAuth clients
        assertEquals(
                403,
                reader.post("/api/me/personal-access-tokens", Map.of("name", "x", "scopes", "*"))
                        .status());
        assertEquals(403, reader.get("/api/me/oauth/clients").status());
        assertEquals(200, reader.get("/api/me").status());
    }

    @Test
    void consentsAreListedAndRevokingOneRevokesThatClientsTokens() throws Exception {
        Registered client = client(Map.of("client_name", "Consented app"));
        OIDCTokenResponse tokens = codeFlow(client, new Scope("threads:read"));
        Http.Reply consents = user.http().get("/api/me/oauth/consents");
        assertEquals(200, consents.status());
        List<String> names = new ArrayList<>();
        consents.json()
                .path("consents")
                .forEach(c -> names.add(c.path("client_name").asText()));
        assertTrue(names.contains("Consented app"), consents.body());
        assertEquals(
                200,
                user.http()
                        .delete("/api/me/oauth/consents/" + client.id().getValue())
                        .status());
        assertFalse(active(client, tokens.getTokens().getAccessToken()));
        assertEquals(
                "invalid_grant",
                error(send(new TokenRequest(
                                endpoint("/oauth/token"),
                                client.basic(),
                                new RefreshTokenGrant(tokens.getTokens().getRefreshToken()))))
                        .getCode());
        assertEquals(
                404,
                user.http()
                        .delete("/api/me/oauth/consents/" + client.id().getValue())
                        .status());
        JsonNode log = user.http().get("/api/me/oauth/audit-logs?limit=2").json();
        assertEquals(2, log.path("logs").size());
        assertTrue(log.path("total").asInt() >= 4, log.toString());
        assertTrue(user.http().get("/api/me/oauth/audit-logs?limit=100").body().contains("consent_revoked"));
    }

    @Test
    void clientsAreManagedByTheirOwnerOnly() {
        Registered client = client(Map.of());
        Http.Reply list = user.http().get("/api/me/oauth/clients");
        assertEquals(1, list.json().path("clients").size());
        assertFalse(list.json().path("clients").get(0).has("client_secret"), "a secret is shown once");
        Http.Reply patched = user.http()
                .patch(
                        "/api/me/oauth/clients/" + client.id().getValue(),
                        Map.of("client_name", "Renamed", "redirect_uris", List.of(REDIRECT, "http://127.0.0.1:9/two")));
        assertEquals(200, patched.status(), patched.body());
        assertEquals(2, patched.json().path("client").path("redirect_uris").size());
        AtriumServer.User stranger = server.newUser("*");
        assertEquals(
                404,
                stranger.http()
                        .patch("/api/me/oauth/clients/" + client.id().getValue(), Map.of("client_name", "x"))
                        .status());
        assertEquals(
                404,
                stranger.http()
                        .delete("/api/me/oauth/clients/" + client.id().getValue())
                        .status());
        assertEquals(
                400,
                user.http()
                        .post(
                                "/api/me/oauth/clients",
                                Map.of("client_name", "x", "redirect_uris", List.of("not a uri")))
                        .status());
        assertEquals(
                200,
                user.http()
                        .delete("/api/me/oauth/clients/" + client.id().getValue())
                        .status());
        assertEquals(
                0,
                user.http().get("/api/me/oauth/clients").json().path("clients").size());
    }

    /**
     * Key rollover: a rotation publishes the next key at once but signs with it only once every cached key set has
     * it (the JWKS's max-age and then some); the old key signs until then and stays published while its tokens live.
     * An immediate rotation (a key thought compromised) signs with the new key at once.
     */
    @Test
    void aRotatedSigningKeyIsPublishedBeforeItSignsAndTheOldOneStaysWhileItsTokensLive() throws Exception {
        // from one key that signs and none waiting: other classes on the shared server rotate too (the console's
        // Operations view, the admin examples), and a key still waiting to sign would be the one a rotation replaces
        assertEquals(
                200,
                server.operator()
                        .post("/admin/oauth/keys/rotate", Map.of("immediate", true))
                        .status());
        Registered client = client(Map.of());
        Nonce nonce = new Nonce();
        CodeVerifier verifier = new CodeVerifier();
        State state = new State();
        URI request = new AuthenticationRequest.Builder(
                        ResponseType.CODE, new Scope("openid"), client.id(), URI.create(REDIRECT))
                .state(state)
                .nonce(nonce)
                .codeChallenge(verifier, CodeChallengeMethod.S256)
                .endpointURI(endpoint("/oauth/authorize"))
                .build()
                .toURI();
        OIDCTokenResponse before = (OIDCTokenResponse) send(new TokenRequest(
                endpoint("/oauth/token"),
                client.basic(),
                new AuthorizationCodeGrant(approvedCode(request, state), URI.create(REDIRECT), verifier)));
        String oldKid = before.getOIDCTokens()
                .getIDToken()
                .getHeader()
                .toJSONObject()
                .get("kid")
                .toString();
        Http.Reply jwksBefore = server.anonymous().get("/.well-known/jwks.json");
        long maxAge = Long.parseLong(jwksBefore
                .raw()
                .headers()
                .firstValue("Cache-Control")
                .orElseThrow()
                .replaceAll(".*max-age=(\\d+).*", "$1"));

        java.time.Instant asked = java.time.Instant.now();
        Http.Reply rotated = server.operator().post("/admin/oauth/keys/rotate", Map.of());
        assertEquals(200, rotated.status(), rotated.body());
        String nextKid = rotated.json().path("kid").asText();
        assertNotEquals(oldKid, nextKid);
        assertTrue(
                java.time.Instant.parse(rotated.json().path("signs_from").asText())
                        .isAfter(asked.plusSeconds(maxAge)),
                "the next key signs only after a cached key set has expired: " + rotated.body());
        assertTrue(rotated.json().path("replaced").toString().contains(oldKid), rotated.body());
        String jwks = server.anonymous().get("/.well-known/jwks.json").body();
        assertTrue(jwks.contains(oldKid) && jwks.contains(nextKid), jwks);
        OIDCTokenResponse meanwhile = codeFlow(client, new Scope("openid"));
        assertEquals(
                oldKid,
                meanwhile
                        .getOIDCTokens()
                        .getIDToken()
                        .getHeader()
                        .toJSONObject()
                        .get("kid")
                        .toString(),
                "the old key signs until the next one is known everywhere");

        Http.Reply now = server.operator().post("/admin/oauth/keys/rotate", Map.of("immediate", true));
        assertEquals(200, now.status(), now.body());
        String newKid = now.json().path("kid").asText();
        jwks = server.anonymous().get("/.well-known/jwks.json").body();
        assertTrue(jwks.contains(oldKid) && jwks.contains(newKid), jwks);
        IDTokenValidator validator = new IDTokenValidator(
                new Issuer(server.base()),
                client.id(),
                JWSAlgorithm.RS256,
                new URL(server.base() + "/.well-known/jwks.json"));
        validator.validate(before.getOIDCTokens().getIDToken(), nonce);
        OIDCTokenResponse after = codeFlow(client, new Scope("openid"));
        assertEquals(
                newKid,
                after.getOIDCTokens()
                        .getIDToken()
                        .getHeader()
                        .toJSONObject()
                        .get("kid")
                        .toString());
        assertInstanceOf(OIDCTokenResponse.class, after);
    }
}
