package dev.atrium.search.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonShape;
import dev.atrium.kernel.api.KernelResource;
import dev.atrium.kernel.api.RequiresScope;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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

/** {@code /api/repos/:repoId/semantic-index} and {@code /semantic-search}: who may do what, as the repos routes say. */
final class RepositorySearchResources {

    private RepositorySearchResources() {}

    static Map<String, Object> stateJson(RepositoryIndex.State s, String status) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("repo_id", s.repoId());
        m.put("status", status);
        m.put("branch", s.branch());
        m.put("commit", s.commit());
        m.put("files", s.files());
        m.put("chunks", s.chunks());
        m.put("indexed_at", s.indexedAt() == null ? null : s.indexedAt().toString());
        m.put("error", s.error());
        return m;
    }

    static void requireVectors(SearchIndex index) {
        if (!index.vectorsConfigured()) {
            throw new ApiException(
                    404,
                    "SEARCH_NOT_CONFIGURED",
                    "no embeddings API is configured: set ATRIUM_EMBEDDINGS_BASE_URL (and ATRIUM_EMBEDDINGS_API_KEY)");
        }
    }

    /**
     * {@code POST}: the repository's owner makes its default branch indexed (and kept indexed on every push). Answers
     * 200 with the index's state when indexing ends within 30 s, else 202 while it goes on.
     */
    @Component(service = Index.class)
    @KernelResource
    @Path("/api/repos/{repoId}/semantic-index")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Index {
        private final RepositoryRegistry repositories;
        private final RepositoryIndex repositoryIndex;
        private final SearchIndex index;

        @Activate
        public Index(
                @Reference RepositoryRegistry repositories,
                @Reference RepositoryIndex repositoryIndex,
                @Reference SearchIndex index) {
            this.repositories = repositories;
            this.repositoryIndex = repositoryIndex;
            this.index = index;
        }

        @POST
        @RequiresScope("repos:write")
        @JsonShape(SearchJson.RepositoryIndexState.class)
        public Response index(@Context SecurityContext sc, @PathParam("repoId") String repoId) {
            Repository repo = repositories.writable(Caller.from(sc), repoId);
            requireVectors(index);
            try {
                RepositoryIndex.State s = repositoryIndex.request(repo).get(30, TimeUnit.SECONDS);
                return Response.ok(stateJson(s, "indexed")).build();
            } catch (TimeoutException e) {
                RepositoryIndex.State s = repositoryIndex.state(repo.id()).orElseThrow();
                return Response.status(202).entity(stateJson(s, "indexing")).build();
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                throw new ApiException(
                        502,
                        "EMBEDDINGS_FAILED",
                        "indexing failed: " + (cause == null ? e.getMessage() : cause.getMessage()));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw ApiException.unavailable("interrupted");
            }
        }
    }

    /** {@code GET ?q=&limit=}: anyone who may read the repository searches its indexed default branch by meaning. */
    @Component(service = Search.class)
    @KernelResource
    @Path("/api/repos/{repoId}/semantic-search")
    @Produces(MediaType.APPLICATION_JSON)
    public static class Search {
        private final RepositoryRegistry repositories;
        private final RepositoryIndex repositoryIndex;
        private final SearchIndex index;
        /** The vector queries' billing gate and meter, one for every kind of search. */
        private final HybridSearch search;

        @Activate
        public Search(
                @Reference RepositoryRegistry repositories,
                @Reference RepositoryIndex repositoryIndex,
                @Reference SearchIndex index,
                @Reference HybridSearch search) {
            this.repositories = repositories;
            this.repositoryIndex = repositoryIndex;
            this.index = index;
            this.search = search;
        }

        @GET
        @RequiresScope("repos:read")
        @JsonShape(SearchJson.RepositoryAnswer.class)
        public Map<String, Object> search(
                @Context SecurityContext sc,
                @PathParam("repoId") String repoId,
                @QueryParam("q") String q,
                @QueryParam("limit") String limit) {
            Repository repo = repositories.readable(Caller.from(sc), repoId).repository();
            if (q == null || q.isBlank()) {
                throw ApiException.badRequest("q is required");
            }
            if (q.length() > SpaceSearchResource.MAX_QUERY) {
                throw ApiException.badRequest("q must be at most " + SpaceSearchResource.MAX_QUERY + " characters");
            }
            int n = SpaceSearchResource.limit(limit, 10);
            requireVectors(index);
            RepositoryIndex.State state = repositoryIndex
                    .state(repo.id())
                    .filter(s -> s.indexedAt() != null)
                    .orElseThrow(() -> new ApiException(
                            409,
                            "NOT_INDEXED",
                            "this repository is not indexed: its owner indexes it with POST /api/repos/" + repo.id()
                                    + "/semantic-index"));
            search.requireVectorQuery(repo.spaceId());
            List<Map<String, Object>> results = new ArrayList<>();
            try {
                List<RepositoryIndex.Found> found = repositoryIndex.search(repo.id(), q.strip(), n);
                // the repository's owner pays for the queries, as for their own workspace's searches
                search.meter(repo.spaceId());
                for (RepositoryIndex.Found f : found) {
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("path", f.path());
                    one.put("start_line", f.startLine());
                    one.put("end_line", f.endLine());
                    one.put("symbol", f.symbol());
                    one.put("similarity", Math.round(f.similarity() * 1e4) / 1e4);
                    one.put("snippet", HybridSearch.snippet(f.text()));
                    results.add(one);
                }
            } catch (IOException e) {
                throw new ApiException(502, "EMBEDDINGS_FAILED", "the search failed: " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw ApiException.unavailable("interrupted");
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("repo_id", repo.id());
            m.put("commit", state.commit());
            m.put("query", q);
            m.put("results", results);
            return m;
        }
    }
}
