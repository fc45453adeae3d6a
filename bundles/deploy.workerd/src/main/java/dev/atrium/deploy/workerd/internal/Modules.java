package dev.atrium.deploy.workerd.internal;

import dev.atrium.deploy.api.DeploymentException;
import dev.atrium.deploy.api.DeploymentException.Kind;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * A worker-bundle artifact as workerd modules: one ES module (JavaScript text), or a ZIP archive of modules whose main
 * module is {@code index.js}, {@code worker.js} or {@code main.js} (the first present, at the archive's root).
 */
final class Modules {

    /** How workerd is told to read a module. */
    enum Type {
        ES("esModule"),
        COMMON_JS("commonJsModule"),
        TEXT("text"),
        DATA("data"),
        JSON("json"),
        WASM("wasm");

        final String capnpField;

        Type(String capnpField) {
            this.capnpField = capnpField;
        }
    }

    record Module(String name, Type type, byte[] content) {}

    static final List<String> MAIN_NAMES = List.of("index.js", "worker.js", "main.js");
    /** Names the provider's own wrapper modules use; an artifact may not. */
    static final String RESERVED_PREFIX = "__atrium";

    static final int MAX_ENTRIES = 2000;
    static final long MAX_TOTAL_BYTES = 64L << 20;

    private Modules() {}

    /** The artifact's modules, its main module first. */
    static List<Module> of(byte[] artifact) throws DeploymentException {
        if (artifact.length == 0) {
            throw new DeploymentException(Kind.INVALID, "the worker bundle is empty");
        }
        if (artifact.length > MAX_TOTAL_BYTES) {
            throw new DeploymentException(
                    Kind.INVALID, "the worker bundle is larger than " + (MAX_TOTAL_BYTES >> 20) + " MiB");
        }
        if (isZip(artifact)) {
            return fromZip(artifact);
        }
        utf8(artifact, "worker.js");
        return List.of(new Module("worker.js", Type.ES, artifact));
    }

    private static boolean isZip(byte[] b) {
        return b.length >= 4 && b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4;
    }

    private static List<Module> fromZip(byte[] artifact) throws DeploymentException {
        Map<String, Module> byName = new LinkedHashMap<>();
        long total = 0;
        try (ZipInputStream zip = new ZipInputStream(new ByteArrayInputStream(artifact), StandardCharsets.UTF_8)) {
            ZipEntry entry;
            while ((entry = zip.getNextEntry()) != null) {
                if (entry.isDirectory()) {
                    continue;
                }
                String name = entry.getName();
                if (name.startsWith("./")) {
                    name = name.substring(2);
                }
                checkName(name);
                if (byName.size() >= MAX_ENTRIES) {
                    throw new DeploymentException(
                            Kind.INVALID, "the bundle archive has more than " + MAX_ENTRIES + " files");
                }
                byte[] content = readAtMost(zip, MAX_TOTAL_BYTES - total);
                if (content == null) {
                    throw new DeploymentException(
                            Kind.INVALID,
                            "the bundle archive unpacks to more than " + (MAX_TOTAL_BYTES >> 20) + " MiB");
                }
                total += content.length;
                Type type = typeOf(name);
                if (type == Type.ES || type == Type.COMMON_JS || type == Type.TEXT || type == Type.JSON) {
                    utf8(content, name);
                }
                if (byName.put(name, new Module(name, type, content)) != null) {
                    throw new DeploymentException(Kind.INVALID, "the bundle archive holds " + name + " twice");
                }
            }
        } catch (IOException e) {
            throw new DeploymentException(Kind.INVALID, "the bundle archive cannot be read: " + e.getMessage());
        }
        String main = MAIN_NAMES.stream()
                .filter(byName::containsKey)
                .findFirst()
                .orElseThrow(() -> new DeploymentException(
                        Kind.INVALID,
                        "the bundle archive has no main module: index.js, worker.js or main.js at its root"));
        List<Module> modules = new ArrayList<>();
        modules.add(byName.remove(main));
        modules.addAll(byName.values());
        return modules;
    }

    private static void checkName(String name) throws DeploymentException {
        boolean bad = name.isEmpty()
                || name.startsWith("/")
                || name.contains("\\")
                || name.length() > 512
                || name.startsWith(RESERVED_PREFIX)
                || name.chars().anyMatch(c -> c < 0x20 || c == 0x7f);
        for (String segment : name.split("/", -1)) {
            bad |= segment.isEmpty() || segment.equals(".") || segment.equals("..");
        }
        if (bad) {
            throw new DeploymentException(
                    Kind.INVALID,
                    "the bundle archive holds a file with a name not allowed: " + name.replaceAll("\\p{Cntrl}", "?"));
        }
    }

    static Type typeOf(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        if (lower.endsWith(".js") || lower.endsWith(".mjs")) {
            return Type.ES;
        } else if (lower.endsWith(".cjs")) {
            return Type.COMMON_JS;
        } else if (lower.endsWith(".json")) {
            return Type.JSON;
        } else if (lower.endsWith(".wasm")) {
            return Type.WASM;
        } else if (lower.endsWith(".txt")
                || lower.endsWith(".html")
                || lower.endsWith(".css")
                || lower.endsWith(".md")
                || lower.endsWith(".svg")) {
            return Type.TEXT;
        }
        return Type.DATA;
    }

    private static byte[] readAtMost(InputStream in, long max) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[16384];
        int n;
        while ((n = in.read(buffer)) > 0) {
            if (out.size() + (long) n > max) {
                return null;
            }
            out.write(buffer, 0, n);
        }
        return out.toByteArray();
    }

    private static void utf8(byte[] content, String name) throws DeploymentException {
        try {
            StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(content));
        } catch (CharacterCodingException e) {
            throw new DeploymentException(Kind.INVALID, name + " is not UTF-8 text");
        }
    }
}
