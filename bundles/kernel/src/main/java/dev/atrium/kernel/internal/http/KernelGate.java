package dev.atrium.kernel.internal.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.BodyLimit;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.KernelExtensions;
import dev.atrium.kernel.api.OperatorOnly;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.kernel.api.SessionVerifier;
import dev.atrium.kernel.api.Sql;
import dev.atrium.kernel.internal.auth.Mint;
import dev.atrium.kernel.internal.auth.OperatorToken;
import dev.atrium.kernel.internal.auth.TokenAuthenticator;
import dev.atrium.kernel.internal.http.RequestEnvelope.BodyTooLargeException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.security.Principal;
import javax.servlet.http.HttpServletRequest;
import javax.ws.rs.WebApplicationException;
import javax.ws.rs.container.ContainerRequestContext;
import javax.ws.rs.container.ContainerRequestFilter;
import javax.ws.rs.container.ContainerResponseFilter;
import javax.ws.rs.container.ResourceInfo;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.HttpHeaders;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import javax.ws.rs.ext.ExceptionMapper;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsExtension;
import org.osgi.service.jaxrs.whiteboard.propertytypes.JaxrsName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel's JAX-RS extension, selected by every capability resource: it authenticates the bearer token,
 * enforces {@link Anonymous}, {@link RequiresScope} and {@link OperatorOnly}, and turns every exception into the
 * spec's error body.
 */
@Component(service = {ContainerRequestFilter.class, ContainerResponseFilter.class, ExceptionMapper.class})
@JaxrsExtension
@JaxrsName(KernelExtensions.NAME)
public class KernelGate implements ContainerRequestFilter, ContainerResponseFilter, ExceptionMapper<Throwable> {

    private static final Logger LOG = LoggerFactory.getLogger(KernelGate.class);
    private static final String BEARER = "bearer ";
    /** Which bundle (and version) served a request: operators see an upgrade take effect. */
    static final String SERVED_BY = KernelExtensions.SERVED_BY_HEADER;
    /** What a 503 asks a client to wait: about as long as a database restart or a failover takes. */
    static final String RETRY_AFTER_SECONDS = "5";

    private final TokenAuthenticator tokens;
    private final OperatorToken operator;
    private static final java.util.Set<String> SAFE_METHODS = java.util.Set.of("GET", "HEAD", "OPTIONS");

    /**
     * Route templates per resource class and method, kept on the class itself (a {@link ClassValue}), so that an updated
     * bundle's old classes are not held: reading two annotations and joining them cost a profile's notice per request.
     */
    private final ClassValue<java.util.Map<Method, String>> templates = new ClassValue<>() {
        @Override
        protected java.util.Map<Method, String> computeValue(Class<?> type) {
            return new java.util.concurrent.ConcurrentHashMap<>();
        }
    };

    @Context
    ResourceInfo resourceInfo;

    @Context
    HttpServletRequest servletRequest;

    @Activate
    public KernelGate(@Reference TokenAuthenticator tokens, @Reference OperatorToken operator) {
        this.tokens = tokens;
        this.operator = operator;
    }

    @Override
    public void filter(ContainerRequestContext request) {
        Method method = resourceInfo.getResourceMethod();
        Class<?> type = resourceInfo.getResourceClass();
        if (servletRequest != null) {
            servletRequest.setAttribute(
                    KernelExtensions.ROUTE_ATTRIBUTE,
                    type == null || method == null
                            ? template(type, method)
                            : templates.get(type).computeIfAbsent(method, m -> template(type, m)));
        }
        limitBody(request, annotation(method, type, BodyLimit.class));
        if (annotation(method, type, dev.atrium.kernel.api.SelfAuthenticated.class) != null) {
            return;
        }
        String authorization = request.getHeaderString(HttpHeaders.AUTHORIZATION);
        Caller caller = authorization != null ? authenticate(authorization) : session(request);
        if (caller != null) {
            boolean secure = request.getSecurityContext() != null
                    && request.getSecurityContext().isSecure();
            request.setSecurityContext(new CallerContext(caller, secure));
        }
        if (annotation(method, type, OperatorOnly.class) != null) {
            if (!Mint.KERNEL.isOperator(caller)) {
                throw ApiException.unauthorized("the operator token is required");
            }
            return;
        }
        if (annotation(method, type, Anonymous.class) != null) {
            return;
        }
        if (caller == null || caller.principalId() == null) {
            throw ApiException.unauthorized("authentication required: send Authorization: Bearer <token>");
        }
        RequiresScope scope = annotation(method, type, RequiresScope.class);
        if (scope != null && !caller.hasScope(scope.value())) {
            if (authorization != null) {
                challenge("Bearer realm=\"atrium\", error=\"insufficient_scope\", scope=\"" + scope.value() + "\"");
            }
            throw ApiException.forbidden(
                    Caller.ALL_SCOPES.equals(scope.value())
                            ? "this endpoint needs a token with scope *"
                            : "this token lacks the scope " + scope.value());
        }
        // a token limited to some scopes (an OAuth access token always is, a PAT may be) reaches only what they
        // cover: an endpoint that declares no scope (tokens, username, workspaces) it may read but never change,
        // or a threads:read token could mint itself a '*' token
        if (scope == null
                && !caller.scopes().contains(dev.atrium.kernel.api.Caller.ALL_SCOPES)
                && !SAFE_METHODS.contains(request.getMethod())) {
            if (authorization != null) {
                challenge("Bearer realm=\"atrium\", error=\"insufficient_scope\", scope=\"*\"");
            }
            throw ApiException.forbidden(
                    "oauth".equals(caller.authMethod())
                            ? "an OAuth access token cannot call " + request.getMethod()
                                    + " on an endpoint without a scope"
                            : "this endpoint changes the account or its workspaces: it needs a token with scope *");
        }
    }

    /** The route's template: the resource class's {@code @Path} and the method's, as written. */
    static String template(Class<?> type, Method method) {
        javax.ws.rs.Path root = type == null ? null : type.getAnnotation(javax.ws.rs.Path.class);
        javax.ws.rs.Path sub = method == null ? null : method.getAnnotation(javax.ws.rs.Path.class);
        String a = root == null ? "" : root.value();
        String b = sub == null ? "" : sub.value();
        if (!b.isEmpty() && !a.endsWith("/") && !b.startsWith("/")) {
            b = "/" + b;
        }
        String t = a + b;
        return t.isEmpty() ? "/" : t;
    }

    @Override
    public void filter(ContainerRequestContext request, javax.ws.rs.container.ContainerResponseContext response) {
        Class<?> type = resourceInfo.getResourceClass();
        // not cached per class: a cache would keep old bundle revisions' class loaders alive after an update
        org.osgi.framework.Bundle b = type == null ? null : org.osgi.framework.FrameworkUtil.getBundle(type);
        if (b != null) {
            response.getHeaders().putSingle(SERVED_BY, b.getSymbolicName() + "/" + b.getVersion());
        }
    }

    /**
     * The route's body limit: the envelope's unless the method declares a larger one. A declared Content-Length over
     * it is refused before the body is read; a chunked body is cut off by the envelope's counting stream.
     */
    private void limitBody(ContainerRequestContext request, BodyLimit declared) {
        Object attribute = servletRequest == null ? null : servletRequest.getAttribute(RequestEnvelope.BODY_ALLOWANCE);
        if (!(attribute instanceof RequestEnvelope.BodyAllowance allowance)) {
            return;
        }
        if (declared != null) {
            allowance.allow(declared.value());
        }
        if (request.getLength() > allowance.limit()) {
            throw new ApiException(
                    413, ErrorBody.codeFor(413), "request body is larger than " + allowance.limit() + " bytes");
        }
    }

    /**
     * The caller of the session cookie, when a {@link SessionVerifier} knows it. A cookie-authenticated request that
     * changes something must carry the session's CSRF token in {@link SessionVerifier#CSRF_HEADER}: a cross-site
     * form or script can make the browser send the cookie, but cannot read the token.
     */
    private Caller session(ContainerRequestContext request) {
        javax.ws.rs.core.Cookie cookie = request.getCookies().get(SessionVerifier.COOKIE);
        TokenAuthenticator.LiveSession session = cookie == null ? null : tokens.session(cookie.getValue());
        if (session != null) {
            if (!SAFE_METHODS.contains(request.getMethod())) {
                String presented = request.getHeaderString(SessionVerifier.CSRF_HEADER);
                if (!Digests.constantTimeEquals(presented, session.csrfToken())) {
                    throw ApiException.forbidden("a cookie-authenticated " + request.getMethod()
                            + " needs the session's CSRF token in " + SessionVerifier.CSRF_HEADER);
                }
            }
            return session.caller();
        }
        return null;
    }

    /** The request attribute holding the RFC 6750 challenge of a bearer token's refusal, for {@link #toResponse}. */
    private static final String CHALLENGE = "atrium.bearerChallenge";

    /** A bearer token's refusal names its error in WWW-Authenticate (RFC 6750 §3): invalid_token or insufficient_scope. */
    private void challenge(String value) {
        if (servletRequest != null) {
            servletRequest.setAttribute(CHALLENGE, value);
        }
    }

    private Caller authenticate(String header) {
        if (header.length() <= BEARER.length() || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            throw ApiException.unauthorized("the Authorization header must be 'Bearer <token>'");
        }
        String secret = header.substring(BEARER.length()).trim();
        if (operator.matches(secret)) {
            return Mint.KERNEL.operator();
        }
        try {
            return tokens.authenticate(secret);
        } catch (ApiException refused) {
            if (refused.status() == 401) {
                // the message is the kernel's own (an invalid or a suspended Principal's token), never the client's
                challenge("Bearer realm=\"atrium\", error=\"invalid_token\", error_description=\""
                        + refused.getMessage() + "\"");
            }
            throw refused;
        }
    }

    private static <A extends Annotation> A annotation(Method method, Class<?> type, Class<A> annotation) {
        A a = method == null ? null : method.getAnnotation(annotation);
        return a != null || type == null ? a : type.getAnnotation(annotation);
    }

    @Override
    public Response toResponse(Throwable failure) {
        int status;
        String message;
        String code = null;
        if (failure instanceof ApiException api) {
            status = api.status();
            code = api.code();
            message = api.getMessage();
        } else if (find(failure, BodyTooLargeException.class) != null) {
            status = 413;
            message = find(failure, BodyTooLargeException.class).getMessage();
        } else if (find(failure, JsonProcessingException.class) != null) {
            status = 400;
            message = describe(find(failure, JsonProcessingException.class));
        } else if (failure instanceof WebApplicationException web
                && web.getResponse().getStatus() < 500) {
            status = web.getResponse().getStatus();
            message = status == 404
                    ? "no route for " + route()
                    : status == 405 ? "method not allowed: " + route() : web.getMessage();
            if (status == 400
                    && find(failure, javax.ws.rs.ProcessingException.class) == null
                    && failure.getCause() == null) {
                message = "invalid request";
            }
        } else if (find(failure, java.sql.SQLException.class) != null
                && Sql.translate(find(failure, java.sql.SQLException.class)) instanceof ApiException api) {
            // the one policy of kernel.api's Sql, also for what reached the database another way (JPA, a driver of its
            // own)
            status = api.status();
            code = api.code();
            message = api.getMessage();
        } else if (DiskFull.find(failure) != null) {
            status = DiskFull.STATUS;
            code = DiskFull.CODE;
            message = DiskFull.MESSAGE;
            // the operator must hear of it; the client only needs to know it may retry later
            LOG.warn(
                    "request {} refused: the disk is full ({})",
                    requestId(),
                    DiskFull.find(failure).toString());
        } else {
            status = 500;
            String id = requestId();
            LOG.error("request {} failed", id, failure);
            message = "internal error (request " + id + ")";
        }
        if (code == null) {
            code = ErrorBody.codeFor(status);
        }
        Response.ResponseBuilder response =
                Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(ErrorBody.json(code, message));
        Object challenge = servletRequest == null ? null : servletRequest.getAttribute(CHALLENGE);
        if (challenge != null && (status == 401 || status == 403)) {
            response.header(HttpHeaders.WWW_AUTHENTICATE, challenge);
        } else if (status == 401) {
            response.header(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"atrium\"");
        }
        if (status == 503) {
            // every 503 here is a state the server expects to leave (a database restarting, a deadline missed)
            response.header(HttpHeaders.RETRY_AFTER, RETRY_AFTER_SECONDS);
        }
        return response.build();
    }

    private String route() {
        try {
            return servletRequest.getMethod() + " " + servletRequest.getRequestURI();
        } catch (RuntimeException e) {
            return "this request";
        }
    }

    private String requestId() {
        try {
            Object id = servletRequest == null ? null : servletRequest.getAttribute(RequestEnvelope.REQUEST_ID);
            return id == null ? "-" : id.toString();
        } catch (RuntimeException e) {
            return "-";
        }
    }

    private static String describe(JsonProcessingException e) {
        if (e instanceof InvalidFormatException f && !f.getPath().isEmpty()) {
            return "field " + f.getPath().get(0).getFieldName() + " has the wrong type";
        }
        if (e instanceof MismatchedInputException m
                && m.getPath() != null
                && !m.getPath().isEmpty()) {
            return "field " + m.getPath().get(0).getFieldName() + " has the wrong type";
        }
        String original = e.getOriginalMessage();
        int cut = original == null ? -1 : original.indexOf('\n');
        return "malformed JSON: "
                + (original == null ? "unreadable body" : cut > 0 ? original.substring(0, cut) : original)
                + (e.getLocation() == null
                        ? ""
                        : " (line " + e.getLocation().getLineNr() + ", column "
                                + e.getLocation().getColumnNr() + ")");
    }

    private static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (int depth = 0; t != null && depth < 10; t = t.getCause(), depth++) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
        }
        return null;
    }

    private record CallerContext(Caller caller, boolean secure) implements SecurityContext {
        @Override
        public Principal getUserPrincipal() {
            return caller;
        }

        @Override
        public boolean isUserInRole(String role) {
            return false;
        }

        @Override
        public boolean isSecure() {
            return secure;
        }

        @Override
        public String getAuthenticationScheme() {
            return "Bearer";
        }
    }
}
