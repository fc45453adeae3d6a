package dev.atrium.kernel.internal.auth;

import dev.atrium.kernel.api.ApiException;
import dev.atrium.kernel.api.Caller;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;

/** The scopes a token may carry. */
public final class Scopes {

    public static final Set<String> KNOWN = Set.of(
            Caller.ALL_SCOPES,
            "threads:read",
            "threads:write",
            "runs:read",
            "runs:write",
            "files:read",
            "files:write",
            "repos:read",
            "repos:write",
            "account:read");

    private Scopes() {}

    /** Parses a space- or comma-separated scope string; 400 naming the first unknown scope. */
    public static Set<String> parse(String value) {
        Set<String> out = new LinkedHashSet<>();
        for (String s : value.trim().split("[\\s,]+")) {
            if (s.isEmpty()) {
                continue;
            }
            if (!KNOWN.contains(s)) {
                throw ApiException.badRequest("unknown scope '" + s + "'; known scopes: "
                        + String.join(" ", KNOWN.stream().sorted().toList()));
            }
            out.add(s);
        }
        if (out.isEmpty()) {
            throw ApiException.badRequest("scopes must name at least one scope, or '*'");
        }
        return out;
    }

    public static Set<String> fromColumn(String value) {
        return new LinkedHashSet<>(Arrays.asList(value.split(" ")));
    }
}
