package dev.atrium.storage.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SignedUrlsTest {

    private final SignedUrls urls = new SignedUrls("k".repeat(32).getBytes());

    @Test
    void aSignatureNamesOneFileOfOneWorkspaceUntilOneInstant() {
        String sig = urls.sign("sp_a", "fil_1", 1000);
        assertTrue(urls.verify("sp_a", "fil_1", 1000, sig));
        assertFalse(urls.verify("sp_b", "fil_1", 1000, sig));
        assertFalse(urls.verify("sp_a", "fil_2", 1000, sig));
        assertFalse(urls.verify("sp_a", "fil_1", 1001, sig));
        assertFalse(urls.verify("sp_a", "fil_1", 1000, sig.substring(1)));
        assertFalse(urls.verify("sp_a", "fil_1", 1000, null));
        assertFalse(new SignedUrls("j".repeat(32).getBytes()).verify("sp_a", "fil_1", 1000, sig));
    }
}
