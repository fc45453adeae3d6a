package dev.atrium.store.pullonly.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.PublicUrls;
import dev.atrium.store.ap.api.ActivityMedia;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.UriInfo;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code /ns/ext-git}: the JSON-LD context of Model B's {@code ext:} terms. */
@Component(service = ExtNamespace.class)
@KernelResource
@Path("/ns/ext-git")
@Anonymous
public class ExtNamespace {

    static final List<String> TERMS = List.of(
            "GitRepository",
            "SearchService",
            "repositories",
            "search",
            "repositorySearch",
            "distributionMode",
            "query",
            "owner",
            "visibility",
            "defaultBranch",
            "cloneUrl",
            "browseUrl",
            "branchesEndpoint",
            "commitsEndpoint",
            "treeUrlTemplate",
            "blobUrlTemplate",
            "refsEndpoint");

    private final PublicUrls urls;

    @Activate
    public ExtNamespace(@Reference PublicUrls urls) {
        this.urls = urls;
    }

    @GET
    public Response namespace(@Context UriInfo uri) {
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("ext", urls.base(uri.getBaseUri()) + "/ns/ext-git#");
        for (String term : TERMS) {
            context.put(term, "ext:" + term);
        }
        return PullOnlyStore.json(Map.of("@context", context), ActivityMedia.LD_JSON);
    }
}
