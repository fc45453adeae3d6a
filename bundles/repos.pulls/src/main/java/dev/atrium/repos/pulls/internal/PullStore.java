package dev.atrium.repos.pulls.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The pull request tables, which this bundle owns. */
@Component(service = PullStore.class)
public class PullStore {

    static final String NOT_FOUND = "pull request not found";

    private static final String PULL =
            "id, repo_id, number, title, body, head_repo_id, head_branch, base_branch, state,"
                    + " draft, author_id, head_commit, base_commit, mergeable, merge_commit, merged_by, created_at, updated_at,"
                    + " closed_at, merged_at";
    private static final String COMMENT = "id, pull_id, review_id, author_id, body, path, line, commit_id, created_at";
    private static final String REVIEW = "id, pull_id, author_id, state, body, commit_id, created_at";
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = JsonMappers.create();

    private final Sql sql;

    @Activate
    public PullStore(@Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.sql = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    record Pull(
            String id,
            String repoId,
            int number,
            String title,
            String body,
            String headRepoId,
            String headBranch,
            String baseBranch,
            String state,
            boolean draft,
            String authorId,
            String headCommit,
            String baseCommit,
            String mergeable,
            String mergeCommit,
            String mergedBy,
            Instant createdAt,
            Instant updatedAt,
            Instant closedAt,
            Instant mergedAt) {

        static Pull of(ResultSet rs) throws SQLException {
            return new Pull(
                    rs.getString("id"),
                    rs.getString("repo_id"),
                    rs.getInt("number"),
                    rs.getString("title"),
                    rs.getString("body"),
                    rs.getString("head_repo_id"),
                    rs.getString("head_branch"),
                    rs.getString("base_branch"),
                    rs.getString("state"),
                    rs.getBoolean("draft"),
                    rs.getString("author_id"),
                    rs.getString("head_commit"),
                    rs.getString("base_commit"),
                    rs.getString("mergeable"),
                    rs.getString("merge_commit"),
                    rs.getString("merged_by"),
                    Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "updated_at"),
                    Sql.instant(rs, "closed_at"),
                    Sql.instant(rs, "merged_at"));
        }

        boolean open() {
            return state.equals("open");
        }

        /** Where the head commits are kept in the base repository (fetched there when the head is a fork's). */
        String headRef() {
            return "refs/pull/" + number + "/head";
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("number", number);
            m.put("repo_id", repoId);
            m.put("title", title);
            m.put("body", body);
            m.put("state", state);
            m.put("draft", draft);
            m.put("author_id", authorId);
            Map<String, Object> head = new LinkedHashMap<>();
            head.put("repo_id", headRepoId);
            head.put("branch", headBranch);
            head.put("commit", headCommit);
            m.put("head", head);
            Map<String, Object> base = new LinkedHashMap<>();
            base.put("branch", baseBranch);
            base.put("commit", baseCommit);
            m.put("base", base);
            m.put("mergeable_state", mergeable == null ? "unknown" : mergeable);
            m.put("merge_commit", mergeCommit);
            m.put("merged_by", mergedBy);
            m.put("created_at", createdAt.toString());
            m.put("updated_at", updatedAt.toString());
            m.put("closed_at", closedAt == null ? null : closedAt.toString());
            m.put("merged_at", mergedAt == null ? null : mergedAt.toString());
            return m;
        }
    }

    record Comment(
            String id,
            String pullId,
            String reviewId,
            String authorId,
            String body,
            String path,
            Integer line,
            String commitId,
            Instant createdAt) {
        static Comment of(ResultSet rs) throws SQLException {
            int line = rs.getInt("line");
            return new Comment(
                    rs.getString("id"),
                    rs.getString("pull_id"),
                    rs.getString("review_id"),
                    rs.getString("author_id"),
                    rs.getString("body"),
                    rs.getString("path"),
                    rs.wasNull() ? null : line,
                    rs.getString("commit_id"),
                    Sql.instant(rs, "created_at"));
        }

        Map<String, Object> toJson(boolean outdated) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("review_id", reviewId);
            m.put("author_id", authorId);
            m.put("body", body);
            m.put("path", path);
            m.put("line", line);
            m.put("commit_id", commitId);
            m.put("outdated", outdated);
            m.put("created_at", createdAt.toString());
            return m;
        }
    }

    record Review(
            String id, String pullId, String authorId, String state, String body, String commitId, Instant createdAt) {
        static Review of(ResultSet rs) throws SQLException {
            return new Review(
                    rs.getString("id"),
                    rs.getString("pull_id"),
                    rs.getString("author_id"),
                    rs.getString("state"),
                    rs.getString("body"),
                    rs.getString("commit_id"),
                    Sql.instant(rs, "created_at"));
        }
    }

    /** A new pull request, numbered after the repository's last (the count is taken under a lock on the repository). */
    Pull create(
            String repoId,
            String title,
            String body,
            String headRepoId,
            String headBranch,
            String baseBranch,
            boolean draft,
            String authorId,
            String headCommit,
            String baseCommit) {
        return sql.tx(c -> {
            Sql.exec(c, "SELECT pg_advisory_xact_lock(hashtext('pull-number'), hashtext(?))", repoId);
            int number =
                    (int) Sql.count(c, "SELECT coalesce(max(number), 0) FROM pull_requests WHERE repo_id = ?", repoId)
                            + 1;
            return Sql.one(
                            c,
                            "INSERT INTO pull_requests (id, repo_id, number, title, body, head_repo_id, head_branch,"
                                    + " base_branch, draft, author_id, head_commit, base_commit)"
                                    + " VALUES (?,?,?,?,?,?,?,?,?,?,?,?) RETURNING " + PULL,
                            Pull::of,
                            Ids.id("pr"),
                            repoId,
                            number,
                            title,
                            body,
                            headRepoId,
                            headBranch,
                            baseBranch,
                            draft,
                            authorId,
                            headCommit,
                            baseCommit)
                    .orElseThrow();
        });
    }

    Pull get(String repoId, int number) {
        return sql.one(
                        "SELECT " + PULL + " FROM pull_requests WHERE repo_id = ? AND number = ?",
                        Pull::of,
                        repoId,
                        number)
                .orElseThrow(() -> ApiException.notFound(NOT_FOUND));
    }

    Optional<Pull> byId(String id) {
        return sql.one("SELECT " + PULL + " FROM pull_requests WHERE id = ?", Pull::of, id);
    }

    /** The filter of a list: each null is no filter. */
    record Filter(String state, String base, String head, String authorId) {}

    List<Pull> list(String repoId, Filter f, int limit, int offset) {
        List<Object> args = new ArrayList<>();
        String where = where(repoId, f, args);
        args.add(limit);
        args.add(offset);
        return sql.list(
                "SELECT " + PULL + " FROM pull_requests " + where + " ORDER BY number DESC LIMIT ? OFFSET ?",
                Pull::of,
                args.toArray());
    }

    long count(String repoId, Filter f) {
        List<Object> args = new ArrayList<>();
        return sql.count("SELECT count(*) FROM pull_requests " + where(repoId, f, args), args.toArray());
    }

    private static String where(String repoId, Filter f, List<Object> args) {
        StringBuilder w = new StringBuilder("WHERE repo_id = ?");
        args.add(repoId);
        if (f.state() != null) {
            w.append(" AND state = ?");
            args.add(f.state());
        }
        if (f.base() != null) {
            w.append(" AND base_branch = ?");
            args.add(f.base());
        }
        if (f.head() != null) {
            w.append(" AND head_branch = ?");
            args.add(f.head());
        }
        if (f.authorId() != null) {
            w.append(" AND author_id = ?");
            args.add(f.authorId());
        }
        return w.toString();
    }

    /** Changes the fields given (null: unchanged). */
    Pull update(Pull p, String title, String body, String baseBranch, Boolean draft, String state) {
        return sql.one(
                        "UPDATE pull_requests SET title = coalesce(?, title), body = coalesce(?, body),"
                                + " base_branch = coalesce(?, base_branch), draft = coalesce(?, draft),"
                                + " state = coalesce(?, state),"
                                + " closed_at = CASE WHEN ?::text = 'closed' THEN now() WHEN ?::text = 'open' THEN NULL"
                                + " ELSE closed_at END,"
                                + " mergeable = CASE WHEN ?::text IS NOT NULL THEN NULL ELSE mergeable END,"
                                + " updated_at = now() WHERE id = ? AND state <> 'merged' RETURNING " + PULL,
                        Pull::of,
                        title,
                        body,
                        baseBranch,
                        draft,
                        state,
                        state,
                        state,
                        baseBranch,
                        p.id())
                .orElseThrow(() -> ApiException.conflict("the pull request is merged: it can no longer change"));
    }

    /** The commits of head and base as they are now; the merge check is stale then. */
    Pull moved(Pull p, String headCommit, String baseCommit) {
        return sql.one(
                        "UPDATE pull_requests SET head_commit = ?, base_commit = ?, mergeable = CASE WHEN head_commit = ?"
                                + " AND base_commit = ? THEN mergeable ELSE NULL END, updated_at = CASE WHEN"
                                + " head_commit = ? THEN updated_at ELSE now() END WHERE id = ? RETURNING " + PULL,
                        Pull::of,
                        headCommit,
                        baseCommit,
                        headCommit,
                        baseCommit,
                        headCommit,
                        p.id())
                .orElse(p);
    }

    /** Records a merge check's result for the commits it was made on (ignored when they moved meanwhile). */
    void mergeable(String pullId, String headCommit, String baseCommit, boolean clean) {
        sql.update(
                "UPDATE pull_requests SET mergeable = ? WHERE id = ? AND head_commit = ? AND base_commit = ?",
                clean ? "clean" : "conflicts",
                pullId,
                headCommit,
                baseCommit);
    }

    /** Records the merge of an open pull request: the commits it was made from, and the one it made. */
    Pull merged(Pull p, String mergeCommit, String mergedBy, String baseBefore, String headMerged) {
        return sql.one(
                        "UPDATE pull_requests SET state = 'merged', merge_commit = ?, merged_by = ?, merged_at = now(),"
                                + " closed_at = now(), updated_at = now(), base_commit = ?, head_commit = ?"
                                + " WHERE id = ? AND state = 'open' RETURNING " + PULL,
                        Pull::of,
                        mergeCommit,
                        mergedBy,
                        baseBefore,
                        headMerged,
                        p.id())
                .orElseThrow(() -> ApiException.conflict("the pull request was merged or closed meanwhile"));
    }

    /** Open pull requests whose head is {@code branch} of {@code repoId}, or whose base is. */
    List<Pull> openTouching(String repoId, String branch) {
        return sql.list(
                "SELECT " + PULL
                        + " FROM pull_requests WHERE state = 'open' AND ((head_repo_id = ? AND head_branch = ?)"
                        + " OR (repo_id = ? AND base_branch = ?))",
                Pull::of,
                repoId,
                branch,
                repoId,
                branch);
    }

    // ------------------------------------------------------------------------------------------ merge checks

    /** A cached check of (base, head): clean, or the conflicting paths with their kinds. */
    record Check(boolean clean, List<Map<String, String>> conflicts) {}

    Optional<Check> check(String repoId, String baseCommit, String headCommit) {
        return sql.one(
                "SELECT clean, conflicts::text FROM pull_merge_checks WHERE repo_id = ? AND base_commit = ? AND"
                        + " head_commit = ?",
                rs -> new Check(rs.getBoolean(1), conflicts(rs.getString(2))),
                repoId,
                baseCommit,
                headCommit);
    }

    void check(String repoId, String baseCommit, String headCommit, Check check) {
        String conflicts;
        try {
            conflicts = JSON.writeValueAsString(check.conflicts());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        sql.update(
                "INSERT INTO pull_merge_checks (repo_id, base_commit, head_commit, clean, conflicts)"
                        + " VALUES (?, ?, ?, ?, ?::jsonb) ON CONFLICT DO NOTHING",
                repoId,
                baseCommit,
                headCommit,
                check.clean(),
                conflicts);
    }

    private static List<Map<String, String>> conflicts(String json) throws SQLException {
        try {
            return JSON.readValue(
                    json, new com.fasterxml.jackson.core.type.TypeReference<List<Map<String, String>>>() {});
        } catch (java.io.IOException e) {
            throw new SQLException("a stored merge check is not JSON", e);
        }
    }

    // ------------------------------------------------------------------------------------ comments and reviews

    Comment comment(
            String pullId, String reviewId, String authorId, String body, String path, Integer line, String commit) {
        return sql.one(
                        "INSERT INTO pull_comments (id, pull_id, review_id, author_id, body, path, line, commit_id)"
                                + " VALUES (?,?,?,?,?,?,?,?) RETURNING " + COMMENT,
                        Comment::of,
                        Ids.id("prc"),
                        pullId,
                        reviewId,
                        authorId,
                        body,
                        path,
                        line,
                        commit)
                .orElseThrow();
    }

    List<Comment> comments(String pullId) {
        return sql.list(
                "SELECT " + COMMENT + " FROM pull_comments WHERE pull_id = ? ORDER BY created_at, id",
                Comment::of,
                pullId);
    }

    /** A review with its inline comments, in one transaction. */
    Review review(String pullId, String authorId, String state, String body, String commit, List<Comment> inline) {
        return sql.tx(c -> {
            Review r = Sql.one(
                            c,
                            "INSERT INTO pull_reviews (id, pull_id, author_id, state, body, commit_id)"
                                    + " VALUES (?,?,?,?,?,?) RETURNING " + REVIEW,
                            Review::of,
                            Ids.id("prr"),
                            pullId,
                            authorId,
                            state,
                            body,
                            commit)
                    .orElseThrow();
            for (Comment i : inline) {
                Sql.update(
                        c,
                        "INSERT INTO pull_comments (id, pull_id, review_id, author_id, body, path, line, commit_id)"
                                + " VALUES (?,?,?,?,?,?,?,?)",
                        Ids.id("prc"),
                        pullId,
                        r.id(),
                        authorId,
                        i.body(),
                        i.path(),
                        i.line(),
                        commit);
            }
            return r;
        });
    }

    List<Review> reviews(String pullId) {
        return sql.list(
                "SELECT " + REVIEW + " FROM pull_reviews WHERE pull_id = ? ORDER BY created_at, id",
                Review::of,
                pullId);
    }

    /** The repositories that have pull requests (for the sweep that forgets the ones deleted while this bundle was away). */
    List<String> repositories() {
        return sql.list("SELECT DISTINCT repo_id FROM pull_requests", rs -> rs.getString(1));
    }

    int forgetRepository(String repoId) {
        sql.update("DELETE FROM pull_merge_checks WHERE repo_id = ?", repoId);
        return sql.update("DELETE FROM pull_requests WHERE repo_id = ?", repoId);
    }
}
