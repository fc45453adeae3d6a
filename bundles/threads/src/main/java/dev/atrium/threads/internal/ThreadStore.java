package dev.atrium.threads.internal;

import dev.atrium.kernel.api.Digests;
import dev.atrium.kernel.api.Ids;
import dev.atrium.kernel.api.SchemaMigrations;
import dev.atrium.kernel.api.Sql;
import dev.atrium.threads.api.Threads.Message;
import java.io.IOException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.sql.DataSource;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** The threads, thread_messages and thread_shares tables, which this bundle owns. */
@Component(service = ThreadStore.class)
public class ThreadStore {

    static final String COLUMNS = "id, space_id, title, locale, status, context_window, created_at, updated_at";
    static final String MESSAGE_COLUMNS = "seq, id, thread_id, role, content, run_id, created_at";
    static final String SHARE_COLUMNS =
            "id, thread_id, token_prefix, mode, password_hash, expires_at, revoked_at, created_at";

    private final Sql db;

    @Activate
    public ThreadStore(
            @Reference DataSource dataSource, @Reference SchemaMigrations migrations, BundleContext context) {
        this.db = new Sql(dataSource);
        migrations.apply(context.getBundle());
    }

    @SuppressWarnings(
            "JavaLangClash") // a conversation thread, the capability's own word; java.lang.Thread is not used here
    public record Thread(
            String id,
            String spaceId,
            String title,
            String locale,
            String status,
            Integer contextWindow,
            Instant createdAt,
            Instant updatedAt) {
        static Thread of(ResultSet rs) throws SQLException {
            Object cw = rs.getObject("context_window");
            return new Thread(
                    rs.getString("id"),
                    rs.getString("space_id"),
                    rs.getString("title"),
                    rs.getString("locale"),
                    rs.getString("status"),
                    cw == null ? null : ((Number) cw).intValue(),
                    rs.getTimestamp("created_at").toInstant(),
                    rs.getTimestamp("updated_at").toInstant());
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("space_id", spaceId);
            m.put("title", title);
            m.put("locale", locale);
            m.put("status", status);
            m.put("context_window", contextWindow);
            m.put("created_at", createdAt.toString());
            m.put("updated_at", updatedAt.toString());
            return m;
        }
    }

    public record StoredMessage(long seq, Message message) {
        static StoredMessage of(ResultSet rs) throws SQLException {
            return new StoredMessage(
                    rs.getLong("seq"),
                    new Message(
                            rs.getString("id"),
                            rs.getString("thread_id"),
                            rs.getString("role"),
                            rs.getString("content"),
                            rs.getString("run_id"),
                            rs.getTimestamp("created_at").toInstant().toString()));
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", message.id());
            m.put("thread_id", message.threadId());
            m.put("role", message.role());
            m.put("content", message.content());
            m.put("run_id", message.runId());
            m.put("created_at", message.createdAt());
            return m;
        }
    }

    public record Share(
            String id,
            String threadId,
            String tokenPrefix,
            String mode,
            String passwordHash,
            Instant expiresAt,
            Instant revokedAt,
            Instant createdAt) {
        static Share of(ResultSet rs) throws SQLException {
            return new Share(
                    rs.getString("id"),
                    rs.getString("thread_id"),
                    rs.getString("token_prefix"),
                    rs.getString("mode"),
                    rs.getString("password_hash"),
                    instant(rs.getTimestamp("expires_at")),
                    instant(rs.getTimestamp("revoked_at")),
                    rs.getTimestamp("created_at").toInstant());
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("thread_id", threadId);
            m.put("token_prefix", tokenPrefix);
            m.put("mode", mode);
            m.put("password_protected", passwordHash != null);
            m.put("expires_at", expiresAt == null ? null : expiresAt.toString());
            m.put("revoked_at", revokedAt == null ? null : revokedAt.toString());
            m.put("created_at", createdAt.toString());
            return m;
        }
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    public Thread create(String spaceId, String title, String locale, Integer contextWindow) {
        return db.one(
                        "INSERT INTO threads (id, space_id, title, locale, context_window) VALUES (?, ?, ?, ?, ?) RETURNING "
                                + COLUMNS,
                        Thread::of,
                        Ids.id("th"),
                        spaceId,
                        title,
                        locale,
                        contextWindow)
                .orElseThrow();
    }

    public Optional<Thread> get(String id) {
        return db.one("SELECT " + COLUMNS + " FROM threads WHERE id = ?", Thread::of, id);
    }

    public List<Thread> list(String spaceId, String status, int limit, int offset) {
        return db.list(
                "SELECT " + COLUMNS + " FROM threads WHERE space_id = ? AND (?::text IS NULL OR status = ?) "
                        + "ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
                Thread::of,
                spaceId,
                status,
                status,
                limit,
                offset);
    }

    public long count(String spaceId, String status) {
        return db.count(
                "SELECT count(*) FROM threads WHERE space_id = ? AND (?::text IS NULL OR status = ?)",
                spaceId,
                status,
                status);
    }

    /** Threads whose title or any message matches, best match first (PostgreSQL web-search syntax, English stemming). */
    public List<Thread> search(String spaceId, String q, int limit, int offset) {
        return db.list(
                "SELECT " + COLUMNS + " FROM (SELECT t.*, greatest(ts_rank(t.search, query), "
                        + "coalesce((SELECT max(ts_rank(m.search, query)) FROM thread_messages m WHERE m.thread_id = t.id AND m.search @@ query), 0)) rank "
                        + "FROM threads t, websearch_to_tsquery('english', ?) query WHERE t.space_id = ? AND (t.search @@ query OR EXISTS "
                        + "(SELECT 1 FROM thread_messages m WHERE m.thread_id = t.id AND m.search @@ query))) found "
                        + "ORDER BY rank DESC, updated_at DESC, id LIMIT ? OFFSET ?",
                Thread::of,
                q,
                spaceId,
                limit,
                offset);
    }

    public Optional<Thread> update(String id, String title, String locale, String status, Integer contextWindow) {
        return db.one(
                "UPDATE threads SET title = coalesce(?, title), locale = coalesce(?, locale), status = coalesce(?, status), "
                        + "context_window = coalesce(?, context_window), updated_at = now() WHERE id = ? RETURNING "
                        + COLUMNS,
                Thread::of,
                title,
                locale,
                status,
                contextWindow,
                id);
    }

    public boolean delete(String id) {
        return db.update("DELETE FROM threads WHERE id = ?", id) == 1;
    }

    public StoredMessage append(String threadId, String role, String content, String runId) {
        StoredMessage m = db.one(
                        "INSERT INTO thread_messages (id, thread_id, role, content, run_id) VALUES (?, ?, ?, ?, ?) RETURNING "
                                + MESSAGE_COLUMNS,
                        StoredMessage::of,
                        Ids.id("msg"),
                        threadId,
                        role,
                        content,
                        runId)
                .orElseThrow();
        db.update("UPDATE threads SET updated_at = now() WHERE id = ?", threadId);
        return m;
    }

    /** Messages after {@code afterSeq}, oldest first. */
    public List<StoredMessage> messages(String threadId, long afterSeq, int limit) {
        return db.list(
                "SELECT " + MESSAGE_COLUMNS
                        + " FROM thread_messages WHERE thread_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                StoredMessage::of,
                threadId,
                afterSeq,
                limit);
    }

    /** Messages after {@code (created_at, id)} in that order; a null instant starts at the beginning. */
    public List<StoredMessage> messagesAfter(String threadId, java.time.Instant after, String afterId, int limit) {
        java.sql.Timestamp t = after == null ? null : java.sql.Timestamp.from(after);
        return db.list(
                "SELECT " + MESSAGE_COLUMNS + " FROM thread_messages WHERE thread_id = ? "
                        + "AND (?::timestamptz IS NULL OR (created_at, id) > (?::timestamptz, ?)) ORDER BY created_at, id LIMIT ?",
                StoredMessage::of,
                threadId,
                t,
                t,
                afterId == null ? "" : afterId,
                limit);
    }

    /** Messages before {@code beforeSeq}, newest first; {@code system}: only system messages, else only the others. */
    public List<StoredMessage> newestMessages(String threadId, long beforeSeq, boolean system, int limit) {
        return db.list(
                "SELECT " + MESSAGE_COLUMNS
                        + " FROM thread_messages WHERE thread_id = ? AND seq < ? AND (role = 'system') = ? "
                        + "ORDER BY seq DESC LIMIT ?",
                StoredMessage::of,
                threadId,
                beforeSeq,
                system,
                limit);
    }

    public long messageCount(String threadId) {
        return db.count("SELECT count(*) FROM thread_messages WHERE thread_id = ?", threadId);
    }

    public List<StoredMessage> searchMessages(String threadId, String q, int limit, int offset) {
        return db.list(
                "SELECT " + MESSAGE_COLUMNS + " FROM thread_messages, websearch_to_tsquery('english', ?) query "
                        + "WHERE thread_id = ? AND search @@ query ORDER BY ts_rank(search, query) DESC, seq LIMIT ? OFFSET ?",
                StoredMessage::of,
                q,
                threadId,
                limit,
                offset);
    }

    public Share createShare(
            String threadId,
            String tokenHash,
            String tokenPrefix,
            String mode,
            String passwordHash,
            Instant expiresAt) {
        return db.one(
                        "INSERT INTO thread_shares (id, thread_id, token_hash, token_prefix, mode, password_hash, expires_at) "
                                + "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING " + SHARE_COLUMNS,
                        Share::of,
                        Ids.id("shr"),
                        threadId,
                        tokenHash,
                        tokenPrefix,
                        mode,
                        passwordHash,
                        expiresAt == null ? null : Timestamp.from(expiresAt))
                .orElseThrow();
    }

    public List<Share> shares(String threadId) {
        return db.list(
                "SELECT " + SHARE_COLUMNS + " FROM thread_shares WHERE thread_id = ? ORDER BY created_at, id",
                Share::of,
                threadId);
    }

    public Optional<Share> revoke(String threadId, String shareId) {
        return db.one(
                "UPDATE thread_shares SET revoked_at = coalesce(revoked_at, now()) WHERE thread_id = ? AND id = ? RETURNING "
                        + SHARE_COLUMNS,
                Share::of,
                threadId,
                shareId);
    }

    /** The stored form of a share token: its SHA-256 in standard base64 without padding (as since the first share). */
    static String shareTokenHash(String token) {
        return Base64.getEncoder().withoutPadding().encodeToString(Digests.sha256(token));
    }

    public Optional<Share> shareByTokenHash(String tokenHash) {
        return db.one("SELECT " + SHARE_COLUMNS + " FROM thread_shares WHERE token_hash = ?", Share::of, tokenHash);
    }

    private static final int ARCHIVE_PAGE = 500;

    /**
     * A workspace's threads (oldest first), then {@code between} with their count, then all their messages (in the
     * order they were written), read in one snapshot a page at a time; returns how many threads.
     */
    public long archive(
            String spaceId, Sql.RowSink<Thread> threads, Sql.RowSink<Long> between, Sql.RowSink<StoredMessage> messages)
            throws IOException {
        return db.snapshotStreaming(c -> {
            long n = 0;
            Timestamp after = null;
            String afterId = "";
            while (true) {
                List<Thread> page = Sql.list(
                        c,
                        "SELECT " + COLUMNS
                                + " FROM threads WHERE space_id = ? AND (?::timestamptz IS NULL OR (created_at, id) > (?::timestamptz, ?)) "
                                + "ORDER BY created_at, id LIMIT " + ARCHIVE_PAGE,
                        Thread::of,
                        spaceId,
                        after,
                        after,
                        afterId);
                for (Thread t : page) {
                    threads.accept(t);
                    n++;
                }
                if (page.size() < ARCHIVE_PAGE) {
                    break;
                }
                after = Timestamp.from(page.get(page.size() - 1).createdAt());
                afterId = page.get(page.size() - 1).id();
            }
            between.accept(n);
            long afterSeq = 0;
            while (true) {
                List<StoredMessage> page = Sql.list(
                        c,
                        "SELECT m.seq, m.id, m.thread_id, m.role, m.content, m.run_id, m.created_at "
                                + "FROM thread_messages m JOIN threads t ON t.id = m.thread_id "
                                + "WHERE t.space_id = ? AND m.seq > ? ORDER BY m.seq LIMIT " + ARCHIVE_PAGE,
                        StoredMessage::of,
                        spaceId,
                        afterSeq);
                for (StoredMessage m : page) {
                    messages.accept(m);
                }
                if (page.size() < ARCHIVE_PAGE) {
                    return n;
                }
                afterSeq = page.get(page.size() - 1).seq();
            }
        });
    }

    /** A thread brought back from a workspace archive: a new id, the rest as it was. */
    public Thread restore(
            String spaceId,
            String title,
            String locale,
            String status,
            Integer contextWindow,
            Instant createdAt,
            Instant updatedAt) {
        return db.one(
                        "INSERT INTO threads (id, space_id, title, locale, status, context_window, created_at, updated_at) "
                                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING " + COLUMNS,
                        Thread::of,
                        Ids.id("th"),
                        spaceId,
                        title,
                        locale,
                        status,
                        contextWindow,
                        Timestamp.from(createdAt),
                        Timestamp.from(updatedAt))
                .orElseThrow();
    }

    /** A message brought back from a workspace archive, appended without touching its thread's updated_at. */
    public void restoreMessage(String threadId, String role, String content, Instant createdAt) {
        db.update(
                "INSERT INTO thread_messages (id, thread_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
                Ids.id("msg"),
                threadId,
                role,
                content,
                Timestamp.from(createdAt));
    }

    /** Removes every thread of a workspace, with its messages and shares (an import that failed after this part). */
    public int deleteAll(String spaceId) {
        return db.update("DELETE FROM threads WHERE space_id = ?", spaceId);
    }
}
