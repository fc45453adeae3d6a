package dev.atrium.vector;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;
import org.apache.lucene.util.Constants;

/**
 * Float vector arithmetic on the JDK's Vector API ({@code jdk.incubator.vector}, an incubator module on Java 17 that
 * the JVM must be started with: {@code --add-modules jdk.incubator.vector}). The only class of this bundle that names
 * the module: {@link VectorScorers} loads it reflectively and falls back to Lucene's scalar code when it cannot.
 * <p>
 * The results are Lucene's ({@code VectorUtil.dotProduct}, {@code cosine}, {@code squareDistance}) up to float
 * rounding: the same sums, added in another order. Loops run over the widest vectors the CPU has (AVX-512: 16
 * floats), four accumulators at a time so the FMA latency is hidden, then one vector at a time, then a scalar tail.
 */
final class SimdVectors {

    static final VectorSpecies<Float> SPECIES = FloatVector.SPECIES_PREFERRED;
    /** Bytes with as many lanes as {@link #SPECIES} (8 bytes for AVX2's 8 floats): an int8 vector widened to floats. */
    static final VectorSpecies<Byte> BYTE_SPECIES =
            VectorSpecies.of(byte.class, VectorShape.forBitSize(SPECIES.length() * Byte.SIZE));
    /** FMA where the CPU's vector FMA is fast (Lucene's own test), else a multiply and an add. */
    private static final boolean FMA = Constants.HAS_FAST_VECTOR_FMA;

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /** A float of a vector's bytes as Lucene stores them (little-endian). */
    private static final VarHandle FLOAT_LE = MethodHandles.byteArrayViewVarHandle(float[].class, LE);

    private SimdVectors() {}

    /** Bits per vector register used, or why this class must not be used (an exception). */
    static int bits() {
        int bits = SPECIES.vectorBitSize();
        if (bits < 128 || VectorShape.preferredShape().vectorBitSize() < 128) {
            throw new UnsupportedOperationException("the CPU's vectors are narrower than 128 bits");
        }
        return bits;
    }

    private static FloatVector fma(FloatVector a, FloatVector b, FloatVector acc) {
        return FMA ? a.fma(b, acc) : acc.add(a.mul(b));
    }

    private static float fma(float a, float b, float acc) {
        return FMA ? Math.fma(a, b, acc) : acc + a * b;
    }

    static float dotProduct(float[] a, float[] b) {
        int n = a.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        if (n >= step) {
            FloatVector acc1 = FloatVector.zero(SPECIES);
            FloatVector acc2 = FloatVector.zero(SPECIES);
            FloatVector acc3 = FloatVector.zero(SPECIES);
            FloatVector acc4 = FloatVector.zero(SPECIES);
            int bound4 = n - n % (4 * step);
            for (; i < bound4; i += 4 * step) {
                acc1 = fma(FloatVector.fromArray(SPECIES, a, i), FloatVector.fromArray(SPECIES, b, i), acc1);
                acc2 = fma(
                        FloatVector.fromArray(SPECIES, a, i + step), FloatVector.fromArray(SPECIES, b, i + step), acc2);
                acc3 = fma(
                        FloatVector.fromArray(SPECIES, a, i + 2 * step),
                        FloatVector.fromArray(SPECIES, b, i + 2 * step),
                        acc3);
                acc4 = fma(
                        FloatVector.fromArray(SPECIES, a, i + 3 * step),
                        FloatVector.fromArray(SPECIES, b, i + 3 * step),
                        acc4);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                acc1 = fma(FloatVector.fromArray(SPECIES, a, i), FloatVector.fromArray(SPECIES, b, i), acc1);
            }
            sum = acc1.add(acc2).add(acc3.add(acc4)).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            sum = fma(a[i], b[i], sum);
        }
        return sum;
    }

    static float squareDistance(float[] a, float[] b) {
        int n = a.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        if (n >= step) {
            FloatVector acc1 = FloatVector.zero(SPECIES);
            FloatVector acc2 = FloatVector.zero(SPECIES);
            FloatVector acc3 = FloatVector.zero(SPECIES);
            FloatVector acc4 = FloatVector.zero(SPECIES);
            int bound4 = n - n % (4 * step);
            for (; i < bound4; i += 4 * step) {
                FloatVector d1 = FloatVector.fromArray(SPECIES, a, i).sub(FloatVector.fromArray(SPECIES, b, i));
                FloatVector d2 =
                        FloatVector.fromArray(SPECIES, a, i + step).sub(FloatVector.fromArray(SPECIES, b, i + step));
                FloatVector d3 = FloatVector.fromArray(SPECIES, a, i + 2 * step)
                        .sub(FloatVector.fromArray(SPECIES, b, i + 2 * step));
                FloatVector d4 = FloatVector.fromArray(SPECIES, a, i + 3 * step)
                        .sub(FloatVector.fromArray(SPECIES, b, i + 3 * step));
                acc1 = fma(d1, d1, acc1);
                acc2 = fma(d2, d2, acc2);
                acc3 = fma(d3, d3, acc3);
                acc4 = fma(d4, d4, acc4);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                FloatVector d = FloatVector.fromArray(SPECIES, a, i).sub(FloatVector.fromArray(SPECIES, b, i));
                acc1 = fma(d, d, acc1);
            }
            sum = acc1.add(acc2).add(acc3.add(acc4)).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            float d = a[i] - b[i];
            sum = fma(d, d, sum);
        }
        return sum;
    }

    /** Lucene's cosine: the dot product over the square root of both squared norms (in double). */
    static float cosine(float[] a, float[] b) {
        int n = a.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        float normA = 0;
        float normB = 0;
        if (n >= step) {
            FloatVector dot1 = FloatVector.zero(SPECIES);
            FloatVector dot2 = FloatVector.zero(SPECIES);
            FloatVector na1 = FloatVector.zero(SPECIES);
            FloatVector na2 = FloatVector.zero(SPECIES);
            FloatVector nb1 = FloatVector.zero(SPECIES);
            FloatVector nb2 = FloatVector.zero(SPECIES);
            int bound2 = n - n % (2 * step);
            for (; i < bound2; i += 2 * step) {
                FloatVector a1 = FloatVector.fromArray(SPECIES, a, i);
                FloatVector b1 = FloatVector.fromArray(SPECIES, b, i);
                FloatVector a2 = FloatVector.fromArray(SPECIES, a, i + step);
                FloatVector b2 = FloatVector.fromArray(SPECIES, b, i + step);
                dot1 = fma(a1, b1, dot1);
                dot2 = fma(a2, b2, dot2);
                na1 = fma(a1, a1, na1);
                na2 = fma(a2, a2, na2);
                nb1 = fma(b1, b1, nb1);
                nb2 = fma(b2, b2, nb2);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                FloatVector a1 = FloatVector.fromArray(SPECIES, a, i);
                FloatVector b1 = FloatVector.fromArray(SPECIES, b, i);
                dot1 = fma(a1, b1, dot1);
                na1 = fma(a1, a1, na1);
                nb1 = fma(b1, b1, nb1);
            }
            sum = dot1.add(dot2).reduceLanes(VectorOperators.ADD);
            normA = na1.add(na2).reduceLanes(VectorOperators.ADD);
            normB = nb1.add(nb2).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            sum = fma(a[i], b[i], sum);
            normA = fma(a[i], a[i], normA);
            normB = fma(b[i], b[i], normB);
        }
        return (float) (sum / Math.sqrt((double) normA * (double) normB));
    }

    /**
     * The cosine of a query whose squared norm is known ({@link #dotProduct(float[], float[])} of it with itself)
     * and a vector: the vector's norm and the dot product in one pass, a third less work than {@link #cosine}.
     */
    static float cosine(float[] query, float queryNorm, float[] b) {
        int n = query.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        float normB = 0;
        if (n >= step) {
            FloatVector dot1 = FloatVector.zero(SPECIES);
            FloatVector dot2 = FloatVector.zero(SPECIES);
            FloatVector nb1 = FloatVector.zero(SPECIES);
            FloatVector nb2 = FloatVector.zero(SPECIES);
            int bound2 = n - n % (2 * step);
            for (; i < bound2; i += 2 * step) {
                FloatVector a1 = FloatVector.fromArray(SPECIES, query, i);
                FloatVector b1 = FloatVector.fromArray(SPECIES, b, i);
                FloatVector a2 = FloatVector.fromArray(SPECIES, query, i + step);
                FloatVector b2 = FloatVector.fromArray(SPECIES, b, i + step);
                dot1 = fma(a1, b1, dot1);
                dot2 = fma(a2, b2, dot2);
                nb1 = fma(b1, b1, nb1);
                nb2 = fma(b2, b2, nb2);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                FloatVector a1 = FloatVector.fromArray(SPECIES, query, i);
                FloatVector b1 = FloatVector.fromArray(SPECIES, b, i);
                dot1 = fma(a1, b1, dot1);
                nb1 = fma(b1, b1, nb1);
            }
            sum = dot1.add(dot2).reduceLanes(VectorOperators.ADD);
            normB = nb1.add(nb2).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            sum = fma(query[i], b[i], sum);
            normB = fma(b[i], b[i], normB);
        }
        return (float) (sum / Math.sqrt((double) queryNorm * (double) normB));
    }

    // The same, with the second vector as the bytes Lucene stores (little-endian floats): a graph search reads them
    // from the index file into a byte array, which costs less than Lucene's float read (a FloatBuffer view of the
    // mapped file is made again for every vector read).

    private static FloatVector load(byte[] b, int floatIndex) {
        return FloatVector.fromByteArray(SPECIES, b, floatIndex * Float.BYTES, LE);
    }

    private static float floatAt(byte[] b, int floatIndex) {
        return (float) FLOAT_LE.get(b, floatIndex * Float.BYTES);
    }

    static float dotProduct(float[] a, byte[] b) {
        int n = a.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        if (n >= step) {
            FloatVector acc1 = FloatVector.zero(SPECIES);
            FloatVector acc2 = FloatVector.zero(SPECIES);
            FloatVector acc3 = FloatVector.zero(SPECIES);
            FloatVector acc4 = FloatVector.zero(SPECIES);
            int bound4 = n - n % (4 * step);
            for (; i < bound4; i += 4 * step) {
                acc1 = fma(FloatVector.fromArray(SPECIES, a, i), load(b, i), acc1);
                acc2 = fma(FloatVector.fromArray(SPECIES, a, i + step), load(b, i + step), acc2);
                acc3 = fma(FloatVector.fromArray(SPECIES, a, i + 2 * step), load(b, i + 2 * step), acc3);
                acc4 = fma(FloatVector.fromArray(SPECIES, a, i + 3 * step), load(b, i + 3 * step), acc4);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                acc1 = fma(FloatVector.fromArray(SPECIES, a, i), load(b, i), acc1);
            }
            sum = acc1.add(acc2).add(acc3.add(acc4)).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            sum = fma(a[i], floatAt(b, i), sum);
        }
        return sum;
    }

    static float squareDistance(float[] a, byte[] b) {
        int n = a.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        if (n >= step) {
            FloatVector acc1 = FloatVector.zero(SPECIES);
            FloatVector acc2 = FloatVector.zero(SPECIES);
            FloatVector acc3 = FloatVector.zero(SPECIES);
            FloatVector acc4 = FloatVector.zero(SPECIES);
            int bound4 = n - n % (4 * step);
            for (; i < bound4; i += 4 * step) {
                FloatVector d1 = FloatVector.fromArray(SPECIES, a, i).sub(load(b, i));
                FloatVector d2 = FloatVector.fromArray(SPECIES, a, i + step).sub(load(b, i + step));
                FloatVector d3 = FloatVector.fromArray(SPECIES, a, i + 2 * step).sub(load(b, i + 2 * step));
                FloatVector d4 = FloatVector.fromArray(SPECIES, a, i + 3 * step).sub(load(b, i + 3 * step));
                acc1 = fma(d1, d1, acc1);
                acc2 = fma(d2, d2, acc2);
                acc3 = fma(d3, d3, acc3);
                acc4 = fma(d4, d4, acc4);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                FloatVector d = FloatVector.fromArray(SPECIES, a, i).sub(load(b, i));
                acc1 = fma(d, d, acc1);
            }
            sum = acc1.add(acc2).add(acc3.add(acc4)).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            float d = a[i] - floatAt(b, i);
            sum = fma(d, d, sum);
        }
        return sum;
    }

    static float cosine(float[] query, float queryNorm, byte[] b) {
        int n = query.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        float normB = 0;
        if (n >= step) {
            FloatVector dot1 = FloatVector.zero(SPECIES);
            FloatVector dot2 = FloatVector.zero(SPECIES);
            FloatVector nb1 = FloatVector.zero(SPECIES);
            FloatVector nb2 = FloatVector.zero(SPECIES);
            int bound2 = n - n % (2 * step);
            for (; i < bound2; i += 2 * step) {
                FloatVector a1 = FloatVector.fromArray(SPECIES, query, i);
                FloatVector b1 = load(b, i);
                FloatVector a2 = FloatVector.fromArray(SPECIES, query, i + step);
                FloatVector b2 = load(b, i + step);
                dot1 = fma(a1, b1, dot1);
                dot2 = fma(a2, b2, dot2);
                nb1 = fma(b1, b1, nb1);
                nb2 = fma(b2, b2, nb2);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                FloatVector a1 = FloatVector.fromArray(SPECIES, query, i);
                FloatVector b1 = load(b, i);
                dot1 = fma(a1, b1, dot1);
                nb1 = fma(b1, b1, nb1);
            }
            sum = dot1.add(dot2).reduceLanes(VectorOperators.ADD);
            normB = nb1.add(nb2).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            float v = floatAt(b, i);
            sum = fma(query[i], v, sum);
            normB = fma(v, v, normB);
        }
        return (float) (sum / Math.sqrt((double) queryNorm * (double) normB));
    }

    // int8 (scalar-quantized) vectors: each byte a signed integer, widened to floats lane for lane and multiplied in
    // float. A quantized vector is a quarter of a float one's bytes, and a graph walk's time is mostly waiting for the
    // visited vectors' bytes. Two int8 vectors are multiplied as one widened to a float[] once and the other int8
    // (widening both on every call measured ~30x slower on JDK 17): products of two 7-bit values summed over up to
    // 1,040 dimensions are exact integers in float (< 2^24); beyond, only the last bits round. These loops repeat the
    // float-bytes ones above with another lane loader on purpose: each stays one straight loop that C2 compiles alone,
    // with no loader passed in on the hot path of a graph walk.

    private static FloatVector int8(byte[] b, int i) {
        return (FloatVector) ByteVector.fromArray(BYTE_SPECIES, b, i).convertShape(VectorOperators.B2F, SPECIES, 0);
    }

    /** Σ a[i]·b[i], b's bytes read as signed integers. */
    static float dotProductInt8(float[] a, byte[] b) {
        int n = a.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        if (n >= step) {
            FloatVector acc1 = FloatVector.zero(SPECIES);
            FloatVector acc2 = FloatVector.zero(SPECIES);
            FloatVector acc3 = FloatVector.zero(SPECIES);
            FloatVector acc4 = FloatVector.zero(SPECIES);
            int bound4 = n - n % (4 * step);
            for (; i < bound4; i += 4 * step) {
                acc1 = fma(FloatVector.fromArray(SPECIES, a, i), int8(b, i), acc1);
                acc2 = fma(FloatVector.fromArray(SPECIES, a, i + step), int8(b, i + step), acc2);
                acc3 = fma(FloatVector.fromArray(SPECIES, a, i + 2 * step), int8(b, i + 2 * step), acc3);
                acc4 = fma(FloatVector.fromArray(SPECIES, a, i + 3 * step), int8(b, i + 3 * step), acc4);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                acc1 = fma(FloatVector.fromArray(SPECIES, a, i), int8(b, i), acc1);
            }
            sum = acc1.add(acc2).add(acc3.add(acc4)).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            sum = fma(a[i], b[i], sum);
        }
        return sum;
    }

    /** Σ (a[i] - b[i])², b's bytes read as signed integers. */
    static float squareDistanceInt8(float[] a, byte[] b) {
        int n = a.length;
        int step = SPECIES.length();
        int i = 0;
        float sum = 0;
        if (n >= step) {
            FloatVector acc1 = FloatVector.zero(SPECIES);
            FloatVector acc2 = FloatVector.zero(SPECIES);
            FloatVector acc3 = FloatVector.zero(SPECIES);
            FloatVector acc4 = FloatVector.zero(SPECIES);
            int bound4 = n - n % (4 * step);
            for (; i < bound4; i += 4 * step) {
                FloatVector d1 = FloatVector.fromArray(SPECIES, a, i).sub(int8(b, i));
                FloatVector d2 = FloatVector.fromArray(SPECIES, a, i + step).sub(int8(b, i + step));
                FloatVector d3 = FloatVector.fromArray(SPECIES, a, i + 2 * step).sub(int8(b, i + 2 * step));
                FloatVector d4 = FloatVector.fromArray(SPECIES, a, i + 3 * step).sub(int8(b, i + 3 * step));
                acc1 = fma(d1, d1, acc1);
                acc2 = fma(d2, d2, acc2);
                acc3 = fma(d3, d3, acc3);
                acc4 = fma(d4, d4, acc4);
            }
            int bound = SPECIES.loopBound(n);
            for (; i < bound; i += step) {
                FloatVector d = FloatVector.fromArray(SPECIES, a, i).sub(int8(b, i));
                acc1 = fma(d, d, acc1);
            }
            sum = acc1.add(acc2).add(acc3.add(acc4)).reduceLanes(VectorOperators.ADD);
        }
        for (; i < n; i++) {
            float d = a[i] - b[i];
            sum = fma(d, d, sum);
        }
        return sum;
    }
}
