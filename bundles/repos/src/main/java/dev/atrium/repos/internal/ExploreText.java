package dev.atrium.repos.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What explore's index computes as PostgreSQL would: a repository's lexemes and their weights read from its stored
 * {@code tsvector}, a query's lexemes from {@code plainto_tsquery}'s text, {@code ts_rank}'s formula for the queries
 * explore makes (two groups of words OR'd), and {@code pg_trgm}'s trigrams and similarity. {@code ExploreTextTest}
 * holds each against PostgreSQL's own answers.
 */
final class ExploreText {

    /** {@code ts_rank}'s default weights, by weight D, C, B, A. */
    private static final float[] WEIGHTS = {0.1f, 0.2f, 0.4f, 1.0f};

    /** pi^2/6: the limit of sum(1/i^2), by which ts_rank scales a lexeme's occurrences. */
    private static final double ZETA2 = 1.64493406685;

    private static final byte[] NO_POSITIONS = new byte[0];

    private ExploreText() {}

    /**
     * The lexemes of a {@code tsvector}'s text ({@code 'fast':1A,5C 'parser':2A 'topic'}), each with the weights of
     * its positions in position order (3 for A down to 0 for D; none for a lexeme stored without positions).
     */
    static Map<String, byte[]> lexemes(String tsvector) {
        Map<String, byte[]> out = new LinkedHashMap<>();
        if (tsvector == null) {
            return out;
        }
        int i = 0;
        int n = tsvector.length();
        StringBuilder word = new StringBuilder();
        while (i < n) {
            while (i < n && tsvector.charAt(i) == ' ') {
                i++;
            }
            if (i >= n || tsvector.charAt(i) != '\'') {
                break;
            }
            word.setLength(0);
            i = quoted(tsvector, i + 1, word);
            byte[] weights = NO_POSITIONS;
            if (i < n && tsvector.charAt(i) == ':') {
                i++;
                byte[] buf = new byte[8];
                int count = 0;
                while (i < n && tsvector.charAt(i) != ' ') {
                    while (i < n && Character.isDigit(tsvector.charAt(i))) {
                        i++;
                    }
                    byte w = 0;
                    if (i < n && tsvector.charAt(i) >= 'A' && tsvector.charAt(i) <= 'D') {
                        w = (byte) ('D' - tsvector.charAt(i));
                        i++;
                    }
                    if (count == buf.length) {
                        buf = Arrays.copyOf(buf, count * 2);
                    }
                    buf[count++] = w;
                    if (i < n && tsvector.charAt(i) == ',') {
                        i++;
                    }
                }
                weights = Arrays.copyOf(buf, count);
            }
            out.put(word.toString(), weights);
        }
        return out;
    }

    /**
     * The lexemes of a {@code plainto_tsquery} answer's text ({@code 'fast' & 'parser'}): plainto_tsquery only ever
     * joins its words with AND, so the lexemes are the whole of it. An empty query (only stop words) has none.
     */
    static List<String> queryLexemes(String tsquery) {
        List<String> out = new ArrayList<>();
        if (tsquery == null) {
            return out;
        }
        int i = 0;
        int n = tsquery.length();
        while (i < n) {
            int open = tsquery.indexOf('\'', i);
            if (open < 0) {
                break;
            }
            StringBuilder word = new StringBuilder();
            i = quoted(tsquery, open + 1, word);
            if (!out.contains(word.toString())) {
                out.add(word.toString());
            }
        }
        return out;
    }

    /**
     * Reads a lexeme as PostgreSQL quotes it in a {@code tsvector} or {@code tsquery} text, from just after its opening
     * quote ({@code ''} is a quote, a backslash escapes the next character) into {@code word}; answers where the text
     * goes on after the closing quote.
     */
    private static int quoted(String text, int from, StringBuilder word) {
        int i = from;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (c == '\'' && i + 1 < n && text.charAt(i + 1) == '\'') {
                word.append('\'');
                i += 2;
            } else if (c == '\\' && i + 1 < n) {
                word.append(text.charAt(i + 1));
                i += 2;
            } else if (c == '\'') {
                return i + 1;
            } else {
                word.append(c);
                i++;
            }
        }
        return i;
    }

    /**
     * {@code ts_rank(vector, query)} with the default weights for a query whose top operator is OR (explore's
     * {@code plainto_tsquery('simple', q) || plainto_tsquery('english', q)}): PostgreSQL's {@code calc_rank_or}, given
     * the weights of each distinct query lexeme the document holds (null where it holds none) and their number.
     */
    static float rankOr(byte[][] weightsOfEachLexeme, int distinctLexemes) {
        int[] from = new int[weightsOfEachLexeme.length];
        int[] to = new int[weightsOfEachLexeme.length];
        for (int i = 0; i < to.length; i++) {
            to[i] = weightsOfEachLexeme[i] == null ? 0 : weightsOfEachLexeme[i].length;
        }
        return rankOr(weightsOfEachLexeme, from, to, distinctLexemes);
    }

    /** {@link #rankOr(byte[][], int)} over slices: lexeme i's weights are {@code weights[i][from[i]..to[i])}. */
    static float rankOr(byte[][] weights, int[] from, int[] to, int distinctLexemes) {
        float res = 0f;
        for (int i = 0; i < weights.length; i++) {
            byte[] pos = weights[i];
            if (pos == null) {
                continue;
            }
            int npos = to[i] - from[i];
            float resj = 0f;
            float wjm = -1f;
            int jm = 0;
            for (int j = 0; j < Math.max(1, npos); j++) {
                // a lexeme without positions counts once, at weight D, as in PostgreSQL
                float wpos = WEIGHTS[npos == 0 ? 0 : pos[from[i] + j]];
                resj = resj + wpos / ((j + 1) * (j + 1));
                if (wpos > wjm) {
                    wjm = wpos;
                    jm = j;
                }
            }
            res = (float) (res + (wjm + resj - wjm / ((jm + 1) * (jm + 1))) / ZETA2);
        }
        if (distinctLexemes > 0) {
            res = res / distinctLexemes;
        }
        return res;
    }

    /**
     * pg_trgm's trigrams of a string, sorted and unique: its words (runs of letters and digits), lower-cased, each
     * padded with two blanks before and one after, cut in threes. Each trigram is a long made of its three characters.
     */
    static long[] trigrams(String s) {
        String lower = s.toLowerCase(Locale.ROOT);
        int n = lower.length();
        long[] out = new long[n * 3 + 3];
        int count = 0;
        int i = 0;
        while (i < n) {
            while (i < n && !Character.isLetterOrDigit(lower.charAt(i))) {
                i++;
            }
            int start = i;
            while (i < n && Character.isLetterOrDigit(lower.charAt(i))) {
                i++;
            }
            if (i == start) {
                break;
            }
            char a = ' ';
            char b = ' ';
            for (int k = start; k <= i; k++) {
                char c = k < i ? lower.charAt(k) : ' ';
                if (count == out.length) {
                    out = Arrays.copyOf(out, count * 2);
                }
                // mixed (a bijection, so still one value per trigram): the three characters as they are collide in
                // Long's hash and the index's map of trigrams degrades into trees
                out[count++] = (((long) a << 32) | ((long) b << 16) | c) * 0x9E3779B97F4A7C15L;
                a = b;
                b = c;
            }
        }
        long[] sorted = Arrays.copyOf(out, count);
        Arrays.sort(sorted);
        int unique = 0;
        for (int k = 0; k < sorted.length; k++) {
            if (k == 0 || sorted[k] != sorted[k - 1]) {
                sorted[unique++] = sorted[k];
            }
        }
        return Arrays.copyOf(sorted, unique);
    }

    /** pg_trgm's {@code similarity}: trigrams shared over trigrams of either, 0 when either has none. */
    static float similarity(long[] a, long[] b) {
        if (a.length == 0 || b.length == 0) {
            return 0f;
        }
        int shared = 0;
        int i = 0;
        int j = 0;
        while (i < a.length && j < b.length) {
            if (a[i] == b[j]) {
                shared++;
                i++;
                j++;
            } else if (a[i] < b[j]) {
                i++;
            } else {
                j++;
            }
        }
        return similarity(shared, a.length, b.length);
    }

    static float similarity(int shared, int lengthA, int lengthB) {
        return lengthA == 0 || lengthB == 0 ? 0f : ((float) shared) / ((float) (lengthA + lengthB - shared));
    }

    /** pg_trgm's default threshold for {@code %}. */
    static final float LIKENESS = 0.3f;
}
