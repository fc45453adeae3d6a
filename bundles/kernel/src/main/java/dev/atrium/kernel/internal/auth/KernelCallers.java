package dev.atrium.kernel.internal.auth;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.Callers;
import dev.atrium.kernel.internal.domain.PrincipalRecord;
import dev.atrium.kernel.internal.domain.Principals;
import java.util.Set;
import org.osgi.framework.Bundle;
import org.osgi.service.component.ComponentContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ServiceScope;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Callers for work done on a Principal's behalf after its request (a run for its requester). One instance per using
 * bundle ({@link ServiceScope#BUNDLE}), so the kernel knows who asks: only the bundles the configuration names may act
 * for others, and never with every scope.
 */
@Component(service = Callers.class, scope = ServiceScope.BUNDLE)
@Designate(ocd = KernelCallers.Config.class)
public class KernelCallers implements Callers {

    @ObjectClassDefinition(name = "Atrium callers acting for a Principal")
    public @interface Config {
        @AttributeDefinition(
                description = "Symbolic names of the bundles that may act for a Principal after its request")
        String[] acting_for_bundles() default {"dev.atrium.runs"};
    }

    private final Principals principals;
    private final String usingBundle;
    private final boolean allowed;

    @Activate
    public KernelCallers(@Reference Principals principals, ComponentContext context, Config config) {
        this.principals = principals;
        Bundle using = context.getUsingBundle();
        this.usingBundle = using == null ? null : using.getSymbolicName();
        this.allowed =
                usingBundle != null && Set.of(config.acting_for_bundles()).contains(usingBundle);
    }

    @Override
    public Caller actingFor(String principalId, Set<String> scopes) {
        if (!allowed) {
            throw ApiException.forbidden("bundle " + usingBundle + " may not act for a Principal");
        }
        if (scopes == null || scopes.contains(Caller.ALL_SCOPES)) {
            throw ApiException.forbidden("a caller acting for a Principal never holds every scope");
        }
        PrincipalRecord p =
                principalId == null ? null : principals.get(principalId).orElse(null);
        if (p == null || !"active".equals(p.status())) {
            throw ApiException.notFound("no active Principal " + principalId);
        }
        return Mint.KERNEL.actingFor(principalId, scopes);
    }
}
