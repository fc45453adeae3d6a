package dev.atrium.oauth.internal;

import dev.atrium.kernel.api.AppClientRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The OAuth clients deployed apps own ({@code spec.oauth} of a manifest): confidential clients with the
 * authorization-code and refresh-token grants, checked as {@code POST /api/me/oauth/clients} checks a client, owned by
 * the app's owner and so listed, changed and deleted with that Principal's other clients.
 */
@Component(service = AppClientRegistry.class)
public class AppClients implements AppClientRegistry {

    /** The grants an app's client gets: a user signs in to the app, which keeps the session by refreshing. */
    static final List<String> GRANTS = List.of("authorization_code", "refresh_token");

    /**
     * The longest a rotated secret keeps working: long enough for any rollout, short enough that a leaked secret an
     * app rotated away does not live on.
     */
    static final Duration MAX_GRACE = Duration.ofDays(30);

    private final OAuthClients clients;

    @Activate
    public AppClients(@Reference OAuthClients clients) {
        this.clients = clients;
    }

    @Override
    public Registered register(String ownerPrincipalId, Spec spec) {
        if (ownerPrincipalId == null || ownerPrincipalId.isBlank()) {
            throw new IllegalArgumentException("an app's OAuth client needs an owner");
        }
        OAuthClients.Registered r = clients.register(ownerPrincipalId, checked(spec), false, "app manifest");
        return registered(r.client(), r.secret());
    }

    @Override
    public Optional<Registered> update(String ownerPrincipalId, String clientId, Spec spec) {
        OAuthClients.ClientSpec checked = checked(spec);
        return clients.replaceOwned(ownerPrincipalId, clientId, checked).map(c -> registered(c, null));
    }

    /** A {@code grace} that is null or negative is none (the old secret stops now); one over {@link #MAX_GRACE} is cut. */
    @Override
    public Optional<Registered> rotateSecret(String ownerPrincipalId, String clientId, Duration grace) {
        Duration g = grace == null || grace.isNegative() ? Duration.ZERO : grace;
        if (g.compareTo(MAX_GRACE) > 0) {
            g = MAX_GRACE;
        }
        return clients.rotateSecret(ownerPrincipalId, clientId, Instant.now().plus(g))
                .map(r -> registered(r.client(), r.secret()));
    }

    @Override
    public boolean delete(String ownerPrincipalId, String clientId) {
        return clients.deleteOwned(ownerPrincipalId, clientId);
    }

    /** The manifest's spec as the registration endpoint's, with its checks; {@link Invalid} when refused. */
    static OAuthClients.ClientSpec checked(Spec spec) {
        if (spec == null) {
            throw new Invalid("the OAuth client spec is missing");
        }
        for (String u : spec.redirectUris()) {
            if (u == null) {
                throw new Invalid("redirect_uris holds an invalid URI: null");
            }
        }
        Set<String> scopes = new LinkedHashSet<>();
        for (String s : spec.scopes()) {
            if (s == null || !ScopeSet.KNOWN.containsKey(s.trim())) {
                throw new Invalid("unknown scope '" + s + "'; known: " + String.join(" ", ScopeSet.KNOWN.keySet()));
            }
            scopes.add(s.trim());
        }
        OAuthClients.ClientSpec c = new OAuthClients.ClientSpec(
                spec.clientName(),
                spec.redirectUris(),
                new LinkedHashSet<>(GRANTS),
                scopes,
                // the platform's apps post their credentials in the token request's body; Basic is accepted as well
                "client_secret_post",
                null,
                blankToNull(spec.logoUri()),
                List.of(),
                blankToNull(spec.tosUri()),
                blankToNull(spec.policyUri()));
        OAuthClients.checkSpec(c, Invalid::new);
        return c;
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    private static Registered registered(Client c, String secret) {
        return new Registered(
                c.clientId(),
                secret,
                new Spec(c.name(), c.redirectUris(), List.copyOf(c.scopes()), c.logoUri(), c.tosUri(), c.policyUri()));
    }
}
