package dev.atrium.resource.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.atrium.resource.api.KvFacet.KvKey;
import dev.atrium.resource.api.KvFacet.KvPage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * What every {@code kv} backend does, whatever it keeps entries in. A backend's test extends this with its provider
 * on a real backend and a fresh resource per call of {@link #newResource()}.
 */
public abstract class KvFacetContract {

    /** The provider under test; it implements {@link KvFacet}. */
    protected abstract ResourceProvider provider();

    /** A new resource of the provider, provisioned. */
    protected abstract TestResourceContext newResource() throws Exception;

    private KvFacet kv() {
        return (KvFacet) provider();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aValuePutIsReadBackByteForByte() throws Exception {
        ResourceContext r = newResource();
        byte[] value = {0, 1, (byte) 0xff, (byte) 0x80, 10, 13, 0};
        kv().put(r, "binary", value, null);
        KvFacet.KvEntry entry = kv().get(r, "binary").orElseThrow();
        assertEquals("binary", entry.key());
        assertArrayEquals(value, entry.value());
        assertNull(entry.expiresAt());
        kv().put(r, "empty", new byte[0], null);
        assertArrayEquals(new byte[0], kv().get(r, "empty").orElseThrow().value());
    }

    @Test
    void aPutReplacesTheEntryAndItsExpiry() throws Exception {
        ResourceContext r = newResource();
        kv().put(r, "k", bytes("one"), Duration.ofHours(1));
        assertNotNull(kv().get(r, "k").orElseThrow().expiresAt());
        kv().put(r, "k", bytes("two"), null);
        KvFacet.KvEntry entry = kv().get(r, "k").orElseThrow();
        assertArrayEquals(bytes("two"), entry.value());
        assertNull(entry.expiresAt(), "a put without a TTL makes the entry live for ever");
    }

    @Test
    void aMissingKeyIsEmptyAndDeletingItSaysSo() throws Exception {
        ResourceContext r = newResource();
        assertTrue(kv().get(r, "absent").isEmpty());
        assertFalse(kv().delete(r, "absent"));
        kv().put(r, "present", bytes("x"), null);
        assertTrue(kv().delete(r, "present"));
        assertTrue(kv().get(r, "present").isEmpty());
        assertFalse(kv().delete(r, "present"));
    }

    @Test
    void anExpiredEntryIsNeitherReturnedListedNorDeleted() throws Exception {
        ResourceContext r = newResource();
        Instant before = Instant.now();
        kv().put(r, "short", bytes("x"), Duration.ofSeconds(1));
        kv().put(r, "long", bytes("y"), Duration.ofHours(1));
        Instant expires = kv().get(r, "short").orElseThrow().expiresAt();
        assertNotNull(expires);
        assertTrue(
                !expires.isBefore(before.plusMillis(900))
                        && !expires.isAfter(Instant.now().plusMillis(1100)),
                expires.toString());
        Thread.sleep(1300);
        assertTrue(kv().get(r, "short").isEmpty());
        assertEquals(List.of("long"), names(kv().list(r, "", null, 10)));
        assertFalse(kv().delete(r, "short"));
        assertTrue(kv().get(r, "long").isPresent());
    }

    @Test
    void keysAreListedInTheOrderOfTheirUtf8BytesAndAPrefixIsPlainText() throws Exception {
        ResourceContext r = newResource();
        List<String> keys =
                List.of("b", "a_", "a", "a%", "a/b", "é", "Z", "ab", "a\u0000x".replace("\u0000", "-"), "日本");
        for (String key : keys) {
            kv().put(r, key, bytes(key), null);
        }
        TreeSet<String> byBytes = new TreeSet<>((x, y) -> java.util.Arrays.compareUnsigned(bytes(x), bytes(y)));
        byBytes.addAll(keys);
        assertEquals(new ArrayList<>(byBytes), names(kv().list(r, "", null, 100)));
        assertEquals(List.of("a%"), names(kv().list(r, "a%", null, 100)), "% is no wildcard");
        assertEquals(List.of("a_"), names(kv().list(r, "a_", null, 100)), "_ is no wildcard");
        assertEquals(List.of("a", "a%", "a-x", "a/b", "a_", "ab"), names(kv().list(r, "a", null, 100)));
        assertEquals(List.of(), names(kv().list(r, "c", null, 100)));
    }

    @Test
    void pagesVisitEveryLiveKeyOnceInOrder() throws Exception {
        ResourceContext r = newResource();
        Set<String> expected = new TreeSet<>();
        for (int i = 0; i < 230; i++) {
            String key = String.format("p/%04d", i);
            // every fifth entry expires before the listing: pages must still be full while more keys exist
            kv().put(r, key, bytes("v"), i % 5 == 0 ? Duration.ofSeconds(1) : null);
            if (i % 5 != 0) {
                expected.add(key);
            }
        }
        kv().put(r, "q/other", bytes("v"), null);
        Thread.sleep(1300);
        List<String> seen = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            KvPage page = kv().list(r, "p/", cursor, 7);
            assertTrue(page.keys().size() <= 7);
            if (page.cursor() != null) {
                assertEquals(7, page.keys().size(), "a page short of the limit while more keys follow");
            }
            seen.addAll(names(page));
            cursor = page.cursor();
            pages++;
        } while (cursor != null && pages < 100);
        assertEquals(new ArrayList<>(expected), seen);
        assertEquals(new HashSet<>(seen).size(), seen.size(), "a key listed twice");
    }

    @Test
    void aCursorThisProviderDidNotReturnIsBadInput() throws Exception {
        ResourceContext r = newResource();
        ResourceException e = assertThrows(ResourceException.class, () -> kv().list(r, "", "%%not-a-cursor%%", 10));
        assertEquals(ResourceException.Kind.BAD_INPUT, e.kind());
    }

    @Test
    void resourcesAreKeptApart() throws Exception {
        ResourceContext one = newResource();
        ResourceContext two = newResource();
        kv().put(one, "shared-name", bytes("one"), null);
        assertTrue(kv().get(two, "shared-name").isEmpty());
        assertEquals(List.of(), names(kv().list(two, "", null, 10)));
        assertFalse(kv().delete(two, "shared-name"));
        assertArrayEquals(
                bytes("one"), kv().get(one, "shared-name").orElseThrow().value());
    }

    @Test
    void deprovisioningRemovesEveryEntryAndMayBeRepeated() throws Exception {
        ResourceContext r = newResource();
        ResourceContext other = newResource();
        for (int i = 0; i < 1200; i++) {
            kv().put(r, "k" + i, bytes("v"), i % 2 == 0 ? Duration.ofHours(1) : null);
        }
        kv().put(other, "k1", bytes("kept"), null);
        provider().deprovision(r);
        provider().deprovision(r);
        assertEquals(List.of(), names(kv().list(r, "", null, 10)));
        assertTrue(kv().get(r, "k1").isEmpty());
        assertArrayEquals(bytes("kept"), kv().get(other, "k1").orElseThrow().value());
    }

    @Test
    void readsAndWritesAreMetered() throws Exception {
        TestResourceContext r = newResource();
        kv().put(r, "k", bytes("v"), null);
        kv().get(r, "k");
        kv().list(r, "", null, 10);
        assertTrue(
                r.used("writes") >= 1 && r.used("reads") >= 2,
                "writes " + r.used("writes") + ", reads " + r.used("reads"));
    }

    @Test
    void theBackendReportsItselfHealthy() throws Exception {
        assertTrue(provider().health(newResource()).healthy());
    }

    private static List<String> names(KvPage page) {
        return page.keys().stream().map(KvKey::name).toList();
    }
}
