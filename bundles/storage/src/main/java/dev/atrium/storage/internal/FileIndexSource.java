package dev.atrium.storage.internal;

import dev.atrium.kernel.api.Sql;
import dev.atrium.search.api.IndexSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Files of workspaces for search, followed by {@code (updated_at, id)}: the path is the title; a text file of at most
 * {@link #MAX_TEXT_BYTES} (a {@code text/*}, JSON, XML or script type, or a known source extension, valid UTF-8) gives
 * its content as the text, any other file its path only. {@link #current} answers paths, not contents (an answer
 * shows a file by its path).
 */
@Component(service = IndexSource.class)
public class FileIndexSource implements IndexSource {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FileIndexSource.class);

    static final long MAX_TEXT_BYTES = 256 * 1024;
    private static final Set<String> TEXT_EXTENSIONS = Set.of(
            "md",
            "txt",
            "java",
            "py",
            "js",
            "ts",
            "go",
            "rs",
            "c",
            "h",
            "cpp",
            "kt",
            "rb",
            "sh",
            "yml",
            "yaml",
            "toml",
            "json",
            "xml",
            "html",
            "css",
            "sql",
            "csv",
            "tsx",
            "jsx",
            "ini",
            "cfg",
            "properties",
            "gradle",
            "adoc");

    private final Sql sql;
    private final Storage storage;

    @Activate
    public FileIndexSource(@Reference DataSource dataSource, @Reference Storage storage) {
        this.sql = new Sql(dataSource);
        this.storage = storage;
    }

    @Override
    public String kind() {
        return "file";
    }

    @Override
    public List<Item> changes(Instant since, String afterId, int limit) {
        List<Entry> files = sql.list(
                "SELECT " + Entry.COLUMNS + " FROM storage_files WHERE kind = 'file' AND status = 'ready'"
                        + " AND (updated_at, id) > (?, ?) ORDER BY updated_at, id LIMIT ?",
                Entry::of,
                Timestamp.from(since),
                afterId,
                limit);
        return files.stream()
                .map(f -> new Item(f.id(), f.spaceId(), null, f.path(), text(f), f.updatedAt()))
                .toList();
    }

    @Override
    public Map<String, Item> current(String spaceId, Collection<String> ids) {
        Map<String, Item> out = new LinkedHashMap<>();
        for (Entry f : sql.list(
                "SELECT " + Entry.COLUMNS + " FROM storage_files WHERE space_id = ? AND kind = 'file'"
                        + " AND status = 'ready' AND id = ANY (?)",
                Entry::of,
                spaceId,
                ids.toArray(String[]::new))) {
            out.put(f.id(), new Item(f.id(), f.spaceId(), null, f.path(), f.path(), f.updatedAt()));
        }
        return out;
    }

    private String text(Entry f) {
        if (f.size() > MAX_TEXT_BYTES || f.blobKey() == null || !textual(f)) {
            return f.path();
        }
        try (InputStream in = storage.open(f, 0, f.size())) {
            byte[] bytes = in.readAllBytes();
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return f.path();
        } catch (IOException e) {
            // indexed by its path; its text comes with its next change. Failing here instead would hold up every
            // file after it behind one unreadable blob.
            LOG.warn("search: the bytes of {} cannot be read, it is indexed by its path: {}", f.path(), e.getMessage());
            return f.path();
        }
    }

    static boolean textual(Entry f) {
        String type = f.contentType() == null ? "" : f.contentType().toLowerCase(Locale.ROOT);
        if (type.startsWith("text/") || type.contains("json") || type.contains("xml") || type.contains("javascript")) {
            return true;
        }
        String name = f.name().toLowerCase(Locale.ROOT);
        int dot = name.lastIndexOf('.');
        return dot > 0 && TEXT_EXTENSIONS.contains(name.substring(dot + 1));
    }
}
