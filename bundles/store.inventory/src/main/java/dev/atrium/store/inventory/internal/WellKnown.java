package dev.atrium.store.inventory.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.store.ap.api.ActivityMedia;
import dev.atrium.store.inventory.internal.Directory.RepoView;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * WebFinger (Model A): a store by {@code acct:<slug>@<host>} or its actor URL, a repository by its actor URL
 * ({@code <base>/ap/repos/<owner>/<repo>}); another host, a private or missing repository is 404.
 */
@Component(service = WellKnown.class)
@KernelResource
@Path("/.well-known/webfinger")
@Anonymous
public class WellKnown {

    private final Model model;

    @Activate
    public WellKnown(@Reference Model model) {
        this.model = model;
    }

    @GET
    @JsonShape(ActivityJson.WebFinger.class)
    public Response webfinger(@QueryParam("resource") String resource, @Context UriInfo uri) {
        if (resource == null || resource.isBlank()) {
            throw ApiException.badRequest(
                    "resource is required: acct:<store>@<host>, a store's or a repository's actor URL");
        }
        String base = model.base(uri);
        URI b = URI.create(base);
        String host = b.getPort() == -1 ? b.getHost() : b.getHost() + ":" + b.getPort();
        String stores = base + "/ap/stores/";
        String repos = base + "/ap/repos/";
        Map<String, Object> jrd = new LinkedHashMap<>();
        String actor;
        if (resource.startsWith("acct:")) {
            String acct = resource.substring(5);
            int at = acct.lastIndexOf('@');
            if (at <= 0) {
                throw ApiException.badRequest("an acct: resource is acct:<store>@<host>");
            }
            if (!acct.substring(at + 1).equalsIgnoreCase(host)) {
                throw ApiException.notFound("no such store on " + host);
            }
            actor = stores + model.store(acct.substring(0, at)).store().slug();
            jrd.put("subject", resource);
            jrd.put("aliases", List.of(actor));
        } else if (resource.startsWith(stores) && resource.indexOf('/', stores.length()) < 0) {
            Model.Published p = model.store(resource.substring(stores.length()));
            actor = stores + p.store().slug();
            jrd.put("subject", "acct:" + p.store().slug() + "@" + host);
            jrd.put("aliases", List.of(actor));
        } else if (resource.startsWith(repos)) {
            String[] parts = resource.substring(repos.length()).split("/", -1);
            if (parts.length != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
                throw ApiException.notFound("no such repository on " + host);
            }
            RepoView r = model.publicRepository(parts[0], parts[1]);
            actor = base + r.actorPath();
            jrd.put("subject", actor);
            jrd.put("aliases", List.of(actor));
        } else {
            throw ApiException.notFound("no such store or repository on " + host);
        }
        jrd.put("links", List.of(Map.of("rel", "self", "type", "application/activity+json", "href", actor)));
        return Docs.json(jrd, ActivityMedia.JRD_JSON);
    }
}
