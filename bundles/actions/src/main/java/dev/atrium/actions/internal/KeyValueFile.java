package dev.atrium.actions.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/** The files steps write their outputs and environment to: {@code name=value} lines, or {@code name<<DELIMITER} blocks. */
final class KeyValueFile {

    private KeyValueFile() {}

    static Map<String, String> parse(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].endsWith("\r") ? lines[i].substring(0, lines[i].length() - 1) : lines[i];
            int eq = line.indexOf('=');
            int heredoc = line.indexOf("<<");
            if (heredoc > 0 && (eq < 0 || heredoc < eq)) {
                String name = line.substring(0, heredoc).strip();
                String delimiter = line.substring(heredoc + 2);
                StringBuilder value = new StringBuilder();
                int j = i + 1;
                for (; j < lines.length && !lines[j].replace("\r", "").equals(delimiter); j++) {
                    if (j > i + 1) {
                        value.append('\n');
                    }
                    value.append(lines[j]);
                }
                if (j < lines.length && !name.isEmpty()) {
                    out.put(name, value.toString());
                }
                i = j;
            } else if (eq > 0) {
                out.put(line.substring(0, eq).strip(), line.substring(eq + 1));
            }
        }
        return out;
    }
}
