package dev.atrium.store.pullonly.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.kernel.api.SpaceDirectory;
import dev.atrium.store.ap.api.ActivityMedia;
import dev.atrium.store.ap.api.LocalStores;
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
 * WebFinger for stores: {@code acct:<slug>@<host>} or the store's actor URL; a store whose workspace is gone is not
 * found.
 */
@Component(service = WellKnown.class)
@KernelResource
@Path("/.well-known/webfinger")
@Anonymous
public class WellKnown {

    private final LocalStores stores;
    private final SpaceDirectory spaces;
    private final PublicUrls urls;

    @Activate
    public WellKnown(@Reference LocalStores stores, @Reference SpaceDirectory spaces, @Reference PublicUrls urls) {
        this.stores = stores;
        this.spaces = spaces;
        this.urls = urls;
    }

    @GET
    @JsonShape(PullJson.WebFinger.class)
    public Response webfinger(@QueryParam("resource") String resource, @Context UriInfo uri) {
        if (resource == null || resource.isBlank()) {
            throw ApiException.badRequest("resource is required: acct:<store>@<host> or a store's actor URL");
        }
        String base = urls.base(uri.getBaseUri());
        String host = PullOnlyStore.hostOf(base).orElse("");
        String prefix = base + "/ap/stores/";
        String slug;
        if (resource.startsWith("acct:")) {
            String acct = resource.substring(5);
            int at = acct.lastIndexOf('@');
            if (at <= 0) {
                throw ApiException.badRequest("an acct: resource is acct:<store>@<host>");
            }
            if (!acct.substring(at + 1).equalsIgnoreCase(host)) {
                throw ApiException.notFound("no such store on " + host);
            }
            slug = acct.substring(0, at);
        } else if (resource.startsWith(prefix) && resource.indexOf('/', prefix.length()) < 0) {
            slug = resource.substring(prefix.length());
        } else {
            throw ApiException.notFound("no such store on " + host);
        }
        var store = stores.bySlug(slug)
                .filter(s -> spaces.byId(s.spaceId()).isPresent())
                .orElseThrow(() -> ApiException.notFound("no such store on " + host));
        String actor = prefix + store.slug();
        Map<String, Object> jrd = new LinkedHashMap<>();
        jrd.put("subject", "acct:" + store.slug() + "@" + host);
        jrd.put("aliases", List.of(actor));
        jrd.put("links", List.of(Map.of("rel", "self", "type", "application/activity+json", "href", actor)));
        return PullOnlyStore.json(jrd, ActivityMedia.JRD_JSON);
    }
}
