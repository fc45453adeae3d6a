package dev.atrium.repos.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * SHA-1 with collision detection (sha1dc, Marc Stevens' counter-cryptanalysis, as git uses it), written for the
 * JIT: no allocation per block, the 80 steps unrolled over five local words, big-endian words read with one load
 * each. Per 64-byte block it expands the message, compresses (keeping the states before steps 58 and 65), checks
 * the unavoidable bit conditions of the 32 known disturbance vectors, and recompresses only for the vectors those
 * conditions leave standing (few blocks have any); a recompression that ends in the same chaining value means the
 * block is one half of a near-collision pair, so the message is an attack. The written-out steps are mechanical (a
 * script wrote them: step t uses the five words in turn); the tests hold the result to the JDK's SHA-1 and to the
 * SHAttered near-collision.
 *
 * <p>Why one class of about 770 lines: the 80 unrolled steps are the point of it (no loop, no array of state), and
 * they read as the algorithm does only in one place.
 *
 * <p>Not thread-safe; one instance hashes one message at a time ({@link #reset()} between messages).
 */
final class DetectingSha1 {

    private static final VarHandle BIG_ENDIAN_INT =
            MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    /** The expanded message of the block being compressed. */
    private final int[] w = new int[80];
    /** The expanded message of the would-be partner block, during a recompression. */
    private final int[] partner = new int[80];
    /** Bytes of an unfinished block. */
    private final byte[] pending = new byte[64];

    private long length;
    private int h0;
    private int h1;
    private int h2;
    private int h3;
    private int h4;
    // the working state before steps 58 and 65 of the last block, where the disturbance vectors recompress from
    private int a58;
    private int b58;
    private int c58;
    private int d58;
    private int e58;
    private int a65;
    private int b65;
    private int c65;
    private int d65;
    private int e65;
    private boolean collision;
    private long recompressions;

    DetectingSha1() {
        reset();
    }

    DetectingSha1 reset() {
        h0 = 0x67452301;
        h1 = 0xEFCDAB89;
        h2 = 0x98BADCFE;
        h3 = 0x10325476;
        h4 = 0xC3D2E1F0;
        length = 0;
        collision = false;
        return this;
    }

    void update(byte b) {
        int used = (int) length & 63;
        pending[used] = b;
        length++;
        if (used == 63) {
            compress(pending, 0);
        }
    }

    void update(byte[] in, int offset, int count) {
        Objects.checkFromIndexSize(offset, count, in.length);
        int used = (int) length & 63;
        length += count;
        if (used > 0) {
            int n = Math.min(64 - used, count);
            System.arraycopy(in, offset, pending, used, n);
            offset += n;
            count -= n;
            if (used + n < 64) {
                return;
            }
            compress(pending, 0);
        }
        while (count >= 64) {
            compress(in, offset);
            offset += 64;
            count -= 64;
        }
        if (count > 0) {
            System.arraycopy(in, offset, pending, 0, count);
        }
    }

    /** Pads the message and returns its SHA-1; {@link #collisionDetected()} then says whether it was an attack. */
    byte[] digest() {
        long bits = length << 3;
        int used = (int) length & 63;
        pending[used++] = (byte) 0x80;
        if (used > 56) {
            Arrays.fill(pending, used, 64, (byte) 0);
            compress(pending, 0);
            used = 0;
        }
        Arrays.fill(pending, used, 56, (byte) 0);
        BIG_ENDIAN_INT.set(pending, 56, (int) (bits >>> 32));
        BIG_ENDIAN_INT.set(pending, 60, (int) bits);
        compress(pending, 0);
        byte[] id = new byte[20];
        BIG_ENDIAN_INT.set(id, 0, h0);
        BIG_ENDIAN_INT.set(id, 4, h1);
        BIG_ENDIAN_INT.set(id, 8, h2);
        BIG_ENDIAN_INT.set(id, 12, h3);
        BIG_ENDIAN_INT.set(id, 16, h4);
        return id;
    }

    /** Whether a block of the message hashed since the last {@link #reset()} is half of a SHA-1 near-collision. */
    boolean collisionDetected() {
        return collision;
    }

    /** How many recompressions the unavoidable bit conditions let through so far (for measurements). */
    long recompressions() {
        return recompressions;
    }

    private void compress(byte[] in, int p) {
        int[] w = this.w;
        for (int t = 0; t < 16; t++) {
            w[t] = (int) BIG_ENDIAN_INT.get(in, p + (t << 2));
        }
        int a = h0;
        int b = h1;
        int c = h2;
        int d = h3;
        int e = h4;
        // the message expansion and the check of the unavoidable bit conditions are off the steps' chain of
        // dependencies: placed among the steps, they run in slots the chain leaves idle
        e += Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + w[0];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + w[1];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + w[2];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + w[3];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + w[4];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + w[5];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + w[6];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + w[7];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + w[8];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + w[9];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + w[10];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + w[11];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + w[12];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + w[13];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + w[14];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + w[15];
        b = Integer.rotateLeft(b, 30);
        w[16] = Integer.rotateLeft(w[13] ^ w[8] ^ w[2] ^ w[0], 1);
        d += Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + w[16];
        a = Integer.rotateLeft(a, 30);
        w[17] = Integer.rotateLeft(w[14] ^ w[9] ^ w[3] ^ w[1], 1);
        c += Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + w[17];
        e = Integer.rotateLeft(e, 30);
        w[18] = Integer.rotateLeft(w[15] ^ w[10] ^ w[4] ^ w[2], 1);
        b += Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + w[18];
        d = Integer.rotateLeft(d, 30);
        w[19] = Integer.rotateLeft(w[16] ^ w[11] ^ w[5] ^ w[3], 1);
        a += Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + w[19];
        c = Integer.rotateLeft(c, 30);
        w[20] = Integer.rotateLeft(w[17] ^ w[12] ^ w[6] ^ w[4], 1);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + w[20];
        b = Integer.rotateLeft(b, 30);
        w[21] = Integer.rotateLeft(w[18] ^ w[13] ^ w[7] ^ w[5], 1);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + w[21];
        a = Integer.rotateLeft(a, 30);
        w[22] = Integer.rotateLeft(w[19] ^ w[14] ^ w[8] ^ w[6], 1);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + w[22];
        e = Integer.rotateLeft(e, 30);
        w[23] = Integer.rotateLeft(w[20] ^ w[15] ^ w[9] ^ w[7], 1);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + w[23];
        d = Integer.rotateLeft(d, 30);
        w[24] = Integer.rotateLeft(w[21] ^ w[16] ^ w[10] ^ w[8], 1);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + w[24];
        c = Integer.rotateLeft(c, 30);
        w[25] = Integer.rotateLeft(w[22] ^ w[17] ^ w[11] ^ w[9], 1);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + w[25];
        b = Integer.rotateLeft(b, 30);
        w[26] = Integer.rotateLeft(w[23] ^ w[18] ^ w[12] ^ w[10], 1);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + w[26];
        a = Integer.rotateLeft(a, 30);
        w[27] = Integer.rotateLeft(w[24] ^ w[19] ^ w[13] ^ w[11], 1);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + w[27];
        e = Integer.rotateLeft(e, 30);
        w[28] = Integer.rotateLeft(w[25] ^ w[20] ^ w[14] ^ w[12], 1);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + w[28];
        d = Integer.rotateLeft(d, 30);
        w[29] = Integer.rotateLeft(w[26] ^ w[21] ^ w[15] ^ w[13], 1);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + w[29];
        c = Integer.rotateLeft(c, 30);
        w[30] = Integer.rotateLeft(w[27] ^ w[22] ^ w[16] ^ w[14], 1);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + w[30];
        b = Integer.rotateLeft(b, 30);
        w[31] = Integer.rotateLeft(w[28] ^ w[23] ^ w[17] ^ w[15], 1);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + w[31];
        a = Integer.rotateLeft(a, 30);
        w[32] = Integer.rotateLeft(w[29] ^ w[24] ^ w[18] ^ w[16], 1);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + w[32];
        e = Integer.rotateLeft(e, 30);
        w[33] = Integer.rotateLeft(w[30] ^ w[25] ^ w[19] ^ w[17], 1);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + w[33];
        d = Integer.rotateLeft(d, 30);
        w[34] = Integer.rotateLeft(w[31] ^ w[26] ^ w[20] ^ w[18], 1);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + w[34];
        c = Integer.rotateLeft(c, 30);
        w[35] = Integer.rotateLeft(w[32] ^ w[27] ^ w[21] ^ w[19], 1);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + w[35];
        b = Integer.rotateLeft(b, 30);
        w[36] = Integer.rotateLeft(w[33] ^ w[28] ^ w[22] ^ w[20], 1);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + w[36];
        a = Integer.rotateLeft(a, 30);
        w[37] = Integer.rotateLeft(w[34] ^ w[29] ^ w[23] ^ w[21], 1);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + w[37];
        e = Integer.rotateLeft(e, 30);
        w[38] = Integer.rotateLeft(w[35] ^ w[30] ^ w[24] ^ w[22], 1);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + w[38];
        d = Integer.rotateLeft(d, 30);
        w[39] = Integer.rotateLeft(w[36] ^ w[31] ^ w[25] ^ w[23], 1);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + w[39];
        c = Integer.rotateLeft(c, 30);
        w[40] = Integer.rotateLeft(w[37] ^ w[32] ^ w[26] ^ w[24], 1);
        e += Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + w[40];
        b = Integer.rotateLeft(b, 30);
        w[41] = Integer.rotateLeft(w[38] ^ w[33] ^ w[27] ^ w[25], 1);
        d += Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + w[41];
        a = Integer.rotateLeft(a, 30);
        w[42] = Integer.rotateLeft(w[39] ^ w[34] ^ w[28] ^ w[26], 1);
        c += Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + w[42];
        e = Integer.rotateLeft(e, 30);
        w[43] = Integer.rotateLeft(w[40] ^ w[35] ^ w[29] ^ w[27], 1);
        b += Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + w[43];
        d = Integer.rotateLeft(d, 30);
        w[44] = Integer.rotateLeft(w[41] ^ w[36] ^ w[30] ^ w[28], 1);
        a += Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + w[44];
        c = Integer.rotateLeft(c, 30);
        w[45] = Integer.rotateLeft(w[42] ^ w[37] ^ w[31] ^ w[29], 1);
        e += Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + w[45];
        b = Integer.rotateLeft(b, 30);
        w[46] = Integer.rotateLeft(w[43] ^ w[38] ^ w[32] ^ w[30], 1);
        d += Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + w[46];
        a = Integer.rotateLeft(a, 30);
        w[47] = Integer.rotateLeft(w[44] ^ w[39] ^ w[33] ^ w[31], 1);
        c += Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + w[47];
        e = Integer.rotateLeft(e, 30);
        w[48] = Integer.rotateLeft(w[45] ^ w[40] ^ w[34] ^ w[32], 1);
        b += Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + w[48];
        d = Integer.rotateLeft(d, 30);
        w[49] = Integer.rotateLeft(w[46] ^ w[41] ^ w[35] ^ w[33], 1);
        a += Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + w[49];
        c = Integer.rotateLeft(c, 30);
        w[50] = Integer.rotateLeft(w[47] ^ w[42] ^ w[36] ^ w[34], 1);
        e += Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + w[50];
        b = Integer.rotateLeft(b, 30);
        w[51] = Integer.rotateLeft(w[48] ^ w[43] ^ w[37] ^ w[35], 1);
        d += Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + w[51];
        a = Integer.rotateLeft(a, 30);
        w[52] = Integer.rotateLeft(w[49] ^ w[44] ^ w[38] ^ w[36], 1);
        c += Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + w[52];
        e = Integer.rotateLeft(e, 30);
        w[53] = Integer.rotateLeft(w[50] ^ w[45] ^ w[39] ^ w[37], 1);
        b += Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + w[53];
        d = Integer.rotateLeft(d, 30);
        w[54] = Integer.rotateLeft(w[51] ^ w[46] ^ w[40] ^ w[38], 1);
        a += Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + w[54];
        c = Integer.rotateLeft(c, 30);
        w[55] = Integer.rotateLeft(w[52] ^ w[47] ^ w[41] ^ w[39], 1);
        e += Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + w[55];
        b = Integer.rotateLeft(b, 30);
        w[56] = Integer.rotateLeft(w[53] ^ w[48] ^ w[42] ^ w[40], 1);
        d += Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + w[56];
        a = Integer.rotateLeft(a, 30);
        w[57] = Integer.rotateLeft(w[54] ^ w[49] ^ w[43] ^ w[41], 1);
        c += Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + w[57];
        e = Integer.rotateLeft(e, 30);
        a58 = c;
        b58 = d;
        c58 = e;
        d58 = a;
        e58 = b;
        w[58] = Integer.rotateLeft(w[55] ^ w[50] ^ w[44] ^ w[42], 1);
        b += Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + w[58];
        d = Integer.rotateLeft(d, 30);
        w[59] = Integer.rotateLeft(w[56] ^ w[51] ^ w[45] ^ w[43], 1);
        a += Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + w[59];
        c = Integer.rotateLeft(c, 30);
        w[60] = Integer.rotateLeft(w[57] ^ w[52] ^ w[46] ^ w[44], 1);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + w[60];
        b = Integer.rotateLeft(b, 30);
        w[61] = Integer.rotateLeft(w[58] ^ w[53] ^ w[47] ^ w[45], 1);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + w[61];
        a = Integer.rotateLeft(a, 30);
        w[62] = Integer.rotateLeft(w[59] ^ w[54] ^ w[48] ^ w[46], 1);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + w[62];
        e = Integer.rotateLeft(e, 30);
        w[63] = Integer.rotateLeft(w[60] ^ w[55] ^ w[49] ^ w[47], 1);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + w[63];
        d = Integer.rotateLeft(d, 30);
        w[64] = Integer.rotateLeft(w[61] ^ w[56] ^ w[50] ^ w[48], 1);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + w[64];
        c = Integer.rotateLeft(c, 30);
        a65 = a;
        b65 = b;
        c65 = c;
        d65 = d;
        e65 = e;
        int candidates = Sha1DisturbanceVectors.unavoidableBitConditions(w);
        w[65] = Integer.rotateLeft(w[62] ^ w[57] ^ w[51] ^ w[49], 1);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + w[65];
        b = Integer.rotateLeft(b, 30);
        w[66] = Integer.rotateLeft(w[63] ^ w[58] ^ w[52] ^ w[50], 1);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + w[66];
        a = Integer.rotateLeft(a, 30);
        w[67] = Integer.rotateLeft(w[64] ^ w[59] ^ w[53] ^ w[51], 1);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + w[67];
        e = Integer.rotateLeft(e, 30);
        w[68] = Integer.rotateLeft(w[65] ^ w[60] ^ w[54] ^ w[52], 1);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + w[68];
        d = Integer.rotateLeft(d, 30);
        w[69] = Integer.rotateLeft(w[66] ^ w[61] ^ w[55] ^ w[53], 1);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + w[69];
        c = Integer.rotateLeft(c, 30);
        w[70] = Integer.rotateLeft(w[67] ^ w[62] ^ w[56] ^ w[54], 1);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + w[70];
        b = Integer.rotateLeft(b, 30);
        w[71] = Integer.rotateLeft(w[68] ^ w[63] ^ w[57] ^ w[55], 1);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + w[71];
        a = Integer.rotateLeft(a, 30);
        w[72] = Integer.rotateLeft(w[69] ^ w[64] ^ w[58] ^ w[56], 1);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + w[72];
        e = Integer.rotateLeft(e, 30);
        w[73] = Integer.rotateLeft(w[70] ^ w[65] ^ w[59] ^ w[57], 1);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + w[73];
        d = Integer.rotateLeft(d, 30);
        w[74] = Integer.rotateLeft(w[71] ^ w[66] ^ w[60] ^ w[58], 1);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + w[74];
        c = Integer.rotateLeft(c, 30);
        w[75] = Integer.rotateLeft(w[72] ^ w[67] ^ w[61] ^ w[59], 1);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + w[75];
        b = Integer.rotateLeft(b, 30);
        w[76] = Integer.rotateLeft(w[73] ^ w[68] ^ w[62] ^ w[60], 1);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + w[76];
        a = Integer.rotateLeft(a, 30);
        w[77] = Integer.rotateLeft(w[74] ^ w[69] ^ w[63] ^ w[61], 1);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + w[77];
        e = Integer.rotateLeft(e, 30);
        w[78] = Integer.rotateLeft(w[75] ^ w[70] ^ w[64] ^ w[62], 1);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + w[78];
        d = Integer.rotateLeft(d, 30);
        w[79] = Integer.rotateLeft(w[76] ^ w[71] ^ w[65] ^ w[63], 1);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + w[79];
        c = Integer.rotateLeft(c, 30);
        h0 += a;
        h1 += b;
        h2 += c;
        h3 += d;
        h4 += e;
        while (candidates != 0 && !collision) {
            int dv = Integer.numberOfTrailingZeros(candidates);
            candidates &= candidates - 1;
            collision = recompressionCollides(dv);
        }
    }

    /**
     * Recompresses the block with disturbance vector {@code dv}'s message difference from the saved state of its
     * step, backwards to the chaining value the partner block would start from and forwards to the one it would end
     * with: the same chaining value out as this block's means the two blocks collide.
     */
    private boolean recompressionCollides(int dv) {
        recompressions++;
        int[] difference = Sha1DisturbanceVectors.MESSAGE_DIFFERENCE[dv];
        int[] partner = this.partner;
        for (int t = 0; t < 80; t++) {
            partner[t] = w[t] ^ difference[t];
        }
        return Sha1DisturbanceVectors.RECOMPRESSION_STEP[dv] == 58
                ? recompressionFrom58Collides(partner)
                : recompressionFrom65Collides(partner);
    }

    /** Recompression from step 58: see {@link #recompressionCollides(int)}. */
    private boolean recompressionFrom58Collides(int[] m) {
        int a = a58;
        int b = b58;
        int c = c58;
        int d = d58;
        int e = e58;
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + m[57];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + m[56];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + m[55];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + m[54];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + m[53];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + m[52];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + m[51];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + m[50];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + m[49];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + m[48];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + m[47];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + m[46];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + m[45];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + m[44];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + m[43];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + m[42];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + m[41];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + m[40];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + m[39];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + m[38];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + m[37];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + m[36];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + m[35];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + m[34];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + m[33];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + m[32];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + m[31];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + m[30];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + m[29];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + m[28];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + m[27];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + m[26];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + m[25];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + m[24];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + m[23];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + m[22];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + m[21];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + m[20];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + m[19];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + m[18];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + m[17];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + m[16];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + m[15];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + m[14];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + m[13];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + m[12];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + m[11];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + m[10];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + m[9];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + m[8];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + m[7];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + m[6];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + m[5];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + m[4];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + m[3];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + m[2];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + m[1];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + m[0];
        int in0 = d;
        int in1 = e;
        int in2 = a;
        int in3 = b;
        int in4 = c;
        a = a58;
        b = b58;
        c = c58;
        d = d58;
        e = e58;
        e += Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + m[58];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + m[59];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + m[60];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + m[61];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + m[62];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + m[63];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + m[64];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + m[65];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + m[66];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + m[67];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + m[68];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + m[69];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + m[70];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + m[71];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + m[72];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + m[73];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + m[74];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + m[75];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + m[76];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + m[77];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + m[78];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + m[79];
        a = Integer.rotateLeft(a, 30);
        return in0 + d == h0 && in1 + e == h1 && in2 + a == h2 && in3 + b == h3 && in4 + c == h4;
    }

    /** Recompression from step 65: see {@link #recompressionCollides(int)}. */
    private boolean recompressionFrom65Collides(int[] m) {
        int a = a65;
        int b = b65;
        int c = c65;
        int d = d65;
        int e = e65;
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + m[64];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + m[63];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + m[62];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + m[61];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + m[60];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + m[59];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + m[58];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + m[57];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + m[56];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + m[55];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + m[54];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + m[53];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + m[52];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + m[51];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + m[50];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + m[49];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + m[48];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + m[47];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + m[46];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + m[45];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + ((c & d) | (e & (c | d))) + 0x8F1BBCDC + m[44];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + ((d & e) | (a & (d | e))) + 0x8F1BBCDC + m[43];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + ((e & a) | (b & (e | a))) + 0x8F1BBCDC + m[42];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + ((a & b) | (c & (a | b))) + 0x8F1BBCDC + m[41];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + ((b & c) | (d & (b | c))) + 0x8F1BBCDC + m[40];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + m[39];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + m[38];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + m[37];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + m[36];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + m[35];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + m[34];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + m[33];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + m[32];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + m[31];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + m[30];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + m[29];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + m[28];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + m[27];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + m[26];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + m[25];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0x6ED9EBA1 + m[24];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0x6ED9EBA1 + m[23];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0x6ED9EBA1 + m[22];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0x6ED9EBA1 + m[21];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0x6ED9EBA1 + m[20];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + m[19];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + m[18];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + m[17];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + m[16];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + m[15];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + m[14];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + m[13];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + m[12];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + m[11];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + m[10];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + m[9];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + m[8];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + m[7];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + m[6];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + m[5];
        c = Integer.rotateRight(c, 30);
        a -= Integer.rotateLeft(b, 5) + (e ^ (c & (d ^ e))) + 0x5A827999 + m[4];
        d = Integer.rotateRight(d, 30);
        b -= Integer.rotateLeft(c, 5) + (a ^ (d & (e ^ a))) + 0x5A827999 + m[3];
        e = Integer.rotateRight(e, 30);
        c -= Integer.rotateLeft(d, 5) + (b ^ (e & (a ^ b))) + 0x5A827999 + m[2];
        a = Integer.rotateRight(a, 30);
        d -= Integer.rotateLeft(e, 5) + (c ^ (a & (b ^ c))) + 0x5A827999 + m[1];
        b = Integer.rotateRight(b, 30);
        e -= Integer.rotateLeft(a, 5) + (d ^ (b & (c ^ d))) + 0x5A827999 + m[0];
        int in0 = a;
        int in1 = b;
        int in2 = c;
        int in3 = d;
        int in4 = e;
        a = a65;
        b = b65;
        c = c65;
        d = d65;
        e = e65;
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + m[65];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + m[66];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + m[67];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + m[68];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + m[69];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + m[70];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + m[71];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + m[72];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + m[73];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + m[74];
        c = Integer.rotateLeft(c, 30);
        e += Integer.rotateLeft(a, 5) + (b ^ c ^ d) + 0xCA62C1D6 + m[75];
        b = Integer.rotateLeft(b, 30);
        d += Integer.rotateLeft(e, 5) + (a ^ b ^ c) + 0xCA62C1D6 + m[76];
        a = Integer.rotateLeft(a, 30);
        c += Integer.rotateLeft(d, 5) + (e ^ a ^ b) + 0xCA62C1D6 + m[77];
        e = Integer.rotateLeft(e, 30);
        b += Integer.rotateLeft(c, 5) + (d ^ e ^ a) + 0xCA62C1D6 + m[78];
        d = Integer.rotateLeft(d, 30);
        a += Integer.rotateLeft(b, 5) + (c ^ d ^ e) + 0xCA62C1D6 + m[79];
        c = Integer.rotateLeft(c, 30);
        return in0 + a == h0 && in1 + b == h1 && in2 + c == h2 && in3 + d == h3 && in4 + e == h4;
    }
}
