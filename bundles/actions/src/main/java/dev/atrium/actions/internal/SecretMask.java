package dev.atrium.actions.internal;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Hides secret values in log text: each value, its URL-encoded form, and its base64 forms at the three alignments a
 * value can have inside a longer encoded text (what GitHub's runner masks too). Longer forms are replaced first, so a
 * value inside another one's encoding is never half-hidden.
 */
final class SecretMask {

    static final String MASK = "***";

    private final List<String> forms;

    SecretMask(Collection<String> values) {
        Set<String> all = new LinkedHashSet<>();
        for (String v : values) {
            if (v == null || v.isBlank()) {
                continue;
            }
            all.add(v);
            for (String line : v.split("\\R")) {
                if (line.length() >= 3) {
                    all.add(line); // a multi-line secret printed line by line
                }
            }
            all.add(URLEncoder.encode(v, StandardCharsets.UTF_8));
            all.addAll(base64Forms(v.getBytes(StandardCharsets.UTF_8)));
        }
        List<String> sorted = new ArrayList<>(all);
        sorted.removeIf(s -> s.length() < 3 && !values.contains(s));
        sorted.sort(Comparator.comparingInt(String::length).reversed());
        this.forms = List.copyOf(sorted);
    }

    static List<String> base64Forms(byte[] value) {
        List<String> out = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            byte[] shifted = new byte[k + value.length];
            System.arraycopy(value, 0, shifted, k, value.length);
            String enc = Base64.getEncoder().encodeToString(shifted);
            int from = (8 * k + 5) / 6;
            int to = (8 * (k + value.length)) / 6;
            if (to - from >= 4) {
                out.add(enc.substring(from, to));
            }
        }
        return out;
    }

    /**
     * Where {@code text}, a line still being written, may be cut so that no secret form is split: before the last
     * (longest form - 1) characters, and before any form that reaches past that point.
     */
    int safeCut(String text) {
        if (forms.isEmpty()) {
            return text.length();
        }
        int cut = Math.max(0, text.length() - (forms.get(0).length() - 1));
        for (boolean moved = true; moved; ) {
            moved = false;
            for (String f : forms) {
                for (int at = text.indexOf(f, Math.max(0, cut - f.length() + 1));
                        at >= 0 && at < cut;
                        at = text.indexOf(f, at + 1)) {
                    if (at + f.length() > cut) {
                        cut = at;
                        moved = true;
                    }
                }
            }
        }
        return cut;
    }

    /** The length of the longest form hidden (0 when there is none). */
    int longest() {
        return forms.isEmpty() ? 0 : forms.get(0).length();
    }

    boolean isEmpty() {
        return forms.isEmpty();
    }

    String apply(String text) {
        String out = text;
        for (String f : forms) {
            if (out.contains(f)) {
                out = out.replace(f, MASK);
            }
        }
        return out;
    }
}
