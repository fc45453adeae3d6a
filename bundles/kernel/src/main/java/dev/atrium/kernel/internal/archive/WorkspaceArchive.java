package dev.atrium.kernel.internal.archive;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import dev.atrium.kernel.api.JsonBody;
import dev.atrium.kernel.api.JsonMappers;
import dev.atrium.kernel.api.SpaceRef;
import dev.atrium.kernel.api.WorkspaceArchivePart;
import dev.atrium.kernel.api.WorkspaceImportListener;
import dev.atrium.kernel.internal.domain.WorkspaceRecord;
import dev.atrium.kernel.internal.domain.Workspaces;
import dev.atrium.kernel.internal.jobs.JobBoard;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workspace archive: a zip with one folder per {@link WorkspaceArchivePart} and a {@code manifest.json} written last
 * (its counts are known only once every part has streamed). Export streams; import reads an archive spooled to a file,
 * makes a new workspace for the caller and undoes everything when any part fails.
 */
@Component(service = WorkspaceArchive.class)
public class WorkspaceArchive {

    public static final String FORMAT = "atrium-workspace-archive";
    public static final int VERSION = 1;
    public static final String MANIFEST = "manifest.json";
    /** The largest archive an import takes; a workspace larger than this moves by parts (repositories by git). */
    public static final long MAX_ARCHIVE = 2L * 1024 * 1024 * 1024;

    /** The longest JSON line a part may read: one memory or message is far smaller, a hostile line stops here. */
    static final int MAX_LINE = 16 * 1024 * 1024;

    private static final Pattern PART_NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");
    private static final Set<String> POSTURES = Set.of("standard", "restricted_egress");
    private static final Logger LOG = LoggerFactory.getLogger(WorkspaceArchive.class);

    private final Workspaces workspaces;
    private final JobBoard jobs;
    private final String bundle;
    private final ObjectMapper json = JsonMappers.create();
    private final List<WorkspaceArchivePart> parts = new CopyOnWriteArrayList<>();

    @Activate
    public WorkspaceArchive(@Reference Workspaces workspaces, @Reference JobBoard jobs, BundleContext context) {
        this.workspaces = workspaces;
        this.jobs = jobs;
        this.bundle = context.getBundle().getSymbolicName();
    }

    @Reference(
            service = WorkspaceArchivePart.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            unbind = "removePart")
    void addPart(WorkspaceArchivePart part) {
        parts.add(part);
    }

    void removePart(WorkspaceArchivePart part) {
        parts.remove(part);
    }

    private final List<WorkspaceImportListener> listeners = new CopyOnWriteArrayList<>();

    @Reference(
            service = WorkspaceImportListener.class,
            cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC,
            unbind = "removeListener")
    void addListener(WorkspaceImportListener listener) {
        listeners.add(listener);
    }

    void removeListener(WorkspaceImportListener listener) {
        listeners.remove(listener);
    }

    /** The parts present now, by name; a name given twice keeps the first (and says so). */
    private Map<String, WorkspaceArchivePart> present() {
        Map<String, WorkspaceArchivePart> byName = new LinkedHashMap<>();
        List<WorkspaceArchivePart> sorted = new ArrayList<>(parts);
        sorted.sort(Comparator.comparing(WorkspaceArchivePart::name));
        for (WorkspaceArchivePart p : sorted) {
            String name = p.name();
            if (!PART_NAME.matcher(name).matches()) {
                LOG.warn("workspace archive part {} has an invalid name and is left out", name);
            } else if (byName.putIfAbsent(name, p) != null) {
                LOG.warn("two workspace archive parts are named {}; the second is left out", name);
            }
        }
        return byName;
    }

    /** Writes the archive of {@code w} (proven as {@code space}) to {@code out}, part by part. */
    public void export(WorkspaceRecord w, SpaceRef space, OutputStream out) throws IOException {
        ZipOutputStream zip = new ZipOutputStream(out);
        List<Map<String, Object>> written = new ArrayList<>();
        for (Map.Entry<String, WorkspaceArchivePart> p : present().entrySet()) {
            ZipArchiveWriter writer = new ZipArchiveWriter(zip, p.getKey(), json);
            long count = p.getValue().export(space, writer);
            writer.finish();
            Map<String, Object> part = new LinkedHashMap<>();
            part.put("name", p.getKey());
            part.put("count", count);
            written.add(part);
        }
        Map<String, Object> manifest = new LinkedHashMap<>();
        manifest.put("format", FORMAT);
        manifest.put("version", VERSION);
        manifest.put("exported_at", Instant.now().toString());
        Map<String, Object> source = new LinkedHashMap<>();
        source.put("name", w.name());
        source.put("slug", w.slug());
        source.put("description", w.description());
        source.put("security_posture", w.securityPosture());
        source.put("ai_model", w.aiModel());
        source.put("ai_provider", w.aiProvider());
        manifest.put("space", source);
        manifest.put("parts", written);
        zip.putNextEntry(new ZipEntry(MANIFEST));
        zip.write(json.writerWithDefaultPrettyPrinter().writeValueAsBytes(manifest));
        zip.closeEntry();
        zip.finish();
        zip.flush();
    }

    /** What an import made. */
    public record Imported(WorkspaceRecord space, List<Map<String, Object>> parts, List<String> skipped) {}

    /**
     * Makes a new workspace for {@code caller} from the archive spooled at {@code file}, named {@code name} or as the
     * archived workspace was. A bad archive is 400 and leaves nothing behind.
     */
    public Imported restore(Caller caller, Path file, String name) throws IOException {
        ZipFile zip;
        try {
            zip = new ZipFile(file.toFile());
        } catch (ZipException e) {
            throw ApiException.badRequest("the body is not a zip archive: " + e.getMessage());
        }
        try (zip) {
            JsonNode manifest = manifest(zip);
            JsonNode sourceNode = manifest.get("space");
            if (sourceNode == null || !sourceNode.isObject()) {
                throw ApiException.badRequest("manifest.json's space must be an object");
            }
            JsonBody source = JsonBody.of(sourceNode);
            List<String> named = partNames(manifest);
            Map<String, Long> archived = archivedCounts(manifest);
            Map<String, Map<String, ZipEntry>> byPart = entriesByPart(zip, named);
            String spaceName = name != null ? name : source.text("name", 1, 100);
            String description = source.optionalText("description", 0, 2000).orElse("");
            String posture = source.oneOf("security_posture", POSTURES).orElse("standard");
            String aiModel = source.optionalText("ai_model", 1, 200).orElse(null);
            String aiProvider = source.optionalText("ai_provider", 1, 200).orElse(null);

            Map<String, WorkspaceArchivePart> present = present();
            try (JobBoard.Entry job = jobs.start("workspace-import", "Import of workspace " + spaceName, bundle)) {
                try {
                    job.progress(0, named.size(), "creating the workspace");
                    Imported done = restore(
                            caller,
                            zip,
                            job,
                            spaceName,
                            description,
                            posture,
                            aiModel,
                            aiProvider,
                            named,
                            archived,
                            byPart,
                            present);
                    job.succeeded(done.parts().size() + " of " + named.size() + " parts imported into "
                            + done.space().id()
                            + (done.skipped().isEmpty() ? "" : "; not on this server, skipped: " + done.skipped()));
                    return done;
                } catch (IOException | RuntimeException e) {
                    // the job's reason is what the caller hears (the 400 of a bad archive, say)
                    job.failed(e.getMessage() == null ? e.toString() : e.getMessage());
                    throw e;
                }
            }
        }
    }

    private Imported restore(
            Caller caller,
            ZipFile zip,
            JobBoard.Entry job,
            String spaceName,
            String description,
            String posture,
            String aiModel,
            String aiProvider,
            List<String> named,
            Map<String, Long> archived,
            Map<String, Map<String, ZipEntry>> byPart,
            Map<String, WorkspaceArchivePart> present)
            throws IOException {
        WorkspaceRecord made = workspaces.create(caller.principalId(), spaceName, null, description, posture);
        List<WorkspaceArchivePart> touched = new ArrayList<>();
        try {
            if (aiModel != null || aiProvider != null) {
                made = workspaces.update(
                        caller, made.id(), new Workspaces.Change(null, null, null, null, aiModel, aiProvider));
            }
            SpaceRef space = workspaces.require(caller, made.id());
            List<Map<String, Object>> imported = new ArrayList<>();
            List<String> skipped = new ArrayList<>();
            Map<String, Map<String, String>> keys = new HashMap<>();
            for (String partName : restoreOrder(named, present)) {
                job.progress(imported.size() + skipped.size(), named.size(), partName);
                WorkspaceArchivePart part = present.get(partName);
                if (part == null) {
                    skipped.add(partName);
                    continue;
                }
                touched.add(part);
                long count = part.restore(space, new ZipArchiveReader(zip, partName, byPart.get(partName), json, keys));
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("name", partName);
                m.put("count", count);
                m.put("archived", archived.get(partName));
                imported.add(m);
            }
            for (WorkspaceImportListener l : listeners) {
                try {
                    l.imported(space);
                } catch (RuntimeException e) {
                    LOG.warn("a listener of imports failed on {}", made.id(), e);
                }
            }
            return new Imported(made, imported, skipped);
        } catch (IOException | RuntimeException e) {
            undo(caller, made, touched);
            if (e instanceof ApiException) {
                throw e;
            }
            if (e instanceof IOException) {
                // the spooled file is ours: an error reading it is the archive's (a corrupt entry, a bad length)
                throw ApiException.badRequest("the archive could not be read: " + e.getMessage());
            }
            throw e;
        }
    }

    /**
     * The archive's parts in the order to restore them: each after the parts it names in {@link
     * WorkspaceArchivePart#after()}, otherwise in the archive's order. A cycle is the parts' mistake: it is broken
     * where it closes, and logged.
     */
    static List<String> restoreOrder(List<String> named, Map<String, WorkspaceArchivePart> present) {
        List<String> order = new ArrayList<>();
        Set<String> visiting = new HashSet<>();
        for (String name : named) {
            place(name, named, present, visiting, order);
        }
        return order;
    }

    private static void place(
            String name,
            List<String> named,
            Map<String, WorkspaceArchivePart> present,
            Set<String> visiting,
            List<String> order) {
        if (order.contains(name)) {
            return;
        }
        if (!visiting.add(name)) {
            LOG.warn("workspace archive parts name each other in after(); {} is restored where the cycle closes", name);
            return;
        }
        WorkspaceArchivePart part = present.get(name);
        if (part != null) {
            for (String before : new TreeSet<>(part.after())) {
                if (named.contains(before)) {
                    place(before, named, present, visiting, order);
                }
            }
        }
        visiting.remove(name);
        if (!order.contains(name)) {
            order.add(name);
        }
    }

    private void undo(Caller caller, WorkspaceRecord made, List<WorkspaceArchivePart> touched) {
        SpaceRef space = workspaces.require(caller, made.id());
        for (WorkspaceArchivePart part : touched) {
            try {
                part.discard(space);
            } catch (RuntimeException e) {
                LOG.warn(
                        "workspace archive part {} could not discard the failed import into {}",
                        part.name(),
                        made.id(),
                        e);
            }
        }
        workspaces.delete(caller, made.id());
    }

    private JsonNode manifestNode(ZipFile zip) throws IOException {
        ZipEntry e = zip.getEntry(MANIFEST);
        if (e == null) {
            throw ApiException.badRequest("the archive has no manifest.json");
        }
        if (e.getSize() > MAX_LINE) {
            throw ApiException.badRequest("manifest.json is too large");
        }
        try (InputStream in = zip.getInputStream(e)) {
            byte[] bytes = in.readNBytes(MAX_LINE + 1);
            if (bytes.length > MAX_LINE) {
                throw ApiException.badRequest("manifest.json is too large");
            }
            JsonNode node = json.readTree(bytes);
            if (node == null || !node.isObject()) {
                throw ApiException.badRequest("manifest.json must be a JSON object");
            }
            return node;
        } catch (com.fasterxml.jackson.core.JsonProcessingException x) {
            throw ApiException.badRequest("manifest.json is not JSON: " + x.getOriginalMessage());
        } catch (ZipException x) {
            throw ApiException.badRequest("manifest.json could not be read: " + x.getMessage());
        }
    }

    private JsonNode manifest(ZipFile zip) throws IOException {
        JsonNode node = manifestNode(zip);
        JsonBody m = JsonBody.of(node);
        if (!FORMAT.equals(m.string("format").orElse(null))) {
            throw ApiException.badRequest("manifest.json's format must be " + FORMAT);
        }
        JsonNode version = node.get("version");
        if (version == null || !version.isIntegralNumber() || version.intValue() != VERSION) {
            throw ApiException.badRequest("this server reads archive version " + VERSION + ", not " + version);
        }
        return node;
    }

    private static List<String> partNames(JsonNode manifest) {
        JsonNode parts = manifest.get("parts");
        if (parts == null || !parts.isArray()) {
            throw ApiException.badRequest("manifest.json's parts must be a list");
        }
        List<String> names = new ArrayList<>();
        for (JsonNode p : parts) {
            String name = JsonBody.of(p).requiredString("name");
            if (!PART_NAME.matcher(name).matches()) {
                throw ApiException.badRequest("manifest.json names an invalid part: " + name);
            }
            if (names.contains(name)) {
                throw ApiException.badRequest("manifest.json names the part " + name + " twice");
            }
            names.add(name);
        }
        return names;
    }

    /** What the manifest says each part held when it was exported (null where it says nothing). */
    private static Map<String, Long> archivedCounts(JsonNode manifest) {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (JsonNode p : manifest.get("parts")) {
            JsonNode count = p.get("count");
            if (count != null && count.isIntegralNumber()) {
                counts.put(p.get("name").asText(), count.longValue());
            }
        }
        return counts;
    }

    /** Every entry but the manifest belongs to a part the manifest names, by its path inside that part's folder. */
    private static Map<String, Map<String, ZipEntry>> entriesByPart(ZipFile zip, List<String> named) {
        Map<String, Map<String, ZipEntry>> byPart = new LinkedHashMap<>();
        for (String n : named) {
            byPart.put(n, new LinkedHashMap<>());
        }
        Enumeration<? extends ZipEntry> all = zip.entries();
        while (all.hasMoreElements()) {
            ZipEntry e = all.nextElement();
            String path = e.getName();
            if (path.equals(MANIFEST) || e.isDirectory()) {
                continue;
            }
            int slash = path.indexOf('/');
            Map<String, ZipEntry> part = slash <= 0 ? null : byPart.get(path.substring(0, slash));
            if (part == null) {
                throw ApiException.badRequest("the archive's entry " + path + " belongs to no part of its manifest");
            }
            part.put(path.substring(slash + 1), e);
        }
        return byPart;
    }

    /** The path of a part's entry in the archive; a name that would leave the folder is a part's bug. */
    static String entryPath(String folder, String name) {
        if (name == null
                || name.isEmpty()
                || name.startsWith("/")
                || name.contains("\\")
                || List.of(name.split("/", -1)).stream()
                        .anyMatch(s -> s.isEmpty() || s.equals(".") || s.equals(".."))) {
            throw new IllegalArgumentException("invalid archive entry name: " + name);
        }
        return folder + "/" + name;
    }

    /** The next line of {@code in}, at most {@link #MAX_LINE} characters (400 beyond); null at the end. */
    static String boundedLine(BufferedReader in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c = in.read();
        if (c < 0) {
            return null;
        }
        while (c >= 0 && c != '\n') {
            if (line.length() >= MAX_LINE) {
                throw ApiException.badRequest("an archive line is longer than " + MAX_LINE + " characters");
            }
            line.append((char) c);
            c = in.read();
        }
        int end = line.length();
        if (end > 0 && line.charAt(end - 1) == '\r') {
            line.setLength(end - 1);
        }
        return line.toString();
    }

    /** Spools a request body to a temporary file the caller deletes. */
    public static Path spool(InputStream body) throws IOException {
        Path file = Files.createTempFile("atrium-import-", ".zip");
        try {
            Files.copy(body, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(file);
            throw e;
        }
    }
}
