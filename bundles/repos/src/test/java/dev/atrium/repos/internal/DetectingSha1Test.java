package dev.atrium.repos.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import org.eclipse.jgit.util.sha1.SHA1;
import org.eclipse.jgit.util.sha1.Sha1CollisionException;
import org.junit.jupiter.api.Test;

class DetectingSha1Test {

    /** The first 320 bytes of shattered-1.pdf (shattered.io): a prefix and the two near-collision blocks. */
    static final byte[] SHATTERED_PREFIX = HexFormat.of()
            .parseHex(
                    "255044462d312e330a25e2e3cfd30a0a0a312030206f626a0a3c3c2f57696474682032203020522f4865696768742033203020522f"
                            + "547970652034203020522f537562747970652035203020522f46696c7465722036203020522f436f6c6f7253706163652037203020"
                            + "522f4c656e6774682038203020522f42697473506572436f6d706f6e656e7420383e3e0a73747265616d0affd8fffe002453484"
                            + "12d3120697320646561642121212121852fec092339759c39b1a1c63c4c97e1fffe017f46dc93a6b67e013b029aaa1db2560b45ca"
                            + "67d688c7f84b8c4c791fe02b3df614f86db1690901c56b45c1530afedfb76038e972722fe7ad728f0e4904e046c230570fe9d41398"
                            + "abe12ef5bc942be33542a4802d98b5d70f2a332ec37fac3514e74ddc0f2cc1a874cd0c78305a21566461309789606bd0bf3f98cda8"
                            + "044629a1");

    private static final int[] LENGTHS = {
        0, 1, 2, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 100_003, 1 << 20
    };

    @Test
    void theHashIsSha1WhateverTheLengthAndPieces() throws Exception {
        Random random = new Random(42);
        DetectingSha1 sha1 = new DetectingSha1();
        for (int length : LENGTHS) {
            byte[] data = new byte[length];
            random.nextBytes(data);
            byte[] expected = MessageDigest.getInstance("SHA-1").digest(data);

            sha1.reset().update(data, 0, length);
            assertArrayEquals(expected, sha1.digest(), "whole, length " + length);

            sha1.reset();
            int p = 0;
            while (p < length) {
                int n = Math.min(length - p, random.nextInt(200));
                sha1.update(data, p, n);
                p += n;
            }
            assertArrayEquals(expected, sha1.digest(), "in pieces, length " + length);

            if (length <= 4096) {
                sha1.reset();
                for (byte b : data) {
                    sha1.update(b);
                }
                assertArrayEquals(expected, sha1.digest(), "byte by byte, length " + length);
            }
            assertFalse(sha1.collisionDetected(), "random data is no attack, length " + length);
        }
    }

    @Test
    void aSliceOfALargerArrayHashesOnlyTheSlice() throws Exception {
        byte[] data = new byte[1000];
        new Random(1).nextBytes(data);
        DetectingSha1 sha1 = new DetectingSha1();
        sha1.update(data, 17, 900);
        MessageDigest jdk = MessageDigest.getInstance("SHA-1");
        jdk.update(data, 17, 900);
        assertArrayEquals(jdk.digest(), sha1.digest());
    }

    @Test
    void theShatteredPrefixIsDetectedInAnyPieces() throws Exception {
        byte[] expected = MessageDigest.getInstance("SHA-1").digest(SHATTERED_PREFIX);
        DetectingSha1 sha1 = new DetectingSha1();
        for (int split : new int[] {0, 1, 63, 64, 100, 191, 192, 250, 319}) {
            sha1.reset();
            sha1.update(SHATTERED_PREFIX, 0, split);
            sha1.update(SHATTERED_PREFIX, split, SHATTERED_PREFIX.length - split);
            assertArrayEquals(expected, sha1.digest(), "the hash itself stays SHA-1");
            assertTrue(sha1.collisionDetected(), "split at " + split);
        }
        // and it is the next message's business no more
        sha1.reset().update(new byte[10], 0, 10);
        sha1.digest();
        assertFalse(sha1.collisionDetected());
    }

    @Test
    void aBitFlippedInTheNearCollisionBlockIsNoLongerAnAttack() {
        byte[] changed = SHATTERED_PREFIX.clone();
        changed[200] ^= 0x01;
        DetectingSha1 sha1 = new DetectingSha1();
        sha1.update(changed, 0, changed.length);
        sha1.digest();
        assertFalse(sha1.collisionDetected(), "detection looks for the near-collision, not for the file");
    }

    @Test
    void itAgreesWithJGitsDetectingSha1() {
        // JGit's SHA1Java is a port of the same sha1dc: same digests, same verdicts, also on the attack
        Random random = new Random(9);
        for (int i = 0; i < 50; i++) {
            byte[] data = new byte[random.nextInt(20_000)];
            random.nextBytes(data);
            DetectingSha1 ours = new DetectingSha1();
            ours.update(data, 0, data.length);
            SHA1 jgits = SHA1.newInstance().setDetectCollision(true);
            jgits.update(data);
            assertArrayEquals(jgits.digest(), ours.digest());
        }
        SHA1 jgits = SHA1.newInstance().setDetectCollision(true);
        jgits.update(SHATTERED_PREFIX);
        boolean jgitDetects;
        try {
            jgits.digest();
            jgitDetects = false;
        } catch (Sha1CollisionException e) {
            jgitDetects = true;
        }
        DetectingSha1 ours = new DetectingSha1();
        ours.update(SHATTERED_PREFIX, 0, SHATTERED_PREFIX.length);
        ours.digest();
        assertEquals(jgitDetects, ours.collisionDetected());
    }

    @Test
    void theUnavoidableBitConditionsLeaveSomeBlocksToRecompressButNotMost() {
        // were the conditions never met, nothing would be recompressed and nothing detected; were they always met,
        // every block would be recompressed 32 times (correct, but sha1dc's speed comes from this filter)
        byte[] data = new byte[64 * 100_000];
        new Random(3).nextBytes(data);
        DetectingSha1 sha1 = new DetectingSha1();
        sha1.update(data, 0, data.length);
        sha1.digest();
        long blocks = data.length / 64 + 1;
        assertTrue(sha1.recompressions() > blocks / 100, sha1.recompressions() + " of " + blocks);
        assertTrue(sha1.recompressions() < blocks / 5, sha1.recompressions() + " of " + blocks);
    }

    @Test
    void everyDisturbanceVectorsMessageDifferenceIsAnExpandedSha1Message() {
        // the differences were transcribed from sha1dc; an expanded message obeys the SHA-1 message expansion
        assertEquals(32, Sha1DisturbanceVectors.MESSAGE_DIFFERENCE.length);
        assertEquals(32, Sha1DisturbanceVectors.RECOMPRESSION_STEP.length);
        for (int[] dm : Sha1DisturbanceVectors.MESSAGE_DIFFERENCE) {
            assertEquals(80, dm.length);
            for (int t = 16; t < 80; t++) {
                assertEquals(
                        Integer.rotateLeft(dm[t - 3] ^ dm[t - 8] ^ dm[t - 14] ^ dm[t - 16], 1), dm[t], "word " + t);
            }
        }
    }
}
