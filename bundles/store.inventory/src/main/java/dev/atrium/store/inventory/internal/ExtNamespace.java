package dev.atrium.store.inventory.internal;

import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
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

/** {@code /ns/ext}: the JSON-LD context of Model A's {@code ext:} terms; {@code /ns/ext-git} redirects to it (301). */
@Component(service = ExtNamespace.class)
@KernelResource
@Path("/ns")
@Anonymous
public class ExtNamespace {

    static final List<String> TERMS = List.of(
            "Repository",
            "Store",
            "Push",
            "Commit",
            "Tag",
            "SearchService",
            "cloneUri",
            "pushUri",
            "stores",
            "inventory",
            "search",
            "repositorySearch",
            "defaultBranchRef",
            "defaultBranchHash",
            "hash",
            "message",
            "committed",
            "ref",
            "email");

    private final Model model;

    @Activate
    public ExtNamespace(@Reference Model model) {
        this.model = model;
    }

    @GET
    @Path("ext")
    @JsonShape(ActivityJson.Namespace.class)
    public Response namespace(@Context UriInfo uri) {
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("ext", model.base(uri) + "/ns/ext#");
        context.putAll(terms());
        return Docs.json(Map.of("@context", context), ActivityMedia.LD_JSON);
    }

    /** Each term as an {@code ext:} IRI; those holding URLs typed {@code @id}. */
    static Map<String, Object> terms() {
        Map<String, Object> context = new LinkedHashMap<>();
        for (String term : TERMS) {
            context.put(term, "ext:" + term);
        }
        for (String url : List.of("cloneUri", "pushUri", "stores", "inventory", "search", "repositorySearch")) {
            context.put(url, Map.of("@id", "ext:" + url, "@type", "@id"));
        }
        return context;
    }

    @GET
    @Path("ext-git")
    public Response formerNamespace(@Context UriInfo uri) {
        return Docs.redirect(model.base(uri) + "/ns/ext");
    }
}
