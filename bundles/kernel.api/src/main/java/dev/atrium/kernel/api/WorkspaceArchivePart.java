package dev.atrium.kernel.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.osgi.annotation.versioning.ConsumerType;
import org.osgi.annotation.versioning.ProviderType;

/**
 * One capability's share of a workspace archive ({@code GET /api/spaces/:spaceId/export?format=zip} and
 * {@code POST /api/spaces/import}), registered as a service by the bundle that owns that content. The kernel writes and
 * reads the archive, proves the workspace and makes the new one; a part only turns its own rows into entries of its
 * folder and back.
 *
 * <p>Ids stay inside a part: an import makes new ids, and a part maps the references between its own items (a message's
 * thread, a shortcut's group). A part whose items refer to another part's (a run's thread) names that part in
 * {@link #after()}, and finds the new ids through {@link ArchiveReader#idOf(String, String)}. An archive names no user
 * and no secret value.
 *
 * @since 2.17
 */
@ConsumerType
public interface WorkspaceArchivePart {

    /**
     * The part's folder in the archive and its name in the manifest: lower-case letters, digits and dashes, one per
     * server. Stable across versions: an archive is read by the part of the same name.
     */
    String name();

    /**
     * Writes what the part holds for {@code space} as entries of {@code out}, reading it consistently (one snapshot)
     * and without holding it all in memory.
     *
     * @return how many items it wrote (the manifest's count for the part)
     */
    long export(SpaceRef space, ArchiveWriter out) throws IOException;

    /**
     * Brings the part's entries back into {@code space}, a workspace the import has just made for the caller, with new
     * ids. Content that cannot be read throws {@link ApiException#badRequest(String)} saying what was wrong.
     *
     * @return how many items it made
     */
    long restore(SpaceRef space, ArchiveReader in) throws IOException;

    /**
     * Removes everything the part holds for {@code space}: a later part of the same import failed, and the import
     * leaves no half workspace. Called only for a workspace an import made.
     */
    void discard(SpaceRef space);

    /**
     * The parts whose items this part's items refer to: when the archive has them, they are restored before this one,
     * and their items' new ids are known to it. None by default.
     *
     * @since 2.18
     */
    default Set<String> after() {
        return Set.of();
    }

    /** Where a part writes its entries during an export. Only the kernel implements it. */
    @ProviderType
    interface ArchiveWriter {

        /**
         * Starts the entry {@code name} (a path inside the part's folder) and returns its stream, valid until the next
         * entry starts or the export returns; closing it ends the entry.
         */
        OutputStream entry(String name) throws IOException;

        /**
         * Starts a JSON Lines entry: each {@link Lines#add(Object)} writes one value (a map, a list, a record Jackson
         * writes) on its own line.
         */
        Lines lines(String name) throws IOException;
    }

    /** The writer of one JSON Lines entry. */
    @ProviderType
    interface Lines {

        void add(Object value) throws IOException;
    }

    /** A part's entries during an import: the archive spooled to a file, read in any order. */
    @ProviderType
    interface ArchiveReader {

        /** The entries of the part's folder, as paths inside it, in archive order. */
        List<String> names();

        /** Opens an entry; throws {@link ApiException} 400 when the archive has no such entry. */
        InputStream open(String name) throws IOException;

        /**
         * Calls {@code each} with every line of a JSON Lines entry, in order; nothing when the archive has no such
         * entry. A line that is not a JSON object is a 400 naming the entry and the line.
         */
        void lines(String name, LineHandler each) throws IOException;

        /**
         * Records that the item the archive calls {@code key} is {@code id} in the new workspace, for the parts that
         * are restored {@link WorkspaceArchivePart#after() after} this one.
         *
         * @since 2.18
         */
        void remember(String key, String id);

        /**
         * The new id of the item {@code key} of the part {@code part}, restored earlier in this import; empty when that
         * part was not restored or did not bring the item back.
         *
         * @since 2.18
         */
        Optional<String> idOf(String part, String key);
    }

    /** What a part does with one line of a JSON Lines entry. */
    @FunctionalInterface
    interface LineHandler {

        void line(JsonNode line) throws IOException;
    }
}
