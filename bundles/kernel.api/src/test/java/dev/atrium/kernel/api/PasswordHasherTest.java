package dev.atrium.kernel.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Base64;
import org.junit.jupiter.api.Test;

class PasswordHasherTest {

    /** Made by the threads bundle's own Passwords.hash (210,000 iterations) before it used this class. */
    private static final String THREADS_SHARE_HASH =
            "pbkdf2-sha256$210000$Qliic0VAeBB137VRkKWRag$1whr3lv3e1U4089rsO7IkI7WvYG9WNooKgeaTPYre08";
    /** Salt and hash columns written by the identity bundle's own Passwords (600,000 iterations) before it used this class. */
    private static final String IDENTITY_SALT = "QIo5SbUe47iAjabO7jf6kw==";

    private static final String IDENTITY_HASH = "BTe3ag9nLshlpZHSvPEr3+lJQ0FHCHovWVuuYkVbGoQ=";

    @Test
    void aShareHashStoredByTheOldThreadsCodeStillVerifies() {
        assertTrue(PasswordHasher.verify("correct horse".toCharArray(), THREADS_SHARE_HASH));
        assertFalse(PasswordHasher.verify("correct horsf".toCharArray(), THREADS_SHARE_HASH));
        assertEquals(
                THREADS_SHARE_HASH,
                PasswordHasher.Hash.parse(THREADS_SHARE_HASH).orElseThrow().encoded());
    }

    @Test
    void aPasswordStoredByTheOldIdentityCodeStillVerifies() {
        PasswordHasher.Hash stored = new PasswordHasher.Hash(
                600_000,
                Base64.getDecoder().decode(IDENTITY_SALT),
                Base64.getDecoder().decode(IDENTITY_HASH));
        assertTrue(PasswordHasher.verify("battery staple".toCharArray(), stored));
        assertFalse(PasswordHasher.verify("battery stapler".toCharArray(), stored));
    }

    @Test
    void aNewHashUses600000IterationsAFreshSaltAndRoundTripsThroughItsText() {
        PasswordHasher.Hash a = PasswordHasher.hash("s3cret".toCharArray());
        PasswordHasher.Hash b = PasswordHasher.hash("s3cret".toCharArray());
        assertEquals(600_000, a.iterations());
        assertEquals(16, a.salt().length);
        assertEquals(32, a.key().length);
        assertNotEquals(a.encoded(), b.encoded());
        assertTrue(a.encoded().startsWith("pbkdf2-sha256$600000$"));
        assertTrue(PasswordHasher.verify("s3cret".toCharArray(), a.encoded()));
        assertFalse(PasswordHasher.verify("s3creT".toCharArray(), b.encoded()));
    }

    @Test
    void aTextThatIsNotAHashNeverVerifies() {
        for (String bad : new String[] {
            null,
            "",
            "garbage",
            "pbkdf2-sha256$x$AA$AA",
            "pbkdf2-sha1$1000$AA$AA",
            "pbkdf2-sha256$0$AA$AA",
            "pbkdf2-sha256$99999999$AA$AA",
            "pbkdf2-sha256$1000$!!$AA",
            "pbkdf2-sha256$1000$AA$AA$"
        }) {
            assertFalse(PasswordHasher.verify("x".toCharArray(), bad), String.valueOf(bad));
        }
    }

    @Test
    void verifyNothingAnswersFalse() {
        assertFalse(PasswordHasher.verifyNothing("x".toCharArray()));
    }
}
