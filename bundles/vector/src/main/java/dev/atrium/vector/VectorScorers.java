package dev.atrium.vector;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.lucene.codecs.hnsw.FlatVectorScorerUtil;
import org.apache.lucene.codecs.hnsw.FlatVectorsScorer;
import org.apache.lucene.codecs.lucene99.Lucene99ScalarQuantizedVectorScorer;
import org.apache.lucene.util.Constants;
import org.slf4j.LoggerFactory;

/**
 * Which flat vector scorer the HNSW format uses: {@link SimdFlatVectorsScorer} (the JDK's Vector API) when the JVM
 * has the {@code jdk.incubator.vector} module and C2, else Lucene's default (scalar on Java 17). Chosen once per
 * class loader (this bundle's revision) and logged once, as Lucene chooses its own vectorization provider: the
 * format is also made by Lucene's SPI through its no-argument constructor, where nothing can be passed in. Never
 * fails: whatever goes wrong while trying the SIMD scorer leaves Lucene's.
 */
public final class VectorScorers {

    /** The scorer and how a person reads it: {@code simd (...)} or {@code scalar (...)} with the reason. */
    public record Choice(FlatVectorsScorer scorer, FlatVectorsScorer quantized, boolean simd, String description) {}

    static final String MODULE = "jdk.incubator.vector";

    private static final Choice CHOICE = choose();

    private VectorScorers() {}

    public static Choice choice() {
        return CHOICE;
    }

    public static FlatVectorsScorer scorer() {
        return CHOICE.scorer();
    }

    /** The scorer of int8 (scalar-quantized) vectors: {@link SimdQuantizedVectorsScorer}, or Lucene's. */
    public static FlatVectorsScorer quantizedScorer() {
        return CHOICE.quantized();
    }

    private static Choice choose() {
        Choice c;
        String why = unusable();
        if (why == null) {
            try {
                var lookup = MethodHandles.lookup();
                Class<?> cls = Class.forName(
                        VectorScorers.class.getPackageName() + ".SimdFlatVectorsScorer",
                        true,
                        VectorScorers.class.getClassLoader());
                String species = (String) lookup.findStatic(cls, "check", MethodType.methodType(String.class))
                        .invoke();
                FlatVectorsScorer simd =
                        (FlatVectorsScorer) lookup.findConstructor(cls, MethodType.methodType(void.class))
                                .invoke();
                Class<?> q = Class.forName(
                        VectorScorers.class.getPackageName() + ".SimdQuantizedVectorsScorer",
                        true,
                        VectorScorers.class.getClassLoader());
                FlatVectorsScorer quantized = (FlatVectorsScorer)
                        lookup.findConstructor(q, MethodType.methodType(void.class, FlatVectorsScorer.class))
                                .invoke(simd);
                c = new Choice(simd, quantized, true, "simd (" + MODULE + ", " + species + ")");
            } catch (Throwable e) { // NoClassDefFoundError when the package is not visible to the bundle, and anything
                // else
                c = scalar("the Vector API failed: " + e);
            }
        } else {
            c = scalar(why);
        }
        String message = "vectorize: HNSW distances computed by the " + c.description();
        if (c.simd()) {
            LoggerFactory.getLogger(VectorScorers.class).info(message);
        } else {
            LoggerFactory.getLogger(VectorScorers.class).warn(message);
        }
        return c;
    }

    private static Choice scalar(String why) {
        return new Choice(
                FlatVectorScorerUtil.getLucene99FlatVectorsScorer(),
                new Lucene99ScalarQuantizedVectorScorer(FlatVectorScorerUtil.getLucene99FlatVectorsScorer()),
                false,
                "scalar (Lucene's default scorer; " + why + ")");
    }

    /** Why the Vector API must not be used here, or null. */
    private static String unusable() {
        if (ModuleLayer.boot().findModule(MODULE).isEmpty()) {
            return "the JVM was started without --add-modules " + MODULE;
        }
        if (!Constants.IS_HOTSPOT_VM || Constants.IS_JVMCI_VM) {
            return "not a HotSpot JVM with C2";
        }
        if (Constants.IS_CLIENT_VM) {
            return "the C2 compiler is off (the Vector API is slower than scalar code without it)";
        }
        return null;
    }
}
