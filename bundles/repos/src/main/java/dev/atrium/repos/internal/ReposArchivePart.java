package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry.PushLock;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.NullProgressMonitor;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.transport.BundleWriter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * A workspace's repositories in a workspace archive: each one's branches and tags as a Git bundle
 * ({@code repos/bundles/<n>.bundle}, what {@code git bundle create --branches --tags} makes), then
 * {@code repos/repositories.jsonl} with their settings ({@code bundle} names the file; none for an empty repository).
 * An import makes each repository and fetches from its bundle with the checks a fork makes.
 */
@Component(service = WorkspaceArchivePart.class)
public class ReposArchivePart implements WorkspaceArchivePart {

    static final String LISTING = "repositories.jsonl";

    private final Repositories repositories;

    @Activate
    public ReposArchivePart(@Reference Repositories repositories) {
        this.repositories = repositories;
    }

    @Override
    public String name() {
        return "repos";
    }

    @Override
    public long export(SpaceRef space, ArchiveWriter out) throws IOException {
        List<Map<String, Object>> listing = new ArrayList<>();
        int bundles = 0;
        for (Repository r : repositories.list(space.id())) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("name", r.name());
            line.put("description", r.description());
            line.put("visibility", r.visibility());
            line.put("default_branch", r.defaultBranch());
            line.put("is_default", r.isDefault());
            try (org.eclipse.jgit.lib.Repository git = repositories.open(r)) {
                BundleWriter bundle = new BundleWriter(git);
                int refs = 0;
                for (Ref ref : git.getRefDatabase().getRefsByPrefix(Constants.R_HEADS, Constants.R_TAGS)) {
                    if (ref.getObjectId() != null) {
                        bundle.include(ref.getName(), ref.getObjectId());
                        refs++;
                    }
                }
                if (refs > 0) {
                    bundles++;
                    String name = "bundles/" + bundles + ".bundle";
                    try (OutputStream bytes = out.entry(name)) {
                        bundle.writeBundle(NullProgressMonitor.INSTANCE, bytes);
                    }
                    line.put("bundle", name);
                }
            }
            listing.add(line);
        }
        Lines lines = out.lines(LISTING);
        for (Map<String, Object> line : listing) {
            lines.add(line);
        }
        return listing.size();
    }

    @Override
    public long restore(SpaceRef space, ArchiveReader in) throws IOException {
        long[] n = {0};
        in.lines(LISTING, line -> {
            JsonBody b = JsonBody.of(line);
            String name = b.text("name", 1, 100);
            Repository r = repositories.create(
                    space.id(),
                    name,
                    b.optionalText("description", 0, 1000).orElse(""),
                    b.oneOf("visibility", SpaceReposResource.VISIBILITIES).orElse("private"),
                    b.optionalText("default_branch", 1, 200).orElse("main"),
                    b.bool("is_default").orElse(false),
                    null);
            String bundle = b.string("bundle").orElse(null);
            if (bundle != null) {
                fill(r, in, bundle);
            }
            n[0]++;
        });
        return n[0];
    }

    /** Fetches every branch and tag of the archive's bundle into the new repository (deleted when that fails). */
    private void fill(Repository r, ArchiveReader in, String bundle) throws IOException {
        Path file = Files.createTempFile("atrium-import-", ".bundle");
        try {
            // a bundle is a pack: the remote import's pack limit bounds it (an archive's entry may inflate far beyond)
            long limit = repositories.importLimits().maxPackBytes();
            try (InputStream bytes = in.open(bundle);
                    OutputStream out = Files.newOutputStream(file)) {
                byte[] buffer = new byte[64 * 1024];
                long copied = 0;
                for (int n = bytes.read(buffer); n >= 0; n = bytes.read(buffer)) {
                    copied += n;
                    if (copied > limit) {
                        repositories.delete(r);
                        throw ApiException.badRequest("repos: the bundle of " + r.name()
                                + " is larger than the pack limit of " + limit + " bytes");
                    }
                    out.write(buffer, 0, n);
                }
            }
            try (PushLock lock = repositories.lockForPush(r, Duration.ofSeconds(10));
                    Git git = Git.wrap(repositories.open(r))) {
                CheckedFetch.fetch(git, file.toUri().toString(), true, c -> {}, null, null);
            } catch (GitAPIException | RuntimeException e) {
                repositories.delete(r);
                if (e instanceof ApiException a) {
                    throw a;
                }
                throw ApiException.badRequest(
                        "repos: the bundle of " + r.name() + " could not be fetched: " + e.getMessage());
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Override
    public void discard(SpaceRef space) {
        for (Repository r : repositories.list(space.id())) {
            repositories.delete(r);
        }
    }
}
