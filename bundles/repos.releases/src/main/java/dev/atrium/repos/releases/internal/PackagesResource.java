package dev.atrium.repos.releases.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.atrium.kernel.api.Anonymous;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.NulText;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.RepositoryRegistry.PublicRepository;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.ws.rs.Consumes;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.QueryParam;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.core.SecurityContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code /api/explore/packages}: packages (public repositories whose published releases name semantic versions), their
 * versions, latest version and reviews. Reads answer anyone alike; a review needs a signed-in caller.
 */
@Component(service = PackagesResource.class)
@KernelResource
@Path("/api/explore/packages")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class PackagesResource {

    static final int MOST_SUGGESTIONS = 10;
    static final int MAX_REVIEW = 10_000;

    private final Packages packages;

    @Activate
    public PackagesResource(@Reference Packages packages) {
        this.packages = packages;
    }

    @GET
    @Anonymous
    @JsonShape(PackageJson.Page.class)
    public Map<String, Object> search(
            @QueryParam("q") String q, @QueryParam("limit") String limit, @QueryParam("offset") String offset) {
        String query = text("q", q, 200);
        PageRequest page = PageRequest.of(limit, offset);
        List<Map<String, Object>> items = packages.search(query, page.limit(), page.offset(), false).stream()
                .map(packages::json)
                .toList();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("packages", items);
        body.put("limit", page.limit());
        body.put("offset", page.offset());
        return body;
    }

    @GET
    @Path("suggest")
    @Anonymous
    @JsonShape(PackageJson.Suggestions.class)
    public Map<String, Object> suggest(@QueryParam("q") String q) {
        String query = text("q", q, 100);
        if (query == null) {
            return Map.of("suggestions", List.of());
        }
        List<PublicRepository> found = new java.util.ArrayList<>(packages.search(query, MOST_SUGGESTIONS, 0, true));
        if (found.size() < MOST_SUGGESTIONS) {
            for (PublicRepository r : packages.search(query, MOST_SUGGESTIONS, 0, false)) {
                if (found.size() < MOST_SUGGESTIONS
                        && found.stream()
                                .noneMatch(f -> f.repository()
                                        .id()
                                        .equals(r.repository().id()))) {
                    found.add(r);
                }
            }
        }
        return Map.of(
                "suggestions",
                found.stream()
                        .map(r -> {
                            Map<String, Object> m = new LinkedHashMap<>();
                            m.put("repo_id", r.repository().id());
                            m.put("name", r.repository().name());
                            m.put("full_name", r.fullName());
                            return m;
                        })
                        .toList());
    }

    @GET
    @Path("{username}/{repoName}/latest")
    @Anonymous
    @JsonShape(PackageJson.Latest.class)
    public Map<String, Object> latest(@PathParam("username") String username, @PathParam("repoName") String repoName) {
        PublicRepository r = byName(username, repoName);
        Packages.Version v = packages.latest(r.repository().id())
                .orElseThrow(() -> ApiException.notFound("the package has no version that is not a prerelease"));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("package", packages.json(r));
        body.put("version", v.json());
        return body;
    }

    @GET
    @Path("{username}/{repoName}/versions")
    @Anonymous
    @JsonShape(PackageJson.Versions.class)
    public Map<String, Object> versions(
            @PathParam("username") String username, @PathParam("repoName") String repoName) {
        PublicRepository r = byName(username, repoName);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("package", packages.json(r));
        body.put(
                "versions",
                packages.versions(r.repository().id()).stream()
                        .map(Packages.Version::json)
                        .toList());
        return body;
    }

    @GET
    @Path("by-repo/{repoId}/reviews")
    @Anonymous
    @JsonShape(PackageJson.Reviews.class)
    public Map<String, Object> reviews(
            @PathParam("repoId") String repoId,
            @QueryParam("limit") String limit,
            @QueryParam("offset") String offset) {
        NulText.reject("repoId", repoId);
        PageRequest page = PageRequest.of(limit, offset);
        PublicRepository r = packages.packageById(repoId);
        Packages.Rating rating = packages.rating(r.repository().id());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put(
                "reviews",
                packages.reviews(r.repository().id(), page.limit(), page.offset()).stream()
                        .map(packages::reviewJson)
                        .toList());
        body.put("rating_average", rating.average());
        body.put("rating_count", rating.count());
        body.put("limit", page.limit());
        body.put("offset", page.offset());
        return body;
    }

    /**
     * Posts the caller's review (deprecated by the spec, kept working): one per user and package, so a second post
     * changes the first (200) where the first made it (201). Answers carry {@code Deprecation: true}.
     */
    @POST
    @Path("by-repo/{repoId}/reviews")
    @RequiresScope("repos:write")
    @JsonShape(PackageJson.OneReview.class)
    public Response review(
            @Context SecurityContext sc,
            @PathParam("repoId") String repoId,
            @JsonShape(PackageJson.ReviewInput.class) JsonNode json) {
        Caller caller = Caller.from(sc);
        NulText.reject("repoId", repoId);
        JsonBody b = JsonBody.of(json);
        NulText.reject(json);
        JsonNode ratingNode = json.get("rating");
        if (ratingNode == null
                || !ratingNode.isIntegralNumber()
                || ratingNode.asLong() < 1
                || ratingNode.asLong() > 5) {
            throw ApiException.badRequest("rating must be an integer from 1 to 5");
        }
        String text = b.string("body").orElse("");
        if (text.length() > MAX_REVIEW) {
            throw ApiException.badRequest("body must be at most " + MAX_REVIEW + " characters");
        }
        PublicRepository r = packages.packageById(repoId);
        Map.Entry<Packages.Review, Boolean> written =
                packages.review(r.repository().id(), caller.principalId(), ratingNode.intValue(), text);
        Packages.Rating rating = packages.rating(r.repository().id());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("review", packages.reviewJson(written.getKey()));
        body.put("rating_average", rating.average());
        body.put("rating_count", rating.count());
        return Response.status(written.getValue() ? 201 : 200)
                .entity(body)
                .header("Deprecation", "true")
                .header(
                        "Link",
                        "</api/explore/packages/by-repo/" + r.repository().id()
                                + "/reviews>; rel=\"deprecation\"; type=\"application/json\"")
                .build();
    }

    private PublicRepository byName(String username, String repoName) {
        NulText.reject("username", username);
        NulText.reject("repoName", repoName);
        return packages.packageByName(
                username, repoName.endsWith(".git") ? repoName.substring(0, repoName.length() - 4) : repoName);
    }

    private static String text(String name, String value, int max) {
        if (value == null || value.isBlank()) {
            return null;
        }
        NulText.reject(name, value);
        String t = value.trim();
        if (t.length() > max) {
            throw ApiException.badRequest(name + " must be at most " + max + " characters");
        }
        return t;
    }
}
