package dev.atrium.repos.internal;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.PageRequest;
import dev.atrium.repos.internal.GitReads.LogQuery;
import dev.atrium.repos.internal.RepoAccess.Located;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Map;
import javax.ws.rs.core.SecurityContext;

/** The history query behind {@link RepoCommitsResource} and {@link RepoLogResource}. */
final class RepoHistory {

    private RepoHistory() {}

    static Map<String, Object> log(
            RepoAccess access,
            Repositories repositories,
            SecurityContext sc,
            String repoId,
            String ref,
            String path,
            String author,
            String since,
            String until,
            String limit,
            String offset) {
        Located l = access.readable(ExploreViews.callerOrNull(sc), repoId);
        PageRequest page = PageRequest.of(limit, offset);
        LogQuery q = new LogQuery(
                ref, path, author, instant("since", since), instant("until", until), page.limit(), page.offset());
        try (org.eclipse.jgit.lib.Repository git = repositories.open(l.repo())) {
            return GitReads.log(git, l.repo().defaultBranch(), q);
        }
    }

    static Instant instant(String name, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return Instant.parse(value.trim());
        } catch (DateTimeParseException e) {
            try {
                return java.time.LocalDate.parse(value.trim())
                        .atStartOfDay(java.time.ZoneOffset.UTC)
                        .toInstant();
            } catch (DateTimeParseException e2) {
                throw ApiException.badRequest(
                        name + " must be an ISO-8601 date or instant, e.g. 2026-01-31 or 2026-01-31T12:00:00Z");
            }
        }
    }
}
