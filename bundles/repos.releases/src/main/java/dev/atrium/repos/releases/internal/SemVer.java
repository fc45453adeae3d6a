package dev.atrium.repos.releases.internal;

import java.math.BigInteger;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A semantic version (semver.org 2.0.0) named by a release tag, a leading {@code v} allowed. Ordered by precedence:
 * numbers numerically, a prerelease below its release, prerelease identifiers compared one by one (numeric ones
 * numerically and below alphanumeric ones); build metadata does not count.
 */
record SemVer(BigInteger major, BigInteger minor, BigInteger patch, List<String> prerelease, String text)
        implements Comparable<SemVer> {

    private static final Pattern SEMVER = Pattern.compile("^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)"
            + "(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
            + "(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$");

    /** The version {@code tag} names, or empty when it names none. */
    static Optional<SemVer> parse(String tag) {
        if (tag == null || tag.length() > 250) {
            return Optional.empty();
        }
        Matcher m = SEMVER.matcher(tag);
        if (!m.matches()) {
            return Optional.empty();
        }
        return Optional.of(new SemVer(
                new BigInteger(m.group(1)),
                new BigInteger(m.group(2)),
                new BigInteger(m.group(3)),
                m.group(4) == null ? List.of() : List.of(m.group(4).split("\\.")),
                tag.startsWith("v") ? tag.substring(1) : tag));
    }

    boolean isPrerelease() {
        return !prerelease.isEmpty();
    }

    @Override
    public int compareTo(SemVer o) {
        int c = major.compareTo(o.major);
        if (c == 0) {
            c = minor.compareTo(o.minor);
        }
        if (c == 0) {
            c = patch.compareTo(o.patch);
        }
        if (c != 0) {
            return c;
        }
        if (prerelease.isEmpty() || o.prerelease.isEmpty()) {
            return Boolean.compare(prerelease.isEmpty(), o.prerelease.isEmpty());
        }
        for (int i = 0; i < Math.min(prerelease.size(), o.prerelease.size()); i++) {
            c = identifier(prerelease.get(i), o.prerelease.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(prerelease.size(), o.prerelease.size());
    }

    private static int identifier(String a, String b) {
        boolean an = a.chars().allMatch(Character::isDigit);
        boolean bn = b.chars().allMatch(Character::isDigit);
        if (an && bn) {
            return new BigInteger(a).compareTo(new BigInteger(b));
        }
        if (an != bn) {
            return an ? -1 : 1;
        }
        return a.compareTo(b);
    }
}
