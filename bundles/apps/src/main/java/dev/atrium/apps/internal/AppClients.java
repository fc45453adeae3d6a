package dev.atrium.apps.internal;

import dev.atrium.apps.internal.AppStore.Group;
import dev.atrium.apps.internal.manifest.Manifest;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.AppClientRegistry;
import dev.atrium.kernel.api.Sealer;
import dev.atrium.kernel.api.SpaceRef;
import java.io.IOException;
import java.util.Base64;
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The OAuth clients apps own: registered from {@code spec.oauth} through the OAuth capability on behalf of the
 * workspace's owner. The OAuth capability keeps only a hash of a secret; an app needs it again at every deploy (its
 * env), so this keeps it sealed in the app's row.
 */
@Component(service = AppClients.class)
public class AppClients {

    private final AppStore store;
    private final Sealer sealer;
    private final AppsSettings settings;

    /** The OAuth capability, when its feature runs: an app without {@code spec.oauth} deploys without it. */
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile AppClientRegistry oauth;

    @Activate
    public AppClients(@Reference AppStore store, @Reference AppsSettings settings) throws IOException {
        this.store = store;
        this.settings = settings;
        this.sealer = Sealer.withKeyFile(settings.keyFile, "apps-clients1");
    }

    /** A client's id and its secret in clear, for an app's env. */
    record Issued(String clientId, String secret) {}

    private AppClientRegistry registry() {
        AppClientRegistry r = oauth;
        if (r == null) {
            throw ApiException.unavailable("the OAuth capability is not running: the app's spec.oauth needs it (enable"
                    + " the feature oauth)");
        }
        return r;
    }

    /** Registers the group's client, or brings the one it has up to the manifest. */
    Issued ensure(SpaceRef space, Group group, Manifest m, String clientId) {
        Manifest.OAuth o = m.oauth();
        AppClientRegistry.Spec spec = new AppClientRegistry.Spec(
                o.clientName(), o.redirectUris(), o.scopes(), o.logoUri(), o.tosUri(), o.policyUri());
        String owner = space.ownerPrincipalId();
        AppStore.App app = store.appOfGroup(group.id()).orElseThrow();
        // the app's row knows its client even when the inventory lost it (an apply cut short after registering)
        String known = clientId != null ? clientId : app.clientId();
        try {
            if (known != null && known.equals(app.clientId()) && app.sealedSecret() != null) {
                if (registry().update(owner, known, spec).isPresent()) {
                    Optional<String> secret = tryOpen(app.sealedSecret(), known);
                    if (secret.isPresent()) {
                        return new Issued(known, secret.get());
                    }
                    // sealed under a key this server no longer has: a new secret, the old one stops at once
                    AppClientRegistry.Registered r = registry()
                            .rotateSecret(owner, known, java.time.Duration.ZERO)
                            .orElseThrow();
                    store.setAppClient(group.id(), r.clientId(), seal(r.secret(), r.clientId()));
                    return new Issued(r.clientId(), r.secret());
                }
            }
            AppClientRegistry.Registered r = registry().register(owner, spec);
            store.setAppClient(group.id(), r.clientId(), seal(r.secret(), r.clientId()));
            return new Issued(r.clientId(), r.secret());
        } catch (AppClientRegistry.Invalid e) {
            throw new ApiException(422, "INVALID_MANIFEST", "spec.oauth: " + e.getMessage());
        }
    }

    /** A new secret for the app's client; the old one keeps working for the configured grace. */
    Optional<Issued> rotate(SpaceRef space, AppStore.App app) {
        if (app.clientId() == null) {
            return Optional.empty();
        }
        return registry()
                .rotateSecret(space.ownerPrincipalId(), app.clientId(), settings.secretGrace)
                .map(r -> {
                    store.setAppClient(app.groupId(), r.clientId(), seal(r.secret(), r.clientId()));
                    return new Issued(r.clientId(), r.secret());
                });
    }

    /** The current secret of the app's client, if it has one. */
    Optional<Issued> current(AppStore.App app) {
        if (app.clientId() == null || app.sealedSecret() == null) {
            return Optional.empty();
        }
        return Optional.of(new Issued(app.clientId(), open(app.sealedSecret(), app.clientId())));
    }

    java.time.Duration grace() {
        return settings.secretGrace;
    }

    void delete(SpaceRef space, String clientId) {
        registry().delete(space.ownerPrincipalId(), clientId);
    }

    private String seal(String secret, String clientId) {
        Sealer.Sealed s = sealer.seal(secret, clientId);
        Base64.Encoder b = Base64.getEncoder();
        return s.keyId() + "." + b.encodeToString(s.nonce()) + "." + b.encodeToString(s.ciphertext());
    }

    private Optional<String> tryOpen(String sealed, String clientId) {
        try {
            return Optional.of(open(sealed, clientId));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private String open(String sealed, String clientId) {
        String[] p = sealed.split("\\.", 3);
        Base64.Decoder b = Base64.getDecoder();
        return sealer.open(new Sealer.Sealed(p[0], b.decode(p[1]), b.decode(p[2])), clientId);
    }
}
