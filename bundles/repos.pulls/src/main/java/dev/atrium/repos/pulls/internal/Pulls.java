package dev.atrium.repos.pulls.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.NamedThreads;
import dev.atrium.kernel.api.PrincipalDirectory;
import dev.atrium.notifications.api.Notice;
import dev.atrium.notifications.api.Notifications;
import dev.atrium.repos.api.Repository;
import dev.atrium.repos.api.RepositoryRegistry;
import dev.atrium.repos.api.RepositoryRegistry.RefChange;
import dev.atrium.repos.pulls.internal.PullStore.Comment;
import dev.atrium.repos.pulls.internal.PullStore.Pull;
import dev.atrium.repos.pulls.internal.PullStore.Review;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.PersonIdent;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.event.Event;
import org.osgi.service.event.EventAdmin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What pull requests do: open one (its head brought into the base repository), keep its commits current, check and
 * cache its merge, comment and review, merge, resolve, and announce each of these as an {@code atrium/pull/*} event.
 * Merge checks of pull requests whose head or base moved run on this component's own thread.
 */
@Component(service = Pulls.class)
public class Pulls {

    /** EventAdmin topics: {@code atrium/pull/opened}, {@code …/closed}, … with {@link #EVENT_PROPERTIES}. */
    static final String TOPIC = "atrium/pull/";

    static final List<String> EVENT_PROPERTIES = List.of(
            "repo_id",
            "space_id",
            "pull_id",
            "number",
            "principal_id",
            "head_commit",
            "base_commit",
            "head_repo_id",
            "head_branch",
            "base_branch");

    private static final Logger LOG = LoggerFactory.getLogger(Pulls.class);

    private final RepositoryRegistry repositories;
    private final PullStore store;
    private final PullGit git;
    private final PullDiffs diffs;
    private final AiReviewer reviewer;
    private final PrincipalDirectory principals;
    private final ExecutorService checks =
            Executors.newSingleThreadExecutor(NamedThreads.factory("atrium-pull-checks"));
    private volatile EventAdmin events;

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    private volatile Notifications notifications;

    @Activate
    public Pulls(
            @Reference RepositoryRegistry repositories,
            @Reference PullStore store,
            @Reference AiReviewer reviewer,
            @Reference PrincipalDirectory principals) {
        this.repositories = repositories;
        this.store = store;
        this.reviewer = reviewer;
        this.principals = principals;
        this.git = new PullGit(repositories);
        this.diffs = new PullDiffs(git);
    }

    @Deactivate
    void deactivate() throws InterruptedException {
        checks.shutdownNow();
        if (!checks.awaitTermination(10, TimeUnit.SECONDS)) {
            LOG.warn("a merge check did not stop within 10 s of the bundle stopping");
        }
    }

    @Reference(
            cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC,
            policyOption = ReferencePolicyOption.GREEDY)
    void setEvents(EventAdmin events) {
        this.events = events;
    }

    void unsetEvents(EventAdmin events) {
        if (this.events == events) {
            this.events = null;
        }
    }

    PullGit git() {
        return git;
    }

    PullDiffs diffs() {
        return diffs;
    }

    // ------------------------------------------------------------------------------------------- open, current

    Pull open(
            Caller caller,
            Repository base,
            Repository head,
            String headBranch,
            String baseBranch,
            String title,
            String body,
            boolean draft) {
        String baseCommit = git.branch(base, baseBranch);
        if (baseCommit == null) {
            throw ApiException.badRequest("base branch " + baseBranch + " does not exist");
        }
        if (git.branch(head, headBranch) == null) {
            throw ApiException.badRequest("head branch " + headBranch + " does not exist");
        }
        if (base.id().equals(head.id()) && baseBranch.equals(headBranch)) {
            throw ApiException.badRequest("head and base are the same branch");
        }
        if (!publishable(base, head)) {
            throw ApiException.badRequest("the head is a private fork in another workspace: a pull request would show"
                    + " its commits to everyone who reads this repository; make the fork public first");
        }
        // the head commit is recorded after it is in the base repository, under the number the row gets
        Pull p = store.create(
                base.id(),
                title,
                body,
                head.id(),
                headBranch,
                baseBranch,
                draft,
                caller.principalId(),
                git.branch(head, headBranch),
                baseCommit);
        p = current(base, p);
        recheck(base, p);
        publish("opened", base, p, caller.principalId());
        if (!repositories.readable(caller, base.id()).owned()) {
            notify(Notice.toSpaceOwner(base.spaceId(), "pull.opened", title(p, "opened on " + base.name())), p);
        }
        return p;
    }

    /**
     * The pull request with its head and base as they are now: an open one's head is brought into the base repository
     * ({@code refs/pull/N/head}) first. A head branch that is gone leaves the last known commits.
     */
    Pull current(Repository base, Pull p) {
        if (!p.open()) {
            return p;
        }
        Optional<Repository> head = repositories.byId(p.headRepoId());
        String baseCommit = git.branch(base, p.baseBranch());
        String headCommit = p.headCommit();
        if (head.isPresent() && publishable(base, head.get())) {
            try {
                headCommit = git.bringHead(base, head.get(), p.headBranch(), p.headRef());
            } catch (ApiException goneOrBusy) {
                // the head branch was deleted, or a push holds the lock: the pull request keeps what it had
            }
        }
        String baseNow = baseCommit == null ? p.baseCommit() : baseCommit;
        if (headCommit.equals(p.headCommit()) && baseNow.equals(p.baseCommit())) {
            return p; // nothing moved: no write
        }
        Pull now = store.moved(p, headCommit, baseNow);
        if (!now.headCommit().equals(p.headCommit())) {
            publish("synchronized", base, now, null);
        }
        return now;
    }

    /**
     * Whether the head repository's commits may go into the base repository, where everyone who reads the base reads
     * them: the same repository, a public fork, or a fork in the base's own workspace. A fork made private since stops
     * feeding its pull requests (they keep the last head they had).
     */
    static boolean publishable(Repository base, Repository head) {
        return head.id().equals(base.id()) || head.isPublic() || head.spaceId().equals(base.spaceId());
    }

    /** The open pull requests {@code branch} of {@code repoId} is the head or base of, brought up to date. */
    void pushed(String repoId, String branch) {
        for (Pull p : store.openTouching(repoId, branch)) {
            if (Thread.currentThread().isInterrupted()) {
                return;
            }
            try {
                repositories.byId(p.repoId()).ifPresent(base -> recheck(base, current(base, p)));
            } catch (RuntimeException e) {
                LOG.warn("could not bring pull request {} up to date after a push", p.id(), e);
            }
        }
    }

    /** Computes the merge check of the pull request's commits in the background (cached by the commits). */
    private void recheck(Repository base, Pull p) {
        if (!p.open() || p.mergeable() != null) {
            return;
        }
        try {
            checks.execute(() -> {
                try {
                    check(base, p);
                } catch (RuntimeException e) {
                    LOG.warn("the merge check of pull request {} failed", p.id(), e);
                }
            });
        } catch (RejectedExecutionException stopping) {
            // the next read computes it
        }
    }

    /** The merge check of the pull request's current commits, cached per (base, head) pair. */
    PullStore.Check check(Repository base, Pull p) {
        PullStore.Check c = store.check(base.id(), p.baseCommit(), p.headCommit())
                .orElseGet(() -> {
                    PullStore.Check fresh = git.check(base, p.baseCommit(), p.headCommit());
                    store.check(base.id(), p.baseCommit(), p.headCommit(), fresh);
                    return fresh;
                });
        store.mergeable(p.id(), p.headCommit(), p.baseCommit(), c.clean());
        return c;
    }

    Pull update(
            Caller caller,
            Repository base,
            Pull p,
            String title,
            String body,
            String baseBranch,
            Boolean draft,
            String state) {
        if (p.state().equals("merged")) {
            throw ApiException.conflict("the pull request is merged: it can no longer change");
        }
        Pull updated = store.update(p, title, body, baseBranch, draft, state);
        if (state != null && !state.equals(p.state())) {
            publish(state.equals("closed") ? "closed" : "reopened", base, updated, caller.principalId());
            toAuthor(
                    caller,
                    base,
                    updated,
                    "pull." + (state.equals("closed") ? "closed" : "reopened"),
                    state.equals("closed") ? "closed" : "reopened");
        }
        if (baseBranch != null || "open".equals(state)) {
            updated = current(base, updated);
            recheck(base, updated);
        }
        return updated;
    }

    // ------------------------------------------------------------------------------------ comments, reviews

    /** 400 unless {@code path} is a file of the head commit with at least {@code line} lines. */
    void checkLine(Repository base, Pull p, String path, int line) {
        git.checkLine(base, p.headCommit(), path, line);
    }

    Comment comment(Caller caller, Repository base, Pull p, Comment c) {
        Comment made = store.comment(p.id(), null, caller.principalId(), c.body(), c.path(), c.line(), p.headCommit());
        publish("commented", base, p, caller.principalId());
        toAuthor(caller, base, p, "pull.commented", "has a new comment");
        return made;
    }

    /**
     * The comments' wire form; an inline one is {@code outdated} once the head's file at its path is not the one it was
     * made on (changed, deleted, or no longer readable).
     */
    List<Map<String, Object>> commentsJson(Repository base, Pull p, List<Comment> comments) {
        List<Map<String, Object>> out = new ArrayList<>();
        Map<String, Optional<ObjectId>> heads = new HashMap<>();
        try (org.eclipse.jgit.lib.Repository repo = git.open(base)) {
            for (Comment c : comments) {
                boolean outdated = false;
                if (c.path() != null && !c.commitId().equals(p.headCommit())) {
                    Optional<ObjectId> now =
                            heads.computeIfAbsent(c.path(), path -> blobOrEmpty(repo, p.headCommit(), path));
                    Optional<ObjectId> then = blobOrEmpty(repo, c.commitId(), c.path());
                    outdated = now.isEmpty() || !now.equals(then);
                }
                out.add(c.toJson(outdated));
            }
        }
        return out;
    }

    private static Optional<ObjectId> blobOrEmpty(org.eclipse.jgit.lib.Repository repo, String commit, String path) {
        try {
            return Optional.ofNullable(PullGit.blob(repo, commit, path));
        } catch (IOException | RuntimeException gone) {
            return Optional.empty();
        }
    }

    Map<String, Object> review(
            Caller caller, Repository base, Pull p, String event, String body, List<Comment> inline) {
        if (!event.equals("comment") && p.authorId().equals(caller.principalId())) {
            throw ApiException.badRequest("you cannot approve or request changes on your own pull request");
        }
        String state = switch (event) {
            case "approve" -> "approved";
            case "request_changes" -> "changes_requested";
            default -> "commented";
        };
        Review r = store.review(p.id(), caller.principalId(), state, body, p.headCommit(), inline);
        publish("reviewed", base, p, caller.principalId());
        toAuthor(
                caller,
                base,
                p,
                "pull.reviewed",
                switch (state) {
                    case "approved" -> "was approved";
                    case "changes_requested" -> "needs changes";
                    default -> "was reviewed";
                });
        return reviewJson(base, p, r);
    }

    List<Map<String, Object>> reviewsJson(Repository base, Pull p) {
        List<Comment> comments = store.comments(p.id()); // once for every review
        List<Map<String, Object>> out = new ArrayList<>();
        for (Review r : store.reviews(p.id())) {
            out.add(reviewJson(base, p, r, comments));
        }
        return out;
    }

    private Map<String, Object> reviewJson(Repository base, Pull p, Review r) {
        return reviewJson(base, p, r, store.comments(p.id()));
    }

    private Map<String, Object> reviewJson(Repository base, Pull p, Review r, List<Comment> comments) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", r.id());
        m.put("author_id", r.authorId());
        m.put("state", r.state());
        m.put("body", r.body());
        m.put("commit_id", r.commitId());
        m.put("created_at", r.createdAt().toString());
        m.put(
                "comments",
                commentsJson(
                        base,
                        p,
                        comments.stream()
                                .filter(c -> r.id().equals(c.reviewId()))
                                .toList()));
        return m;
    }

    // ---------------------------------------------------------------------------------- merge, resolve, AI

    Map<String, Object> merge(
            Caller caller,
            Repository base,
            Pull found,
            String strategy,
            String expectedBase,
            String expectedHead,
            String message,
            boolean deleteBranch) {
        Pull p = current(base, found);
        if (!p.open()) {
            throw ApiException.conflict("the pull request is " + p.state() + ": only an open one is merged");
        }
        if (p.draft()) {
            throw ApiException.conflict("the pull request is a draft: mark it ready first");
        }
        PersonIdent merger = ident(caller.principalId());
        String text = message != null
                ? message
                : switch (strategy) {
                    case "squash" ->
                        p.title() + " (#" + p.number() + ")" + (p.body().isBlank() ? "" : "\n\n" + p.body());
                    default -> "Merge pull request #" + p.number() + " from " + p.headBranch() + "\n\n" + p.title();
                };
        PullGit.Merged merged;
        Pull done;
        // the state is read again under the lock every merge of this repository takes: two merges of one pull
        // request (a double click) cannot both land
        try (RepositoryRegistry.PushLock lock = repositories.lockForPush(base, PullGit.LOCK_WAIT)) {
            if (!store.get(base.id(), p.number()).open()) {
                throw ApiException.conflict("the pull request was merged or closed meanwhile");
            }
            merged = git.merge(base, p.baseBranch(), p.headRef(), strategy, expectedBase, expectedHead, merger, text);
            done = store.merged(
                    p, merged.commit(), caller.principalId(), merged.change().oldId(), merged.head());
        }
        repositories.pushed(base, caller.principalId(), List.of(merged.change()));
        publish("merged", base, done, caller.principalId());
        toAuthor(caller, base, done, "pull.merged", "was merged");
        boolean deleted = false;
        if (deleteBranch) {
            Optional<Repository> head = repositories.byId(p.headRepoId());
            if (head.isPresent()) {
                try {
                    Repository owned = repositories.writable(caller, head.get().id());
                    RefChange gone = git.deleteBranch(owned, p.headBranch(), p.headCommit());
                    if (gone != null) {
                        repositories.pushed(owned, caller.principalId(), List.of(gone));
                        deleted = true;
                    }
                } catch (ApiException notYours) {
                    // the head is someone else's fork: its branch stays
                }
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pull_request", done.toJson());
        m.put("merge_commit", merged.commit());
        m.put("branch_deleted", deleted);
        return m;
    }

    Map<String, Object> resolve(
            Caller caller, Repository base, Repository head, Pull p, Map<String, byte[]> resolutions, String message) {
        if (!p.open()) {
            throw ApiException.conflict("the pull request is " + p.state());
        }
        if (p.headBranch().equals(head.defaultBranch()) && repositories.mergesOnly(head)) {
            throw ApiException.conflict("the head branch " + p.headBranch()
                    + " is a default branch that takes merges of pull requests only: resolve on another branch");
        }
        RefChange change = git.resolve(
                base,
                p.baseBranch(),
                head,
                p.headBranch(),
                p.headCommit(),
                resolutions,
                ident(caller.principalId()),
                message != null
                        ? message
                        : "Merge branch '" + p.baseBranch() + "' into " + p.headBranch() + "\n\nConflicts resolved: "
                                + String.join(", ", new java.util.TreeSet<>(resolutions.keySet())));
        repositories.pushed(head, caller.principalId(), List.of(change));
        Pull now = current(base, p);
        check(base, now);
        now = store.get(base.id(), p.number());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pull_request", now.toJson());
        m.put("commit", change.newId());
        return m;
    }

    Map<String, Object> aiReview(Caller caller, Repository base, Pull p) {
        Map<String, Object> diff = diffs.diff(base, p.baseCommit(), p.headCommit(), AiReviewer.MAX_DIFF);
        AiReviewer.Written written = reviewer.review(caller, base.spaceId(), p, diff);
        List<Comment> inline = new ArrayList<>();
        for (AiReviewer.Note n : written.notes()) {
            try {
                checkLine(base, p, n.path(), n.line());
                inline.add(new Comment(null, p.id(), null, null, n.body(), n.path(), n.line(), null, null));
            } catch (RuntimeException notALine) {
                // a note on a line the head does not have (or on no file) is left out
            }
        }
        Review r = store.review(p.id(), caller.principalId(), "commented", written.body(), p.headCommit(), inline);
        publish("reviewed", base, p, caller.principalId());
        return reviewJson(base, p, r);
    }

    // -------------------------------------------------------------------------------------------- helpers

    /** A Principal as a Git identity: their username, and an address that reaches nobody. */
    private PersonIdent ident(String principalId) {
        String name = principals
                .get(principalId)
                .map(PrincipalDirectory.Entry::username)
                .filter(n -> n != null && !n.isBlank())
                .orElse(principalId);
        return new PersonIdent(name, principalId + "@users.noreply.atrium");
    }

    /**
     * Tells the pull request's author what someone else did to it, while the base is public. Of a private base only its
     * owner may act, so an author who is someone else can no longer read it (it turned private after they opened the
     * pull request): a notice would tell them that it still exists and what happens in it.
     */
    private void toAuthor(Caller caller, Repository base, Pull p, String type, String what) {
        if (base.isPublic() && !p.authorId().equals(caller.principalId())) {
            notify(Notice.toPrincipal(p.authorId(), type, title(p, what)), p);
        }
    }

    private static String title(Pull p, String what) {
        String t = "#" + p.number() + " " + p.title();
        String full = t + " " + what;
        if (full.length() <= 200) {
            return full;
        }
        int cut = Math.max(1, 199 - what.length() - 1);
        if (Character.isLowSurrogate(t.charAt(cut))) {
            cut--; // never half a character
        }
        return t.substring(0, cut) + "… " + what;
    }

    /** Posts the notice when notifications run; a notice that cannot be posted never fails the request. */
    private void notify(Notice notice, Pull p) {
        Notifications n = notifications;
        if (n == null) {
            return;
        }
        try {
            n.post(notice.withLink("/api/repos/" + p.repoId() + "/pulls/" + p.number())
                    .withData(Map.of("repo_id", p.repoId(), "number", p.number(), "pull_id", p.id())));
        } catch (RuntimeException e) {
            LOG.warn("could not post the notification {} of pull request {}", notice.type(), p.id(), e);
        }
    }

    private void publish(String what, Repository base, Pull p, String principalId) {
        EventAdmin admin = events;
        if (admin == null) {
            return;
        }
        Map<String, Object> props = new HashMap<>();
        props.put("repo_id", base.id());
        props.put("space_id", base.spaceId());
        props.put("pull_id", p.id());
        props.put("number", p.number());
        props.put("head_commit", p.headCommit());
        props.put("base_commit", p.baseCommit());
        props.put("head_repo_id", p.headRepoId());
        props.put("head_branch", p.headBranch());
        props.put("base_branch", p.baseBranch());
        if (principalId != null) {
            props.put("principal_id", principalId);
        }
        admin.postEvent(new Event(TOPIC + what, props));
    }
}
