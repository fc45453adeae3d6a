package dev.atrium.threads.internal;

import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.fontbox.ttf.CmapLookup;
import org.apache.fontbox.ttf.OS2WindowsMetricsTable;
import org.apache.fontbox.ttf.TTFParser;
import org.apache.fontbox.ttf.TrueTypeCollection;
import org.apache.fontbox.ttf.TrueTypeFont;
import org.apache.pdfbox.io.MemoryUsageSetting;
import org.apache.pdfbox.pdmodel.font.PDType0Font;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fonts of the PDF export: PDFBox's bundled Liberation Sans first (Latin, Greek, Cyrillic, Hebrew), then the
 * TrueType fonts found in the configured directories, for characters Liberation Sans lacks. The directories are
 * listed on first need and each font's character coverage is read once, when a character is first looked for in it;
 * no font file stays open between exports.
 */
@Component(service = PdfFonts.class)
public class PdfFonts {

    private static final Logger LOG = LoggerFactory.getLogger(PdfFonts.class);

    static final String BUILT_IN = "/org/apache/pdfbox/resources/ttf/LiberationSans-Regular.ttf";
    /** At most this many font files are considered, and none larger than {@link #MAX_FONT_BYTES}. */
    static final int MAX_FONT_FILES = 1000;

    static final long MAX_FONT_BYTES = 64L << 20;
    private static final Pattern STYLED = Pattern.compile(
            "(?i).*(bold|italic|oblique|light|thin|black|heavy|medium|semibold|extra|condensed|narrow|mono).*");

    /**
     * One font face usable in a PDF: the built-in font ({@code path} null), a font file, or a member of a TrueType
     * collection. {@code exact} holds the characters whose glyph maps back to that very character (PDFBox writes a
     * glyph's first character into the PDF's ToUnicode map, so only these come out of the PDF as they went in);
     * {@code any} every character the font draws.
     */
    static final class Face {
        final int id;
        final Path path;
        final String member;
        final BitSet exact;
        final BitSet any;

        Face(int id, Path path, String member, BitSet exact, BitSet any) {
            this.id = id;
            this.path = path;
            this.member = member;
            this.exact = exact;
            this.any = any;
        }

        @Override
        public String toString() {
            return path == null ? "built-in Liberation Sans" : path + (member == null ? "" : " (" + member + ")");
        }
    }

    private final byte[] builtIn;
    private final Face builtInFace;
    private final List<Path> dirs;
    private final Path scratch;
    private final long memoryBytes;

    // the fallback fonts: listed on first need, each file's faces read when the search first reaches it
    private List<Path> files;
    private final List<List<Face>> facesOfFile = new ArrayList<>();
    private int nextId = 1;

    @Activate
    public PdfFonts(@Reference ThreadsSettings settings, BundleContext context) throws IOException {
        this(settings.pdfFontDirs, scratchDirectory(context), settings.pdfMemoryBytes);
    }

    PdfFonts(List<Path> dirs, Path scratch, long memoryBytes) throws IOException {
        try (InputStream in = PDType0Font.class.getResourceAsStream(BUILT_IN)) {
            if (in == null) {
                throw new IOException("PDFBox has no " + BUILT_IN);
            }
            this.builtIn = in.readAllBytes();
        }
        TrueTypeFont ttf = new TTFParser().parse(new ByteArrayInputStream(builtIn));
        try {
            this.builtInFace = face(0, null, null, ttf);
        } finally {
            ttf.close();
        }
        this.dirs = List.copyOf(dirs);
        this.scratch = scratch;
        this.memoryBytes = memoryBytes;
        if (scratch != null) {
            Files.createDirectories(scratch);
            clean(scratch);
        }
    }

    /** Scratch files of exports that never finished (a crash) are removed when the component starts and stops. */
    @Deactivate
    void deactivate() {
        if (scratch != null) {
            clean(scratch);
        }
    }

    private static Path scratchDirectory(BundleContext context) {
        File data = context.getDataFile("pdf-scratch");
        return data == null ? null : data.toPath();
    }

    private static void clean(Path dir) {
        try (Stream<Path> leftovers = Files.list(dir)) {
            leftovers.forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    LOG.warn("cannot delete the PDF scratch file {}: {}", p, e.toString());
                }
            });
        } catch (IOException e) {
            // no directory: nothing to clean
        }
    }

    /** Where an export's page content goes once it outgrows {@code pdfMemoryBytes}. */
    MemoryUsageSetting memory() {
        MemoryUsageSetting setting = MemoryUsageSetting.setupMixed(memoryBytes);
        return scratch == null ? setting : setting.setTempDir(scratch.toFile());
    }

    Path scratch() {
        return scratch;
    }

    Face builtIn() {
        return builtInFace;
    }

    /**
     * The first face whose glyph maps back to {@code codePoint}, else the first face that draws it at all, else null.
     */
    Face face(int codePoint) {
        if (builtInFace.exact.get(codePoint)) {
            return builtInFace;
        }
        Face drawsIt = builtInFace.any.get(codePoint) ? builtInFace : null;
        synchronized (this) {
            List<Path> all = files();
            for (int i = 0; i < all.size(); i++) {
                for (Face f : facesOf(i)) {
                    if (f.exact.get(codePoint)) {
                        return f;
                    }
                    if (drawsIt == null && f.any.get(codePoint)) {
                        drawsIt = f;
                    }
                }
            }
        }
        return drawsIt;
    }

    /** Opens {@code face} for one document; what must be closed after the document is saved goes into {@code open}. */
    TrueTypeFont open(Face face, List<Closeable> open) throws IOException {
        if (face.path == null) {
            TrueTypeFont ttf = new TTFParser().parse(new ByteArrayInputStream(builtIn));
            open.add(ttf);
            return ttf;
        }
        if (face.member != null) {
            TrueTypeCollection collection = new TrueTypeCollection(face.path.toFile());
            open.add(collection);
            TrueTypeFont ttf = collection.getFontByName(face.member);
            if (ttf == null) {
                throw new IOException(face + " is gone");
            }
            return ttf;
        }
        TrueTypeFont ttf = new TTFParser().parse(face.path.toFile());
        open.add(ttf);
        return ttf;
    }

    private List<Path> files() {
        if (files == null) {
            List<Path> found = new ArrayList<>();
            for (Path dir : dirs) {
                if (Files.isDirectory(dir)) {
                    collect(dir, found);
                }
            }
            // regular styles first (a fallback should look like body text), then by path, for a stable choice
            found.sort(Comparator.comparing((Path p) ->
                            STYLED.matcher(p.getFileName().toString()).matches())
                    .thenComparing(Path::toString));
            files = found.size() > MAX_FONT_FILES ? List.copyOf(found.subList(0, MAX_FONT_FILES)) : List.copyOf(found);
            if (!files.isEmpty()) {
                LOG.info("PDF export: {} fallback font files in {}", files.size(), dirs);
            }
        }
        return files;
    }

    private static void collect(Path dir, List<Path> found) {
        try {
            Files.walkFileTree(dir, EnumSet.of(FileVisitOption.FOLLOW_LINKS), 8, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
                    if (attrs.isRegularFile()
                            && attrs.size() <= MAX_FONT_BYTES
                            && (name.endsWith(".ttf") || name.endsWith(".otf") || name.endsWith(".ttc"))) {
                        found.add(file);
                    }
                    return found.size() >= 4 * MAX_FONT_FILES ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            LOG.warn("cannot list the font directory {}: {}", dir, e.toString());
        }
    }

    private List<Face> facesOf(int index) {
        while (facesOfFile.size() <= index) {
            facesOfFile.add(null);
        }
        List<Face> faces = facesOfFile.get(index);
        if (faces == null) {
            faces = read(files.get(index));
            facesOfFile.set(index, faces);
        }
        return faces;
    }

    /** The usable faces of one file: TrueType outlines (PDFBox embeds no CFF), embedding and subsetting allowed. */
    private List<Face> read(Path file) {
        List<Face> faces = new ArrayList<>();
        try {
            if (file.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".ttc")) {
                try (TrueTypeCollection collection = new TrueTypeCollection(file.toFile())) {
                    collection.processAllFonts(ttf -> {
                        Face f = usable(file, ttf.getName(), ttf);
                        if (f != null) {
                            faces.add(f);
                        }
                    });
                }
            } else {
                TrueTypeFont ttf = new TTFParser().parse(file.toFile());
                try {
                    Face f = usable(file, null, ttf);
                    if (f != null) {
                        faces.add(f);
                    }
                } finally {
                    ttf.close();
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("font {} is not usable: {}", file, e.toString());
        }
        return faces;
    }

    private Face usable(Path file, String member, TrueTypeFont ttf) throws IOException {
        if (!ttf.getTableMap().containsKey("glyf")) {
            return null;
        }
        OS2WindowsMetricsTable os2 = ttf.getOS2Windows();
        if (os2 != null) {
            int fsType = os2.getFsType();
            if ((fsType & 0x000F) == OS2WindowsMetricsTable.FSTYPE_RESTRICTED
                    || (fsType & OS2WindowsMetricsTable.FSTYPE_BITMAP_ONLY) != 0
                    || (fsType & OS2WindowsMetricsTable.FSTYPE_NO_SUBSETTING) != 0) {
                return null;
            }
        }
        return face(nextId++, file, member, ttf);
    }

    private static Face face(int id, Path path, String member, TrueTypeFont ttf) throws IOException {
        // the same lookup PDFBox's embedder uses, so "exact" agrees with the ToUnicode map it will write
        CmapLookup cmap = ttf.getUnicodeCmapLookup();
        BitSet exact = new BitSet();
        BitSet any = new BitSet();
        int glyphs = ttf.getNumberOfGlyphs();
        for (int gid = 1; gid < glyphs; gid++) {
            List<Integer> codes = cmap.getCharCodes(gid);
            if (codes != null && !codes.isEmpty()) {
                exact.set(codes.get(0));
                for (int c : codes) {
                    any.set(c);
                }
            }
        }
        return new Face(id, path, member, exact, any);
    }
}
