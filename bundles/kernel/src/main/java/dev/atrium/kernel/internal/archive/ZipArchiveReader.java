package dev.atrium.kernel.internal.archive;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.WorkspaceArchivePart.ArchiveReader;
import dev.atrium.kernel.api.WorkspaceArchivePart.LineHandler;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/** One part's view of a spooled archive: the entries of its folder, by their path inside it. */
final class ZipArchiveReader implements ArchiveReader {

    private final ZipFile zip;
    private final String folder;
    private final Map<String, ZipEntry> entries;
    private final ObjectMapper json;
    /** Part → archive key → new id, shared by the readers of one import. */
    private final Map<String, Map<String, String>> keys;

    ZipArchiveReader(
            ZipFile zip,
            String folder,
            Map<String, ZipEntry> entries,
            ObjectMapper json,
            Map<String, Map<String, String>> keys) {
        this.zip = zip;
        this.folder = folder;
        this.entries = entries;
        this.json = json;
        this.keys = keys;
    }

    @Override
    public void remember(String key, String id) {
        keys.computeIfAbsent(folder, f -> new HashMap<>()).put(key, id);
    }

    @Override
    public Optional<String> idOf(String part, String key) {
        return Optional.ofNullable(keys.getOrDefault(part, Map.of()).get(key));
    }

    @Override
    public List<String> names() {
        return List.copyOf(entries.keySet());
    }

    @Override
    public InputStream open(String name) throws IOException {
        ZipEntry e = entries.get(name);
        if (e == null) {
            throw ApiException.badRequest("the archive has no entry " + folder + "/" + name);
        }
        return zip.getInputStream(e);
    }

    @Override
    public void lines(String name, LineHandler each) throws IOException {
        if (!entries.containsKey(name)) {
            return;
        }
        try (BufferedReader in = new BufferedReader(new InputStreamReader(open(name), StandardCharsets.UTF_8))) {
            int number = 0;
            for (String line = WorkspaceArchive.boundedLine(in);
                    line != null;
                    line = WorkspaceArchive.boundedLine(in)) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode node;
                try {
                    node = json.readTree(line);
                } catch (JsonProcessingException e) {
                    throw ApiException.badRequest("line " + number + " of " + folder + "/" + name + " is not JSON: "
                            + e.getOriginalMessage());
                }
                if (node == null || !node.isObject()) {
                    throw ApiException.badRequest(
                            "line " + number + " of " + folder + "/" + name + " is not a JSON object");
                }
                each.line(node);
            }
        }
    }
}
